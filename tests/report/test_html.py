from __future__ import annotations

import base64
import html
import json
import struct
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import matplotlib.figure
import pytest
from results import samples

from pytest_infx.history.earlier import Earlier
from pytest_infx.plugin.output.summary import write_drift
from pytest_infx.report import html as report_html
from pytest_infx.report import plots
from pytest_infx.results.sweep import ItemOutcome, read_sweep
from pytest_infx.results.tally import RecordTally
from pytest_infx.settings import environment

from .builders import Folder, write_agentic_point, write_al_cell

KEY = "demo-cpu-vllm-ngram"
AGENTIC = "demo-cpu-vllm-agentic"
CURVE = "demo_ngram"
GOLDEN = {"thinking_off": {1: 1.60, 2: 2.00, 3: 2.40}, "thinking_on": {1: 1.55, 2: 2.20, 3: 2.30}}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# loaded at collection, before any pytester test snapshots sys.modules and drops numpy again
MATPLOTLIB = matplotlib.figure.Figure


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC, "not a PNG file"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    """One SPEED-Bench recipe (a passing cell per mode and k=1, a drifted cell, a failed cell)
    and one AgentX recipe (two TPs, one point over the error threshold)."""
    made = Folder(tmp_path)
    golden = made.commit_golden(CURVE, GOLDEN)
    points = made.points(KEY, CURVE, (1, 2, 3))
    write_al_cell(made, points[f"{KEY}[k1-thinking_off]"], 1.61, golden)
    write_al_cell(made, points[f"{KEY}[k1-thinking_on]"], 1.57, golden)
    write_al_cell(made, points[f"{KEY}[k2-thinking_off]"], 2.02, golden)
    write_al_cell(made, points[f"{KEY}[k2-thinking_on]"], 2.45, golden)
    write_al_cell(made, points[f"{KEY}[k3-thinking_off]"], 2.41, golden, failed_request=True)
    write_al_cell(made, points[f"{KEY}[k3-thinking_on]"], 2.31, golden)
    for tp, concurrency in ((2, 1), (2, 4), (1, 1), (1, 4)):
        write_agentic_point(made, AGENTIC, tp, concurrency, errors=(tp, concurrency) == (1, 4))
    return made


def test_cells_read_back_with_their_verdicts(folder: Folder) -> None:
    sweep = read_sweep(folder.results, folder.golden)
    (recipe,) = sweep.al
    status = {(c.k, c.mode): c.status for c in recipe.cells}
    assert status == {
        (1, "thinking_off"): "pass",
        (1, "thinking_on"): "pass",
        (2, "thinking_off"): "pass",
        (2, "thinking_on"): "drift",
        (3, "thinking_off"): "fail",
        (3, "thinking_on"): "pass",
    }
    assert recipe.curve_name == CURVE and recipe.golden is not None
    assert recipe.tolerance == 0.05
    drifted = next(c for c in recipe.cells if c.status == "drift")
    assert drifted.standard_error is not None and drifted.standard_error > 0
    assert recipe.allowed(drifted) == pytest.approx(0.05 + 2 * drifted.standard_error)
    (agentic,) = sweep.agentic
    assert list(agentic.by_tp()) == [2, 1]
    assert [p.verdict for p in agentic.by_tp()[1]] == ["pass", "fail"]


def test_report_embeds_the_pngs_and_links_every_cell_and_log(folder: Folder) -> None:
    files = report_html.write_report(read_sweep(folder.results, folder.golden))
    assert files.plots_missing is None
    al_png = folder.results / "plots" / f"{KEY}.al.png"
    agentic_png = folder.results / "plots" / f"{AGENTIC}.agentic.png"
    assert files.pictures == (al_png, agentic_png)
    page = files.html.read_text()
    for picture in (al_png, agentic_png):
        data = picture.read_bytes()
        assert png_size(data) == (900, 500)
        assert 15_000 < len(data) < 400_000
        assert f"data:image/png;base64,{base64.b64encode(data).decode()}" in page
    assert '<a href="http' not in page and 'src="http' not in page
    hrefs = set(html.unescape(h) for h in _attribute_values(page, "href"))
    for cell in sorted((folder.results / "cells").glob("*.json")):
        assert report_html.href(cell, folder.results) in hrefs
    for point in sorted((folder.results / "agentic").glob("*.json")):
        assert report_html.href(point, folder.results) in hrefs
    logs = sorted((folder.results / "logs").glob("*.log"))
    assert len(logs) == 5
    for log in logs:
        assert f"logs/{log.name}" in hrefs
        assert (folder.results / f"logs/{log.name}").is_file()


