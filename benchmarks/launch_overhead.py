#!/usr/bin/env python3
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_infx.launch.gpus import GpuLeaser
from pytest_infx.launch.ports import choose_port
from pytest_infx.launch.process import GUARD, spawn, wait_ready
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.spec import ServerSpec

STANDIN = Path(__file__).resolve().parents[1] / "tests" / "standin" / "server.py"
LISTENING = re.compile(r"listening at (\d+\.\d+)")


def _guard_cost(runs: int) -> float:
    """Extra start-up time the guard adds: `guard -- true` against plain `true`."""
    true = "/bin/true"
    bare, guarded = [], []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([true], check=True)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", str(GUARD), "--", true], check=True)
        guarded.append(time.perf_counter() - t)
    return statistics.median(guarded) - statistics.median(bare)


def _one_run(work: Path, i: int) -> dict[str, float]:
    spec = ServerSpec(
        key=f"bench-{i}",
        label="standin",
        argv=(sys.executable, str(STANDIN), "--port", "{port}", "--start-delay", "0"),
        ready_timeout_s=30,
        gpus=4,
    )
    t0 = time.perf_counter()
    choice = choose_port(spec.host, spec.preferred_port)
    t1 = time.perf_counter()
    lease = GpuLeaser(work / "gpus", 8).lease(4, time.monotonic() + 5)
    t2 = time.perf_counter()
    spawned_wall = time.time()
    server = spawn(
        spec,
        port=choice.port,
        log_path=work / f"s{i}.log",
        registry=Registry(work / "registry.jsonl"),
        lease=lease,
        grace_s=5,
    )
    lease.release()
    wait_ready(server, spec, deadline=server.spawned_at + spec.ready_timeout_s)
    ready_wall = time.time()
    t3 = time.perf_counter()
    server.stop()
    match = LISTENING.search(server.log_path.read_text())
    if match is None:
        raise SystemExit(f"stand-in never logged its listening time; see {server.log_path}")
    listening = float(match.group(1))
    return {
        "port probe": t1 - t0,
        "GPU lease (TP4 of 8)": t2 - t1,
        "spawn -> engine listening": listening - spawned_wall,
        "listening -> ready seen": ready_wall - listening,
        "start_server total": t3 - t0,
    }


def main() -> int:
    """Measure what the launcher adds on top of the engine's own start-up.

    Overhead = port probe + GPU lease + guard start-up + readiness-polling latency, with the
    stand-in server at start-delay 0; the engine's own start (here a Python interpreter) is shown
    for scale but not counted.
    """
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("-n", "--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="infx-bench-") as tmp:
        rows = [_one_run(Path(tmp), i) for i in range(args.runs)]
    guard = _guard_cost(args.runs)
    medians = {name: statistics.median(r[name] for r in rows) for name in rows[0]}
    medians["guard start-up (included above)"] = guard
    overhead = (
        medians["port probe"]
        + medians["GPU lease (TP4 of 8)"]
        + guard
        + medians["listening -> ready seen"]
    )
    width = max(len(k) for k in medians) + 2
    print(f"{'step':<{width}} median of {args.runs} runs")
    for name, value in medians.items():
        print(f"{name:<{width}} {value * 1000:8.1f} ms")
    print(f"{'launcher overhead':<{width}} {overhead * 1000:8.1f} ms (goal < 500 ms)")
    return 0 if overhead < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
