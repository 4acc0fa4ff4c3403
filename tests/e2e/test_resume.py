from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from results.samples import POINT, with_fields

from pytest_infx.agentic.measure import traces_sha256
from pytest_infx.golden.io import loads_curve
from pytest_infx.plugin.run.resume import judge
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import CURVE, MODES, lit, recipe, records, write_recipe

KEY = "fake-cpu-vllm"
KS = (1, 2, 3)
PACED = ("--step-delay", "0.1", "--start-delay", "0.5")


def _cell_ids(k: int) -> list[str]:
    return [f"{KEY}[k{k}-{mode}]" for mode in MODES]


def _interrupted_after_first_server(sweep: Sweep) -> None:
    """Ctrl-C as soon as both cells of the first server have their result files: the sweep is
    then starting or measuring the second server."""
    argv = [sys.executable, "-m", "pytest", "--gpu", "cpu", "--infx-results", str(sweep.results)]
    proc = sweep.pytester.popen(
        [*argv, "-p", "no:randomly"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    first = [sweep.results / "cells" / f"{i}.json" for i in _cell_ids(1)]
    try:
        deadline = time.monotonic() + 60.0
        while not all(p.exists() for p in first) and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        assert all(p.exists() for p in first), "the first server's cells never finished"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out.decode(errors="replace")


def _report_rows(page: Path) -> dict[str, str]:
    """The report's table rows by the item whose result file each links."""
    found = {}
    for chunk in page.read_text().split("<tr")[1:]:
        row = chunk.split("</tr>", 1)[0]
        if '.json">' in row:
            found[row.split('.json">', 1)[1].split(".json</a>", 1)[0]] = row
    return found


@pytest.fixture
def interrupted(sweep: Sweep) -> Sweep:
    sweep.add(KEY, extra=PACED, draft_lengths=KS, concurrency=1)
    sweep.commit_golden({m: {k: expected_al(DEFAULT_PATTERN, k) for k in KS} for m in MODES})
    _interrupted_after_first_server(sweep)
    assert [s["k"] for s in records(sweep.record)][:1] == [1]
    assert not any((sweep.results / "cells" / f"{i}.json").exists() for i in _cell_ids(3))
    return sweep


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_resume_runs_only_the_cells_left_and_completes_the_reports(
    interrupted: Sweep, workers: tuple[str, ...]
) -> None:
    sweep = interrupted
    stored = {i: sweep.cell(i) for i in _cell_ids(1)}
    sweep.record.unlink()
    result = sweep.run("--infx-resume", "-p", "no:randomly", *workers)
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("reused"), result.ret) == (4, 2, 0)
    # a set: two workers may race for the preferred port, and the loser starts again elsewhere
    assert {s["k"] for s in records(sweep.record)} == {2, 3}, "k1's server started again"
    assert {i: sweep.cell(i) for i in _cell_ids(1)} == stored
    rows = [f"  {k:<3}" + f"{expected_al(DEFAULT_PATTERN, k):>14.2f}" * 2 for k in KS]
    result.stdout.fnmatch_lines(["*= infx acceptance length =*", "  k    thinking_off*", *rows])
    al = round(expected_al(DEFAULT_PATTERN, 1), 2)
    result.stdout.fnmatch_lines(
        [
            "*- infx resume -*",
            *(lit(f"{i}: reused from cells/{i}.json: AL {al:.2f}") for i in _cell_ids(1)),
            "2 cells reused, 4 run: 4 without a result file",
        ]
    )
    curve = loads_curve((sweep.results / f"{KEY}.al.yaml").read_text(), name=CURVE)
    for mode in MODES:
        assert dict(curve.modes[mode]) == {k: round(expected_al(DEFAULT_PATTERN, k), 2) for k in KS}
    assert "Out of tolerance" not in (sweep.results / "drift-summary.md").read_text()
    table = _report_rows(sweep.results / "report.html")
    assert sorted(table) == sorted(i for k in KS for i in _cell_ids(k))
    assert sorted(i for i, row in table.items() if 'class="badge reused"' in row) == _cell_ids(1)
    for i in _cell_ids(1):
        assert f"from cells/{i}.json: AL {al:.2f}</span>" in table[i]
        assert "(earlier run)</span>" in table[i], "the k1 log is the interrupted run's"
    for i in _cell_ids(2) + _cell_ids(3):
        assert "<td>this run</td>" in table[i] and "earlier run" not in table[i]


def test_a_changed_dataset_or_recipe_runs_the_cell_again(interrupted: Sweep) -> None:
    sweep = interrupted
    prompts = sweep.root / "prompts.jsonl"
    prompts.write_text(prompts.read_text().replace("number 0.", "number zero."))
    sweep.record.unlink()
    result = sweep.run("--infx-resume", "-k", "k1")
    result.assert_outcomes(passed=2)
    assert [s["k"] for s in records(sweep.record)] == [1]
    result.stdout.fnmatch_lines(["0 cells reused, 2 run: 2 whose dataset changed (sha256 differs)"])
    recipe = sweep.recipes / f"{KEY}.yaml"
    recipe.write_text(recipe.read_text().replace("0.33.0+fake", "0.33.1+fake"))
    result = sweep.run("--infx-resume", "-k", "k1")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["0 cells reused, 2 run: 2 whose recipe or engine changed (point fingerprint differs)"]
    )


