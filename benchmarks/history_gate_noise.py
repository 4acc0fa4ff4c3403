#!/usr/bin/env python3
"""Whether the baseline gate tells a regression from noise on the real CPU engine: the CPU recipe's
fixed-seq-len points measured ``--baseline-runs`` times on a baseline branch, then ``--runs``
times unslowed (each gate failure a false alarm) and ``--runs`` times with a planted slowdown
(each gate failure a catch): every process below the sweep (the engine and its workers) is
stopped for half of each 100 ms, which lowered the CPU engine's throughput by 20 to 30 % (with
more load beside it), not by half. Taking CPU away planted less: half the cores, or a busy loop
per core beside the sweep, left its throughput where it was (docs/history.md has the figures).
The gate uses the recipe's own tolerances (-25 % throughput). Every run is a whole ``pytest -m
fixed_seq_len`` with the server started anew, so a run's noise is a user's. Slow (about 150 s a
run, 25 runs by default) and meaningful only on a quiet machine; the figures go in
docs/history.md. ``--db`` keeps the history in a file of the user's, and ``--phases`` runs part
of the measurement, so an interrupted one goes on from the rows it stored."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
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
    """One whole run of the CPU recipe's fixed-seq-len points, its engine at half speed when
    ``slowed``."""
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

    with subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as run:
        halving = threading.Event()
        if slowed:
            halving.set()
            threading.Thread(target=halve, args=(run.pid, halving), daemon=True).start()
        try:
            output, _ = run.communicate()
        finally:
            halving.clear()
    if run.returncode not in (0, 1):
        sys.exit(f"run on {branch} ended with status {run.returncode}:\n{output[-3000:]}")
    return Outcome(run.returncode, "beyond its tolerance" in output)


def _children(pid: int) -> set[int]:
    """Every process below ``pid`` (the engine, its workers, the guard), read from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def halve(pid: int, halving: threading.Event) -> None:
    """Stop every process below the sweep for half of each 100 ms while ``halving``, since a
    busy loop beside the CPU engine, or half the cores, did not slow it measurably."""
    while halving.is_set():
        below = _children(pid)
        for signal_ in (signal.SIGSTOP, signal.SIGCONT):
            for child in below:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal_)
            time.sleep(0.05)


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
        print(
            f"caught: {alarms['slowed']} of {args.runs} runs with the engine stopped half the time"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
