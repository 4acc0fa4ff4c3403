"""Stand-in sweeps through a real local Slurm: two worker jobs of four fake GPUs each."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import Sweep, wait_gone
from e2e.helpers import live_pids, recipe, records, write_recipe
from e2e.test_progress import CELL_LINE
from pytest_infx.history.store import Store
from pytest_infx.launch.ports import free_port

from .conftest import processes_in, run_jobs, wait_until

DRAFT_LENGTHS = (1, 2, 3, 4)
MODES = ("thinking_off", "thinking_on")
SLURM = ("--gpu", "h200", "--infx-slurm", "2", "--infx-slurm-gpus", "4", "--snapshot-update")


def _gpu_recipes(sweep: Sweep, *extra: str) -> list[str]:
    """One two-GPU server per draft length, each with its own preferred port (the two jobs run
    on one host here, where a shared port would only test the launcher's port retry)."""
    ids = []
    for k in DRAFT_LENGTHS:
        data = recipe(
            f"fake-h200-k{k}",
            record=sweep.record,
            extra=extra,
            draft_lengths=(k,),
            port=free_port("127.0.0.1"),
            golden=f"smollm2_fake_k{k}",
        )
        data["runner"] = "h200"
        data["tp"] = 2
        write_recipe(sweep.recipes, data)
        ids += [f"fake-h200-k{k}[k{k}-{mode}]" for mode in MODES]
    return ids


def _devices(start: dict[str, Any]) -> set[int]:
    return {int(i) for i in str(start["cuda_visible_devices"]).split(",")}


def test_two_jobs_run_every_item_with_one_job_per_server(slurm_sweep: Sweep) -> None:
    ids = _gpu_recipes(slurm_sweep)
    slurm_sweep.run(*SLURM).assert_outcomes(passed=len(ids))
    starts = records(slurm_sweep.record)
    assert sorted(s["k"] for s in starts) == list(DRAFT_LENGTHS), json.dumps(starts, indent=1)
    job_of_port = {s["port"]: s["slurm_job_id"] for s in starts}
    for k in DRAFT_LENGTHS:
        jobs = {
            job_of_port[slurm_sweep.cell(f"fake-h200-k{k}[k{k}-{m}]")["server"]["port"]]
            for m in MODES
        }
        assert len(jobs) == 1 and None not in jobs, (k, jobs)
    by_job: dict[str, set[int]] = {}
    for start in starts:
        assert len(_devices(start)) == 2, start
        by_job.setdefault(start["slurm_job_id"], set()).update(_devices(start))
    assert len(by_job) == 2, by_job
    first, second = by_job.values()
    assert not first & second, by_job
    assert all(gpus <= {0, 1, 2, 3} or gpus <= {4, 5, 6, 7} for gpus in by_job.values())
    cells = sorted(p.stem for p in (slurm_sweep.results / "cells").glob("*.json"))
    assert cells == sorted(ids)
    assert list((slurm_sweep.results / "logs").glob("*.log"))
    assert slurm_sweep.golden.joinpath("smollm2_fake_k3.yaml").exists()
    store = Store.open(f"sqlite:///{slurm_sweep.results / 'history.db'}")
    try:
        stored = store.passing()
    finally:
        store.close()
    assert sorted(row.item for row in stored) == sorted(ids)
    assert len({row.run_id for row in stored}) == 1


def test_progress_lines_come_back_from_the_jobs(slurm_sweep: Sweep) -> None:
    ids = _gpu_recipes(slurm_sweep, "--step-delay", "0.12")
    result = slurm_sweep.run(*SLURM, "--infx-progress-interval", "0.3")
    result.assert_outcomes(passed=len(ids))
    cells = [m for line in result.outlines if (m := CELL_LINE.match(line))]
    assert cells, "no progress line came back from a job:\n" + result.stdout.str()
    assert {m["worker"] for m in cells} <= {"gw0", "gw1"}
    assert {m["id"] for m in cells} <= set(ids)
    assert not list(slurm_sweep.results.glob(".progress-*")), "the shared progress folder stays"


def _controller(sweep: Sweep, *extra: str, args: Sequence[str] = SLURM) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "pytest", "--infx-results", str(sweep.results), "-rA", *args]
    argv += extra
    proc: subprocess.Popen[bytes] = sweep.pytester.popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
    )
    return proc


