"""Time a foreign one-test project's ``pytest`` run with and without pytest-infx installed.

pytest loads every installed plugin in every run of its environment, so merely installing
pytest-infx costs each run of every other project its import. Two virtual environments are
built once (and kept in ``--envs``): one with pytest alone, one with a plain ``pip install`` of
this checkout, which brings the same pytest. The project never opted in, so the difference is
what an environment pays for having pytest-infx installed. The goal is at most 50 ms. Both the
wall time and the CPU time (user + system of the process and its children) are printed: on a
busy machine the wall time mostly measures the wait for a core, and the CPU time is the cost.
The runs write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped), as pytest does on most machines:
it then keeps the modules whose asserts it rewrites, a plugin's included, instead of rewriting
them in every run.

Run: ``python benchmarks/foreign_overhead.py [--runs 21] [--envs DIR]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

GOAL_MS = 50.0
REPO = Path(__file__).resolve().parents[1]
TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def _pip(env: Path, *args: str) -> None:
    subprocess.run([str(_python(env)), "-m", "pip", "install", "-q", *args], check=True)


def _pytest_version(env: Path) -> str:
    return subprocess.run(
        [str(_python(env)), "-c", "import pytest; print(pytest.__version__)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def build(envs: Path) -> tuple[Path, Path]:
    """The two environments, built on first use: the checkout is copied into the one by a
    regular (not editable) install, as a user gets it, and the other gets the same pytest."""
    ours, theirs = envs / "with-infx", envs / "without-infx"
    if not _python(ours).exists():
        venv.create(ours, with_pip=True)
        _pip(ours, str(REPO))
    if not _python(theirs).exists():
        venv.create(theirs, with_pip=True)
        _pip(theirs, f"pytest=={_pytest_version(ours)}")
    return ours, theirs


def project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "test_one.py").write_text(TEST, encoding="utf-8")
    return root


def _cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one_run(env: Path, folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole ``pytest`` process, start-up included."""
    cpu = _cpu_s()
    start = time.perf_counter()
    subprocess.run(
        [str(_python(env)), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        check=True,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    return time.perf_counter() - start, _cpu_s() - cpu


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--envs", type=Path, default=Path(tempfile.gettempdir()) / "infx-bench")
    args = parser.parse_args()
    ours, theirs = build(args.envs)
    folder = project(args.envs / "project")
    one_run(ours, folder)
    one_run(theirs, folder)
    ours_runs: list[tuple[float, float]] = []
    theirs_runs: list[tuple[float, float]] = []
    for _ in range(args.runs):
        ours_runs.append(one_run(ours, folder))
        theirs_runs.append(one_run(theirs, folder))
    print(f"pytest {_pytest_version(ours)}, one-test project, median of {args.runs} runs")
    for i, what in enumerate(("wall", "cpu")):
        with_s = [run[i] for run in ours_runs]
        without_s = [run[i] for run in theirs_runs]
        more = [a - b for a, b in zip(with_s, without_s, strict=True)]
        print(
            f"{what}: without pytest-infx {_ms(without_s):.0f} ms, with {_ms(with_s):.0f} ms, "
            f"more run by run {_ms(more):+.0f} ms (goal: at most {GOAL_MS:.0f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