def test_report_shows_each_verdict_and_its_reasons(folder: Folder) -> None:
    files = report_html.write_report(read_sweep(folder.results, folder.golden))
    page = html.unescape(files.html.read_text())
    table = _rows(page)
    drift = table[f"{KEY}[k2-thinking_on].json"]
    assert 'class="drift"' in drift and "2.45" in drift and "2.20" in drift and "+0.25" in drift
    assert "golden: k=2 thinking_on: golden 2.20, measured 2.45, delta +0.25" in drift
    failed = table[f"{KEY}[k3-thinking_off].json"]
    assert 'class="fail"' in failed and "3/4" in failed and "HTTP 500" in failed
    passed = table[f"{KEY}[k1-thinking_off].json"]
    assert 'class="pass"' in passed and "1.61" in passed
    bad_point = table[f"{AGENTIC}[tp1-c4].json"]
    assert 'class="fail"' in bad_point and "11/100" in bad_point
    assert 'class="pass"' in table[f"{AGENTIC}[tp2-c4].json"]
    assert "6 SPEED-Bench cells (2 failed or out of tolerance), 4 AgentX points (1 failed)" in page


def test_items_that_left_no_file_are_listed_with_why(folder: Folder) -> None:
    gone = ItemOutcome(
        id=f"{KEY}[k4-thinking_on]",
        recipe=KEY,
        outcome="error",
        reason="server for demo did not start:\nRuntimeError: CUDA out of memory",
    )
    kept = ItemOutcome(id=f"{KEY}[k1-thinking_on]", recipe=KEY, outcome="passed", reason="")
    sweep = read_sweep(folder.results, folder.golden, outcomes=[gone, kept])
    page = html.unescape(report_html.write_report(sweep).html.read_text())
    section = page.split('id="no-result-file"', 1)[1]
    assert f"{KEY}[k4-thinking_on]" in section and "CUDA out of memory" in section
    assert f"{KEY}[k1-thinking_on]</code>" not in section


def _reused_outcomes() -> list[ItemOutcome]:
    """What the session says when ``--infx-resume`` took k1 thinking_off and the TP2 c1 point
    from an earlier run and measured k1 thinking_on."""
    cell, point = f"{KEY}[k1-thinking_off]", f"{AGENTIC}[tp2-c1]"
    return [
        ItemOutcome(
            id=cell,
            recipe=KEY,
            outcome="passed",
            reason="",
            reused=f"reused from cells/{cell}.json: AL 1.61",
        ),
        ItemOutcome(id=f"{KEY}[k1-thinking_on]", recipe=KEY, outcome="passed", reason=""),
        ItemOutcome(
            id=point,
            recipe=AGENTIC,
            outcome="passed",
            reason="",
            reused=f"reused from agentic/{point}.json: 123.4 output tok/s/GPU",
        ),
    ]


def test_rows_reused_from_an_earlier_run_say_so_and_where_from(folder: Folder) -> None:
    sweep = read_sweep(folder.results, folder.golden, outcomes=_reused_outcomes())
    page = html.unescape(report_html.write_report(sweep).html.read_text())
    table = _rows(page)
    cell, point = f"{KEY}[k1-thinking_off].json", f"{AGENTIC}[tp2-c1].json"
    assert {name for name, row in table.items() if "badge reused" in row} == {cell, point}
    assert f"from cells/{cell}: AL 1.61</span>" in table[cell]
    assert 'class="badge pass">pass<' in table[cell], "the verdict is kept beside the mark"
    assert f"from agentic/{point}: 123.4 output tok/s/GPU</span>" in table[point]
    fresh = f"{KEY}[k1-thinking_on].json"
    for name, row in table.items():
        assert ("this run" in row) == (name == fresh), name
        assert ("(earlier run)" in row) == (name != fresh), name
        assert ("an earlier run (not selected)" in row) == (name not in (cell, point, fresh))
    assert "items without a result file, 2 reused from an earlier run (--infx-resume)." in page
    plain = report_html.write_report(read_sweep(folder.results, folder.golden)).html.read_text()
    assert 'class="badge reused"' not in plain and "earlier run" not in plain
    assert "this run" not in plain, "a report rebuilt from a folder cannot know what ran"


