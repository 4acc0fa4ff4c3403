from __future__ import annotations

import base64
import html
import struct

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import MODES

KEY = "fake-cpu-vllm"
DEAD = "dead-cpu-vllm"
KS = (1, 2)


def _measured(k: int) -> float:
    return round(expected_al(DEFAULT_PATTERN, k), 2)


def test_a_sweep_under_xdist_writes_the_html_report_and_the_al_picture(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=KS)
    sweep.add(DEAD, faults=["die-at-start"])
    golden = {m: {k: _measured(k) for k in KS} for m in MODES}
    golden["thinking_on"][2] = _measured(2) + 0.4
    sweep.commit_golden(golden)
    result = sweep.run("-n", "2")
    result.assert_outcomes(passed=3, failed=1, errors=2)
    report = sweep.results / "report.html"
    picture = sweep.results / "plots" / f"{KEY}.al.png"
    result.stdout.fnmatch_lines(["infx report: *results/report.html", f"infx plot: *{KEY}.al.png"])

    data = picture.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (900, 500) and len(data) > 15_000
    assert not (sweep.results / "plots" / f"{DEAD}.al.png").exists()

    page = html.unescape(report.read_text())
    assert f"data:image/png;base64,{base64.b64encode(data).decode()}" in page
    for k in KS:
        for mode in MODES:
            assert f'href="cells/{KEY}%5Bk{k}-{mode}%5D.json"' in page
    drifted = page.split(f"{KEY}[k2-thinking_on].json")[0].rsplit("<tr", 1)[1]
    assert 'class="drift"' in drifted and f"{_measured(2) + 0.4:.2f}" in drifted
    logs = sorted(p.name for p in (sweep.results / "logs").iterdir())
    assert {n.split("-k")[0] for n in logs} == {KEY, DEAD}
    for name in logs:
        assert f'href="logs/{name}"' in page
    missing = page.split('id="no-result-file"', 1)[1]
    for mode in MODES:
        assert f"<code>{DEAD}[k1-{mode}]</code>" in missing
    assert "CUDA out of memory while loading weights" in missing

    summary = (sweep.results / "drift-summary.md").read_text()
    assert "- [report.html](report.html): tables, verdicts, cells and logs" in summary
    assert f"- [plots/{KEY}.al.png](plots/{KEY}.al.png)" in summary


def test_a_host_python_test_with_the_marker_writes_no_report(sweep: Sweep) -> None:
    sweep.pytester.makepyfile(
        test_host="""
        import pytest

        @pytest.mark.speedbench
        def test_own():
            pass
        """
    )
    result = sweep.run("test_host.py")
    result.assert_outcomes(passed=1)
    assert "infx report" not in result.stdout.str()
    assert not sweep.results.exists()


def test_a_run_of_one_recipe_reports_every_result_in_the_folder(sweep: Sweep) -> None:
    """The second run selects one recipe; the other's cells, still in the folder, stay in
    report.html and drift-summary.md, marked as an earlier run's."""
    other = "other-cpu-vllm"
    sweep.add(KEY, draft_lengths=[1])
    sweep.add(other, draft_lengths=[1])
    sweep.commit_golden({m: {1: _measured(1)} for m in MODES})
    sweep.run().assert_outcomes(passed=4)
    sweep.run("-k", other).assert_outcomes(passed=2)

    page = html.unescape((sweep.results / "report.html").read_text())
    assert "4 SPEED-Bench cells" in page
    assert "2 results from this run; 2 from earlier runs" in page
    for mode in MODES:
        row = page.split(f"{KEY}[k1-{mode}].json")[0].rsplit("<tr", 1)[1]
        assert "an earlier run (not selected)" in row
        row = page.split(f"{other}[k1-{mode}].json")[0].rsplit("<tr", 1)[1]
        assert "this run" in row
    summary = (sweep.results / "drift-summary.md").read_text()
    assert f"| {KEY} | " in summary and summary.split(f"| {KEY} | ")[1].split("\n")[0].endswith(
        "| an earlier run |"
    )
    assert summary.split(f"| {other} | ")[1].split("\n")[0].endswith("| this run |")