def test_a_failed_cell_is_not_reused(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=(1,), faults=("empty-output=1",))
    sweep.commit_golden({m: {1: expected_al(DEFAULT_PATTERN, 1)} for m in MODES})
    sweep.run().assert_outcomes(passed=1, failed=1)
    result = sweep.run("--infx-resume")
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("reused"), outcomes.get("failed")) == (None, 1, 1)
    result.stdout.fnmatch_lines(["1 cell reused, 1 run: 1 that did not pass last time"])


def test_a_passed_agentic_point_is_reused_without_starting_its_server(sweep: Sweep) -> None:
    data = recipe("fake-cpu-agentic", record=sweep.record)
    del data["speedbench"]
    data["agentic"] = {"points": [{"tp": 1, "concurrency": [2, 4]}], "traces": "builtin"}
    write_recipe(sweep.recipes, data)
    low, high = expand_all(load_tree(sweep.recipes))
    stored = with_fields(
        POINT,
        {
            "id": low.id,
            "recipe": low.recipe_key,
            "fingerprint": low.fingerprint,
            "traces_sha256": traces_sha256(low),
            "verdict": "passed",
            "throughput.output_tokens_per_s_per_gpu": 123.4,
        },
    )
    path = sweep.results / "agentic" / f"{low.id}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(stored))
    stale = {**stored, "id": high.id, "concurrency": 4, "fingerprint": "0" * 16}
    (path.parent / f"{high.id}.json").write_text(json.dumps(stale))
    result = sweep.run("--infx-resume", "-k", "c2")
    assert (result.parseoutcomes().get("reused"), result.ret) == (1, 0)
    assert records(sweep.record) == [], "a server was started for a reused point"
    result.stdout.fnmatch_lines(
        [
            lit(f"{low.id}: reused from agentic/{low.id}.json: 123.4 output tok/s/GPU"),
            "*= infx agentic =*",
            "fake-cpu-agentic",
            " 1     2      123.4 * 0/10 (0.0%)*",
        ]
    )
    rows = _report_rows(sweep.results / "report.html")
    assert f"from agentic/{low.id}.json: 123.4 output tok/s/GPU</span>" in rows[low.id]
    assert 'class="badge reused"' not in rows[high.id]
    stale_path = sweep.results / "agentic" / f"{high.id}.json"
    assert judge(stale_path, high, traces_sha256(high)) == (
        "whose recipe or engine changed (point fingerprint differs)"
    )
    assert judge(path, low, "f" * 64) == "whose dataset changed (sha256 differs)"


def test_a_result_file_of_the_wrong_shape_is_run_again_not_failed(sweep: Sweep) -> None:
    sweep.add(KEY, draft_lengths=(1,))
    sweep.run("--snapshot-update").assert_outcomes(passed=2)
    off, on = _cell_ids(1)
    path = sweep.results / "cells" / f"{off}.json"
    path.write_text(json.dumps({**sweep.cell(off), "dataset": []}))
    (sweep.results / "cells" / f"{on}.json").write_text("[]")
    result = sweep.run("--infx-resume")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["0 cells reused, 2 run: *1 with a result file that is not reusable ('dataset': Input*"]
    )
    assert sweep.cell(off)["dataset"]["sha256"]
