"""Time the engine argument check as a run pays it: first with no stored verdicts (the parser is
imported and parses every distinct command), then again with the commands unchanged (every
verdict comes from the cache and no parser starts).

The recipes are the repository's own of one runner (default ``cpu``: the embedded vLLM's parser,
which the CPU engine environment holds once ``pytest -m speedbench`` installed it). The stored
verdicts are set aside before the first run and put back afterwards, so the cache is left as it
was found.

Run: ``python benchmarks/engine_check_speed.py [--runner cpu] [--runs 3] [--install]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

from pytest_infx.engines.conformance import summary
from pytest_infx.engines.registry import installed
from pytest_infx.engines.verdicts import FOLDER
from pytest_infx.files.cachedir import cache_root
from pytest_infx.prepare.preflight import engine_points_check
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all

ROOT = Path(__file__).resolve().parents[1]


def _check(runner: str, install: bool) -> tuple[float, list[str], int]:
    engines = installed()
    rules = engines.engine_rules()
    sources = {source.path: source for source in load_tree(ROOT / "recipes", rules)}
    points = [p for p in expand_all(sources.values(), rules) if p.runner == runner]
    started = time.perf_counter()
    report = engine_points_check(points, ROOT / "golden", sources, install=install, engines=engines)
    seconds = time.perf_counter() - started
    return seconds, summary(report), len(report.unchecked)


def main() -> int:
    """Time the argv check with no stored verdicts, then with every verdict stored."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--runner", default="cpu", help="the recipes of this runner (cpu)")
    parser.add_argument("--runs", type=int, default=3, help="second runs to time (3)")
    parser.add_argument(
        "--install", action="store_true", help="install a missing parser environment first"
    )
    args = parser.parse_args()
    folder = cache_root() / FOLDER
    saved = folder.with_name(f"{FOLDER}.saved-by-benchmark")
    if saved.exists():
        print(f"{saved} exists: an earlier run was interrupted; restore or remove it first")
        return 1
    if folder.exists():
        folder.rename(saved)
    try:
        first, lines, unchecked = _check(args.runner, args.install)
        if not lines or unchecked:
            print(
                f"no parser checked every {args.runner} point ({unchecked} unchecked);"
                " install the engine environment (pytest -m speedbench) or pass --install"
            )
            return 1
        print(f"first run (no stored verdicts): {first:.2f} s")
        for line in lines:
            print(f"  {line}")
        again = [_check(args.runner, False) for _ in range(args.runs)]
        median = statistics.median(seconds for seconds, _, _ in again)
        print(f"second run (commands unchanged), median of {args.runs}: {median:.3f} s")
        for line in again[-1][1]:
            print(f"  {line}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if saved.exists():
            saved.rename(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
