"""The package, its tests and its benchmark scripts type-check under mypy's strict mode
(pyproject's ``[tool.mypy]``), so a change that breaks a signature breaks this test, not only a
reviewer's editor or the next measurement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_passes_on_the_package_its_tests_and_benchmarks(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("mypy") if cache is not None else tmp_path / "mypy"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(folder), "pytest_infx",
         "tests", "benchmarks"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout
