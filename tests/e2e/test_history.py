"""The results history in whole runs: every finished point stored as it finishes, the
baseline gate failing a slowed point by name, and a run killed with SIGKILL keeping what it had
finished. The engine is the stand-in, whose ``--step-delay`` slows every decode step on demand
(the same proof on the real CPU engine is ``tests/e2e/test_history_cpu.py``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from history.samples import row, stamp

from pytest_infx.history.store import Store

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import MODES

KEY = "fake-cpu-vllm"


def _add(sweep: Sweep, *, delay: str, ks: tuple[int, ...] = (1,), port: int | None = None) -> None:
    fields: dict[str, object] = {
        "extra": ("--step-delay", delay),
        "draft_lengths": ks,
        "output_len": 16,
    }
    if port is not None:
        fields["port"] = port
    sweep.add(KEY, **fields)
    sweep.commit_golden({m: {k: expected_al(DEFAULT_PATTERN, k) for k in ks} for m in MODES})


def test_the_second_run_fails_on_the_baseline_naming_point_metric_and_delta(
    sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{sweep.root / 'history.db'}"
    step_summary = sweep.root / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    _add(sweep, delay="0.005")
    first = sweep.run("--infx-db", db, "--infx-branch", "main")
    first.assert_outcomes(passed=len(MODES))
    _add(sweep, delay="0.1")
    second = sweep.run(
        "--infx-db",
        db,
        "--infx-branch",
        "feature",
        "--infx-baseline",
        "main",
        "-o",
        "infx_baseline_tolerance=output_tput_per_gpu: -20%",
    )
    second.assert_outcomes(failed=len(MODES))
    out = second.stdout.str()
    item = f"{KEY}[k1-{MODES[0]}]"
    failure = next(line for line in out.splitlines() if line.startswith(f"{item}: "))
    assert "output_tput_per_gpu" in failure and "vs baseline" in failure
    assert "allowed 20%" in failure and "baseline run local-" in failure
    assert "infx baseline" in out
    summary = (sweep.results / "baseline-summary.md").read_text()
    assert f"`{item}` against run `local-" in summary
    assert "| output_tput_per_gpu (tok/s/gpu) |" in summary
    assert summary in step_summary.read_text()
    report = (sweep.results / "report.html").read_text()
    assert '<h2 id="baseline">Baseline comparison</h2>' in report
    assert '<tr class="fail"><td>output_tput_per_gpu (tok/s/gpu)</td>' in report
    store = Store.open(db)
    try:
        rows = store.series(item)
    finally:
        store.close()
    assert [row.branch for row in rows] == ["main", "feature"]
    assert rows[1].metrics["output_tput_per_gpu"] < 0.8 * rows[0].metrics["output_tput_per_gpu"]


def test_no_baseline_passes_and_says_so(sweep: Sweep) -> None:
    _add(sweep, delay="0")
    db = f"sqlite:///{sweep.root / 'history.db'}"
    with Store.open(db) as store:
        store.put(store.add_run(stamp("elsewhere")), row())
    result = sweep.run("--infx-db", db, "--infx-baseline", "main", "--infx-branch", "feature")
    result.assert_outcomes(passed=len(MODES))
    assert "no baseline, passes" in result.stdout.str()


def test_a_gate_failed_point_is_stored_failed_never_a_baseline_and_resume_fails_it_again(
    sweep: Sweep,
) -> None:
    db = f"sqlite:///{sweep.root / 'history.db'}"
    tolerance = ("-o", "infx_baseline_tolerance=output_tput_per_gpu: -20%")
    _add(sweep, delay="0.005")
    sweep.run("--infx-db", db, "--infx-branch", "main").assert_outcomes(passed=len(MODES))
    _add(sweep, delay="0.1")
    gated = ("--infx-db", db, "--infx-branch", "main", "--infx-baseline", "main", *tolerance)
    sweep.run(*gated).assert_outcomes(failed=len(MODES))
    item = f"{KEY}[k1-{MODES[0]}]"
    with Store.open(db) as store:
        rows = store.series(item)
        assert [found.status for found in rows] == ["pass", "fail"]
        assert "beyond its tolerance" in rows[1].reason
        baselines = [found for found in store.passing() if found.item == item]
        assert [found.run_id for found in baselines] == [rows[0].run_id]
    resumed = sweep.run("--infx-resume", *gated)
    assert resumed.ret == pytest.ExitCode.TESTS_FAILED
    out = resumed.stdout.str()
    assert f"{len(MODES)} cells reused, 0 run" in out
    assert f"{item}: output_tput_per_gpu" in out


def test_a_mistyped_baseline_is_a_usage_error_naming_the_close_branch(sweep: Sweep) -> None:
    _add(sweep, delay="0")
    db = f"sqlite:///{sweep.root / 'history.db'}"
    with Store.open(db) as store:
        store.put(store.add_run(stamp("r1", branch="main")), row())
    result = sweep.run("--infx-db", db, "--infx-baseline", "mian")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --infx-baseline 'mian': *did you mean 'main'?*"])
    assert not (sweep.results / "cells").exists()


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("sqlite://", "*is in memory*"),
        ("sqlite:///:memory:", "*is in memory*"),
        ("mysql://u@127.0.0.1/db", "*'mysql://u@127.0.0.1/db': *SQLite or PostgreSQL, not mysql*"),
    ],
)
def test_a_history_url_that_cannot_work_is_one_usage_error_before_any_point(
    sweep: Sweep, url: str, said: str
) -> None:
    _add(sweep, delay="0")
    result = sweep.run("--infx-db", url)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {said}"])
    assert not (sweep.results / "cells").exists()


def test_a_killed_run_keeps_every_finished_point_and_resume_adds_the_rest(
    sweep: Sweep,
) -> None:
    _add(sweep, delay="0.05", ks=(1, 2, 3))
    argv = [sys.executable, "-m", "pytest", "--gpu", "cpu", "--infx-results", str(sweep.results)]
    proc = sweep.pytester.popen(
        [*argv, "-p", "no:randomly"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    cells = sweep.results / "cells"
    try:
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and proc.poll() is None:
            if cells.is_dir() and len(list(cells.glob("*.json"))) >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    finished = sorted(path.stem for path in cells.glob("*.json"))
    assert 2 <= len(finished) < 3 * len(MODES)
    store = Store.open(f"sqlite:///{sweep.results / 'history.db'}")
    try:
        stored = sorted(store.items())
        # the file is written before the row: the kill may fall between the two for one point
        assert len(set(finished) - set(stored)) <= 1 and set(stored) <= set(finished)
        resumed = sweep.run("--infx-resume")
        outcomes = resumed.parseoutcomes()
        assert outcomes.get("reused", 0) == len(finished)
        assert outcomes["passed"] == 3 * len(MODES) - len(finished)
        everything = sorted(store.items())
    finally:
        store.close()
    assert everything == sorted(f"{KEY}[k{k}-{mode}]" for k in (1, 2, 3) for mode in MODES)


def test_resume_stores_a_reused_point_no_run_stored(sweep: Sweep) -> None:
    """A run killed between a point's result file and its row leaves the file alone; resume
    reuses the file and stores the row, as it would if the database had been lost whole."""
    _add(sweep, delay="0", ks=(1, 2))
    sweep.run().assert_outcomes(passed=2 * len(MODES))
    (sweep.results / "history.db").unlink()
    resumed = sweep.run("--infx-resume")
    assert resumed.parseoutcomes().get("reused", 0) == 2 * len(MODES)
    store = Store.open(f"sqlite:///{sweep.results / 'history.db'}")
    try:
        assert store.items() == sorted(f"{KEY}[k{k}-{mode}]" for k in (1, 2) for mode in MODES)
        assert sweep.run("--infx-resume").parseoutcomes().get("reused", 0) == 2 * len(MODES)
        assert store.count() == 2 * len(MODES)
    finally:
        store.close()


def test_xdist_workers_store_one_sweep_as_one_run(sweep: Sweep) -> None:
    _add(sweep, delay="0", ks=(1, 2))
    sweep.run("-n", "2").assert_outcomes(passed=2 * len(MODES))
    store = Store.open(f"sqlite:///{sweep.results / 'history.db'}")
    try:
        rows = store.passing()
    finally:
        store.close()
    assert len(rows) == 2 * len(MODES)
    assert len({row.run_id for row in rows}) == 1
    assert {row.config["engine_version"] for row in rows} == {"0.33.0+fake"}


def test_a_history_that_cannot_be_opened_is_a_usage_error_before_any_point(
    sweep: Sweep,
) -> None:
    from pytest_infx.launch.ports import free_port

    _add(sweep, delay="0")
    closed = f"postgresql+psycopg://nobody@127.0.0.1:{free_port('127.0.0.1')}/none"
    result = sweep.run("--infx-db", closed)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: results history: history database postgresql+psycopg://*"
            "cannot open it*check the URL and that the server is up"
        ]
    )
    assert not (sweep.results / "cells").exists()


def test_a_bad_history_url_is_a_usage_error(sweep: Sweep) -> None:
    _add(sweep, delay="0")
    result = sweep.run("--infx-db", "history.db")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --infx-db 'history.db' is not a database URL: give sqlite:///PATH, *"]
    )