def test_reused_cells_and_points_are_boxed_in_the_plots(folder: Folder) -> None:
    image = pytest.importorskip("PIL.Image")
    fresh = read_sweep(folder.results, folder.golden)
    resumed = read_sweep(folder.results, folder.golden, outcomes=_reused_outcomes())
    color = bytes(int(plots.REUSED_COLOR[i : i + 2], 16) for i in (1, 3, 5))
    assert _pixels(image, plots.al_png(fresh.al[0]), color) == 0
    assert _pixels(image, plots.al_png(resumed.al[0]), color) > 40
    assert _pixels(image, plots.agentic_png(fresh.agentic[0]), color) == 0
    assert _pixels(image, plots.agentic_png(resumed.agentic[0]), color) > 40


def test_earlier_results_are_drawn_in_grey_under_the_points_and_named(folder: Folder) -> None:
    image = pytest.importorskip("PIL.Image")
    sweep = read_sweep(folder.results, folder.golden)
    (recipe,) = sweep.agentic
    started = datetime(2026, 11, 30, tzinfo=UTC)
    earlier = {
        p.id: Earlier(p.throughput_per_gpu or 0.0, (p.interactivity or 0.0) * 0.8, "r7", started)
        for p in recipe.points
        if p.tp == 2
    }
    color = bytes(int(plots.EARLIER_COLOR[i : i + 2], 16) for i in (1, 3, 5))
    assert _pixels(image, plots.agentic_png(recipe), color) == 0
    assert _pixels(image, plots.agentic_png(recipe, earlier), color) > 100
    page = html.unescape(report_html.write_report(sweep, earlier=earlier).html.read_text())
    assert "Grey, dashed: 2 of these points as an earlier run measured them" in page
    assert "run r7)" in page
    plain = report_html.write_report(sweep).html.read_text()
    assert "Grey, dashed" not in plain


def test_failed_and_drifted_cells_are_drawn_in_red(folder: Folder) -> None:
    image = pytest.importorskip("PIL.Image")
    (recipe,) = read_sweep(folder.results, folder.golden).al
    clean = type(recipe)(
        key=recipe.key,
        cells=tuple(c for c in recipe.cells if c.status == "pass"),
        curve_name=recipe.curve_name,
        golden=recipe.golden,
        golden_problem=None,
        tolerance=recipe.tolerance,
    )
    assert _red_pixels(image, plots.al_png(clean)) == 0
    assert _red_pixels(image, plots.al_png(recipe)) > 100


