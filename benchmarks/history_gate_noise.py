#!/usr/bin/env python3
"""Whether the baseline gate tells a regression from noise on the real CPU engine: the CPU
recipe's fixed-seq-len points measured ``--baseline-runs`` times on a baseline branch, then
``--runs`` times unslowed (each gate failure a false alarm) and ``--runs`` times with a
planted 2x slowdown, the sweep pinned to half of this machine's cores (each gate failure a
catch). The gate uses the recipe's own tolerances (-25 % throughput). Every run is a whole
``pytest -m fixed_seq_len`` with the server started anew, so a run's noise is a user's. Slow
(about 100 s a run, 25 runs by default) and meaningful only on a quiet machine; the figures
go in docs/history.md."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
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


def sweep(db: str, results: Path, branch: str, gate: list[str], cores: set[int] | None) -> Outcome:
    """One whole run of the CPU recipe's fixed-seq-len points, on ``cores`` when given."""
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

    def pin() -> None:
        if cores is not None:
            os.sched_setaffinity(0, cores)

    done = subprocess.run(
        argv, cwd=REPO, capture_output=True, text=True, preexec_fn=pin, check=False
    )
    if done.returncode not in (0, 1):
        sys.exit(f"run on {branch} ended with status {done.returncode}:\n{done.stdout[-3000:]}")
    return Outcome(done.returncode, "beyond its tolerance" in done.stdout)


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
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit("a planted slowdown needs at least 2 cores to halve")
    half = set(cores[: len(cores) // 2])
    gate = [
        "--infx-baseline",
        BASELINE,
        "-o",
        f"infx_baseline_mad_k={args.k:g}",
        "-o",
        f"infx_baseline_window={args.window}",
    ]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        db = f"sqlite:///{root / 'noise.db'}"
        for index in range(args.baseline_runs):
            sweep(db, root / f"baseline-{index}", BASELINE, [], None)
        quiet = [
            sweep(db, root / f"quiet-{i}", "noise-quiet", gate, None) for i in range(args.runs)
        ]
        slowed = [
            sweep(db, root / f"slow-{i}", "noise-slowed", gate, half) for i in range(args.runs)
        ]
        figures = {branch: throughputs(db, branch) for branch in (BASELINE, "noise-quiet")}
        figures["noise-slowed"] = throughputs(db, "noise-slowed")
    false_alarms = sum(outcome.gate_failed for outcome in quiet)
    caught = sum(outcome.gate_failed for outcome in slowed)
    print(f"gate: the recipe's tolerances, k={args.k:g} MADs, window {args.window} rows")
    for branch, values in figures.items():
        if values:
            print(
                f"{branch}: {len(values)} rows, median {statistics.median(values):.1f}, "
                f"min {min(values):.1f}, max {max(values):.1f} tok/s/gpu"
            )
    print(f"false alarms: {false_alarms} of {args.runs} unslowed runs")
    print(f"caught: {caught} of {args.runs} runs on {len(half)} of {len(cores)} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
