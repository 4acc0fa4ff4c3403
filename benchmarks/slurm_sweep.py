#!/usr/bin/env python3
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from e2e.helpers import prompts, recipe, write_recipe  # noqa: E402
from e2e.slurm.cluster import ensure  # noqa: E402

from pytest_infx.launch.ports import free_port  # noqa: E402

INI = "[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n"


def _sweep_tree(root: Path, servers: int, step_delay: float) -> None:
    """`servers` two-GPU stand-in servers of two cells each, every decode step `step_delay` s."""
    (root / "recipes").mkdir(parents=True)
    prompts(root / "prompts.jsonl")
    (root / "pytest.ini").write_text(INI)
    for k in range(1, servers + 1):
        data = recipe(
            f"bench-h200-k{k}",
            record=root / "starts.jsonl",
            extra=("--step-delay", f"{step_delay:g}"),
            draft_lengths=(k,),
            port=free_port("127.0.0.1"),
            golden=f"bench_k{k}",
        )
        data["runner"] = "h200"
        data["tp"] = 2
        write_recipe(root / "recipes", data)


def _timed(root: Path, *args: str) -> float:
    argv = [sys.executable, "-m", "pytest", "-q", *args]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}{done.stderr[-1000:]}")
    return elapsed


def _sweep(root: Path, workers: int) -> float:
    return _timed(
        root,
        "--gpu",
        "h200",
        "--snapshot-update",
        "--infx-results",
        str(root / f"results-{workers}"),
        "--infx-slurm",
        str(workers),
        "--infx-slurm-gpus",
        "4",
    )


def _start_overhead(runs: int) -> tuple[float, float]:
    """What a worker pays to start through Slurm: the interpreter a worker runs, started by
    ``srun`` as ``--infx-slurm`` starts it, against the same interpreter started directly."""
    bare = [sys.executable, "-c", "pass"]
    through = ["srun", "-N1", "-n1", "--unbuffered", *bare]
    local: list[float] = []
    slurm: list[float] = []
    for _ in range(runs):
        for argv, times in ((bare, local), (through, slurm)):
            started = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
    return statistics.median(local), statistics.median(slurm)


def main() -> int:
    """Wall time of a stand-in sweep on 1 and 2 Slurm workers, and what starting a worker
    through Slurm costs over a local xdist worker (needs a running Slurm with 8 GPUs of gres)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--step-delay", type=float, default=1.0)
    args = parser.parse_args()
    ensure()
    with tempfile.TemporaryDirectory(prefix="infx-slurm-bench-") as folder:
        root = Path(folder)
        _sweep_tree(root / "sweep", args.servers, args.step_delay)
        one = statistics.median(_sweep(root / "sweep", 1) for _ in range(args.runs))
        two = statistics.median(_sweep(root / "sweep", 2) for _ in range(args.runs))
    local, slurm = _start_overhead(5 * args.runs)
    items = 2 * args.servers
    print(f"stand-in sweep, {items} items, {args.servers} servers (median of {args.runs} runs)")
    print(f"  1 Slurm worker   {one:7.2f} s")
    print(f"  2 Slurm workers  {two:7.2f} s")
    print(f"  speed-up         {one / two:7.2f} x")
    print(f"worker interpreter start: direct {local:.3f} s, through srun {slurm:.3f} s")
    print(f"  per-worker overhead of starting through Slurm  {slurm - local:7.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