def test_without_matplotlib_the_report_says_how_to_get_plots(
    folder: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert plots.missing_reason() is not None
    files = report_html.write_report(read_sweep(folder.results, folder.golden))
    assert files.pictures == () and not (folder.results / "plots").exists()
    page = html.unescape(files.html.read_text())
    assert "No plots: matplotlib cannot be imported" in page
    assert "pip install 'pytest-infx[plots]' to get the plots" in page
    assert "data:image/png" not in page
    assert f"{KEY}[k2-thinking_on].json" in page


def test_step_summary_links_the_report_and_pictures(folder: Folder, tmp_path: Path) -> None:
    files = report_html.write_report(read_sweep(folder.results, folder.golden))
    links = report_html.markdown_links(files, folder.results)
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    summary = RecordTally()
    summary.add(samples.cell(recipe=KEY, al=1.61, golden__curve=CURVE))
    env = environment({"GITHUB_STEP_SUMMARY": str(step)})
    path = write_drift(summary, folder.results, env, links=links)
    assert path == folder.results / "drift-summary.md"
    text = path.read_text()
    assert text.startswith("### Golden AL drift")
    assert "- [report.html](report.html): tables, verdicts, cells and logs" in text
    assert f"- [plots/{KEY}.al.png](plots/{KEY}.al.png)" in text
    assert f"- [plots/{AGENTIC}.agentic.png](plots/{AGENTIC}.agentic.png)" in text
    assert step.read_text() == "earlier step\n" + text


def test_drawing_leaves_pyplot_alone(folder: Folder) -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from pytest_infx.report.html import write_report\n"
        "from pytest_infx.results.sweep import read_sweep\n"
        f"results, golden = Path({str(folder.results)!r}), Path({str(folder.golden)!r})\n"
        "files = write_report(read_sweep(results, golden))\n"
        "import matplotlib\n"
        "print(len(files.pictures), 'matplotlib.pyplot' in sys.modules, matplotlib.get_backend())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[:2] == ["2", "False"]


def _attribute_values(page: str, name: str) -> list[str]:
    parts = page.split(f'{name}="')[1:]
    return [part.split('"', 1)[0] for part in parts]


def _rows(page: str) -> dict[str, str]:
    """Table rows by the text of their result-file link."""
    found = {}
    for chunk in page.split("<tr")[1:]:
        row = chunk.split("</tr>", 1)[0]
        for text in _link_texts(row):
            if text.endswith(".json"):
                found[text] = row
    return found


def _link_texts(row: str) -> list[str]:
    return [part.split("</a>", 1)[0].split(">", 1)[1] for part in row.split("<a ")[1:]]


def _red_pixels(image: object, png: bytes) -> int:
    return _pixels(image, png, bytes((214, 39, 40)))


def _pixels(image: object, png: bytes, rgb: bytes) -> int:
    import io

    picture = image.open(io.BytesIO(png)).convert("RGB")  # type: ignore[attr-defined]
    return int(picture.tobytes().count(rgb))


def test_infx_report_rebuilds_the_report_from_a_copied_folder(
    folder: Folder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from pytest_infx.cli import main

    copy = tmp_path / "downloaded"
    shutil.copytree(folder.results, copy)
    (folder.golden / f"{CURVE}.yaml").unlink()
    assert main(["report", str(copy), "--golden", str(folder.golden)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        str(copy / "report.html"),
        str(copy / "plots" / f"{KEY}.al.png"),
        str(copy / "plots" / f"{AGENTIC}.agentic.png"),
    ]
    page = html.unescape((copy / "report.html").read_text())
    assert f"no golden curve '{CURVE}' in {folder.golden}" in page
    assert png_size((copy / "plots" / f"{KEY}.al.png").read_bytes()) == (900, 500)
    assert 'href="cells/' in page and "file://" not in page
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "holds no cells/ or agentic/ folder" in capsys.readouterr().err


def test_the_al_band_is_what_each_cell_was_allowed(folder: Folder) -> None:
    """The gate allows a cell its tolerance plus z standard errors; the band drawn around the
    golden value is that, not the bare tolerance."""
    (recipe,) = read_sweep(folder.results, folder.golden).al
    figure = plots.al_figure(recipe)
    (ax,) = figure.axes
    from matplotlib.collections import PolyCollection

    bands = [
        c.get_paths()[0].get_extents() for c in ax.collections if isinstance(c, PolyCollection)
    ]
    halves = sorted(round((box.y1 - box.y0) / 2, 6) for box in bands)
    assert recipe.golden is not None
    measured = {(c.mode, c.k): c for c in recipe.cells if c.al is not None}
    expected = sorted(
        round(recipe.allowed(measured[(mode, k)]) if (mode, k) in measured else recipe.tolerance, 6)
        for mode, curve in recipe.golden.modes.items()
        for k, al in curve.items()
        if al is not None
    )
    assert halves == expected
    assert max(halves) > recipe.tolerance


def test_fixed_seq_len_points_have_their_section_and_pareto_picture(tmp_path: Path) -> None:
    results = tmp_path / "results"
    folder = results / "fixed-seq-len"
    folder.mkdir(parents=True)
    for conc, out, intvty in ((1, 18.0, 22.0), (4, 41.0, 12.0)):
        record = samples.fixed(
            id=f"x[tp1-isl256-osl32-c{conc}]",
            point__concurrency=conc,
            figures={"output_tput_per_gpu": out, "median_intvty": intvty, "median_ttft": 0.3},
            verdict="pass" if conc == 1 else "fail",
            reasons=[] if conc == 1 else ["1 requests returned no output tokens"],
        )
        (folder / f"{record.id}.json").write_text(json.dumps(record.as_json()))
    sweep = read_sweep(results, tmp_path / "golden")
    (recipe,) = sweep.fixed
    assert list(recipe.arms()) == ["TP1 256/32"]
    files = report_html.write_report(sweep)
    picture = results / "plots" / "x.fixed-seq-len.png"
    assert files.pictures == (picture,)
    page = files.html.read_text()
    assert "2 fixed-seq-len points (1 failed)" in page
    assert "<th>ISL/OSL</th>" in page and "<td>256/32</td>" in page
    assert "1 requests returned no output tokens" in page
    assert base64.b64encode(picture.read_bytes()).decode() in page
