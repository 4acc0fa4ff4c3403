#!/usr/bin/env python3
"""Whether the baseline gate tells a regression from noise on the real CPU engine: the CPU recipe's
fixed-seq-len points measured ``--baseline-runs`` times on a baseline branch, then ``--runs``
times unslowed (each gate failure a false alarm) and ``--runs`` times with a planted slowdown
(each gate failure a catch): the sweep and everything it starts get half the machine's CPU time,
as a CPU-controller cgroup's quota, which halves the CPU engine's throughput. The quota, not
an affinity mask or busy loops: pinning the sweep to half the cores, or a busy loop per core
beside it, left the engine's throughput where it was, and stopping its processes half of each
100 ms lowered it by 20 to 30 % (docs/history.md has the figures). The slowed phase needs root
and a cgroup file system with the CPU controller (v1 or v2). The gate uses the recipe's own
tolerances (-25 % throughput). Every run is a whole ``pytest -m fixed_seq_len`` with the server
started anew, so a run's noise is a user's. Slow (about 150 s a run unslowed, 25 runs by
default) and meaningful only on a quiet machine; the figures go in docs/history.md. ``--db``
keeps the history in a file of the user's, and ``--phases`` runs part of the measurement, so
an interrupted one goes on from the rows it stored."""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.history.gate import DEFAULT_K, DEFAULT_WINDOW
from pytest_infx.history.store import Store

REPO = Path(__file__).resolve().parents[1]
RECIPE = "smollm2-bf16-cpu-vllm"
METRIC = "output_tput_per_gpu"
BASELINE = "noise-baseline"


@dataclass(frozen=True)
class Outcome:
    """One run: its exit status and whether the baseline gate failed a point in it."""

    status: int
    gate_failed: bool


def sweep(db: str, results: Path, branch: str, gate: list[str], slowed: bool) -> Outcome:
    """One whole run of the CPU recipe's fixed-seq-len points, with half the machine's CPU time
    when ``slowed``."""
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-m",
        "fixed_seq_len",
        "-k",
        RECIPE,
        "--gpu",
        "cpu",
        "-p",
        "no:cacheprovider",
        "--infx-results",
        str(results),
        "--infx-db",
        db,
        "--infx-branch",
        branch,
        *gate,
    ]

    before = len(throughputs(db, branch))
    with (
        subprocess.Popen(
            argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as run,
        half_the_cpu(run.pid) if slowed else contextlib.nullcontext(),
    ):
        output, _ = run.communicate()
    if run.returncode not in (0, 1):
        sys.exit(f"run on {branch} ended with status {run.returncode}:\n{output[-3000:]}")
    if len(throughputs(db, branch)) == before:
        sys.exit(f"run on {branch} stored no point, so it measured nothing:\n{output[-3000:]}")
    return Outcome(run.returncode, "beyond its tolerance" in output)


CGROUP = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def _cpu_hierarchy() -> tuple[Path, bool]:
    """The CPU controller's cgroup root and whether it is v2 (one ``cpu.max`` file) rather
    than v1 (a quota and a period file)."""
    controllers = CGROUP / "cgroup.controllers"
    if controllers.is_file() and "cpu" in controllers.read_text().split():
        return CGROUP, True
    if (CGROUP / "cpu" / "cpu.cfs_quota_us").is_file():
        return CGROUP / "cpu", False
    sys.exit("the slowed phase needs a cgroup file system with the CPU controller")


@contextlib.contextmanager
def half_the_cpu(pid: int) -> Iterator[None]:
    """Give ``pid`` and every process it starts afterwards half the machine's CPU time, in a
    cgroup of its own removed afterwards; processes left in it go back to the root first."""
    root, v2 = _cpu_hierarchy()
    group = root / f"infx-noise-{pid}"
    quota = PERIOD_US * (os.cpu_count() or 2) // 2
    group.mkdir()
    try:
        if v2:
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        (group / "cgroup.procs").write_text(str(pid))
        yield
    finally:
        for _ in range(50):
            for left in (group / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (root / "cgroup.procs").write_text(left)
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def throughputs(db: str, branch: str) -> list[float]:
    """The metric of every stored row of ``branch``, in run order."""
    with Store.open(db) as store:
        return [
            row.metrics[METRIC]
            for item in store.items()
            for row in store.series(item, branch=branch)
            if METRIC in row.metrics
        ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10, help="unslowed and slowed runs (10)")
    parser.add_argument("--baseline-runs", type=int, default=5, help="baseline runs (5)")
    parser.add_argument("--k", type=float, default=DEFAULT_K, help="MADs of the noise band")
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW, help="baseline rows")
    parser.add_argument(
        "--db", help="a SQLite file to keep the history in (default: a temporary one)"
    )
    parser.add_argument(
        "--phases",
        default="baseline,quiet,slowed",
        help="which of baseline, quiet and slowed to run (all three)",
    )
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    if not phases or not phases <= {"baseline", "quiet", "slowed"}:
        parser.error(f"--phases {args.phases}: name baseline, quiet or slowed, joined by commas")
    gate = [
        "--infx-baseline",
        BASELINE,
        "-o",
        f"infx_baseline_mad_k={args.k:g}",
        "-o",
        f"infx_baseline_window={args.window}",
    ]
    counts = {"baseline": args.baseline_runs, "quiet": args.runs, "slowed": args.runs}
    alarms = {"quiet": 0, "slowed": 0}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        db = f"sqlite:///{Path(args.db).resolve() if args.db else root / 'noise.db'}"
        for phase in ("baseline", "quiet", "slowed"):
            if phase not in phases:
                continue
            branch = BASELINE if phase == "baseline" else f"noise-{phase}"
            for index in range(counts[phase]):
                outcome = sweep(
                    db,
                    root / f"{phase}-{index}",
                    branch,
                    [] if phase == "baseline" else gate,
                    slowed=phase == "slowed",
                )
                if phase in alarms:
                    alarms[phase] += outcome.gate_failed
                print(f"{phase} run {index + 1}: gate failed: {outcome.gate_failed}", flush=True)
        figures = {
            branch: throughputs(db, branch) for branch in (BASELINE, "noise-quiet", "noise-slowed")
        }
    print(f"gate: the recipe's tolerances, k={args.k:g} MADs, window {args.window} rows")
    for branch, values in figures.items():
        if values:
            print(
                f"{branch}: {len(values)} rows, median {statistics.median(values):.1f}, "
                f"min {min(values):.1f}, max {max(values):.1f} tok/s/gpu"
            )
    if "quiet" in phases:
        print(f"false alarms: {alarms['quiet']} of {args.runs} unslowed runs")
    if "slowed" in phases:
        print(f"caught: {alarms['slowed']} of {args.runs} runs with half the CPU time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