def _finish(proc: subprocess.Popen[bytes], timeout: float, root: Path | None = None) -> str:
    """The controller's output once it exits; killed (and its output shown) past `timeout`."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        # an srun left by the killed controller holds the output pipe open until its job ends
        jobs = [str(job) for job, _, _ in run_jobs(root)]
        if jobs:
            subprocess.run(["scancel", *jobs], check=False)
        out, _ = proc.communicate()
        pytest.fail(
            f"the controller did not exit in {timeout:g} s:\n{out.decode(errors='replace')}"
        )
    return out.decode(errors="replace")


def _job_ids(record: Path) -> set[str]:
    return {str(s["slurm_job_id"]) for s in records(record)}


def test_scancel_of_one_job_fails_only_the_item_it_ran(slurm_sweep: Sweep) -> None:
    ids = _gpu_recipes(slurm_sweep, "--step-delay", "0.5")
    proc = _controller(slurm_sweep)
    try:
        assert wait_until(lambda: len(_job_ids(slurm_sweep.record)) == 2, timeout=120)
        victim = sorted(_job_ids(slurm_sweep.record))[0]
        subprocess.run(["scancel", victim], check=True)
        out = _finish(proc, root=slurm_sweep.root, timeout=120)
    finally:
        _finish(proc, root=slurm_sweep.root, timeout=5)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert f"1 failed, {len(ids) - 1} passed" in out, out
    assert f"Slurm job {victim} on " in out and "was cancelled" in out, out
    assert len(list((slurm_sweep.results / "cells").glob("*.json"))) == len(ids) - 1


def test_ctrl_c_cancels_every_job_and_leaves_no_process(slurm_sweep: Sweep) -> None:
    _gpu_recipes(slurm_sweep, "--step-delay", "2")
    proc = _controller(slurm_sweep)
    try:
        assert wait_until(lambda: len(_job_ids(slurm_sweep.record)) == 2, timeout=120)
        assert run_jobs(slurm_sweep.root), "no worker job is running mid-sweep"
        proc.send_signal(signal.SIGINT)
        out = _finish(proc, root=slurm_sweep.root, timeout=120)
    finally:
        _finish(proc, root=slurm_sweep.root, timeout=5)
    # a second KeyboardInterrupt from execnet's teardown can end Python by the signal itself
    assert proc.returncode in (pytest.ExitCode.INTERRUPTED, -signal.SIGINT), out
    assert "KeyboardInterrupt" in out, out
    assert run_jobs(slurm_sweep.root) == []
    assert wait_gone(slurm_sweep.record, timeout=10.0) == []
    assert not live_pids(slurm_sweep.record)
    assert wait_until(lambda: not processes_in(slurm_sweep.root), timeout=10.0)


def test_a_job_out_of_time_fails_the_item_it_ran_and_names_the_limit(
    slurm_sweep: Sweep,
) -> None:
    """Slurm enforces limits on a half-minute timer, so a one-minute limit ends the job within
    about 90 s; the fast recipe's items ran before the slow one's."""
    for key, delay in (("a-fast", "0"), ("b-slow", "60")):
        data = recipe(
            key,
            record=slurm_sweep.record,
            extra=("--step-delay", delay),
            modes=("thinking_off",),
            port=free_port("127.0.0.1"),
            golden=f"smollm2_fake_{key}",
        )
        data["speedbench"]["request-timeout"] = 600
        write_recipe(slurm_sweep.recipes, data)
    result = slurm_sweep.run("--snapshot-update", "--infx-slurm", "1", "--infx-slurm-time", "1")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*Slurm job * on * hit its time limit (1, --infx-slurm-time)*"])
    assert slurm_sweep.cell("a-fast[k1-thinking_off]")["verdict"] == "pass"
