"""The run's settings as one frozen value, built once from the command line and ini files.

Kept apart from the pytest package so that the benchmark, launch and report code can take the
settings they need without importing pytest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_infx.results.layout import Layout

PROGRESS_MODES = ("auto", "live", "lines", "off")
MIN_PROGRESS_INTERVAL_S = 0.1
"""Shorter intervals only spend the cores on redrawing lines that the eye cannot follow."""
ENGINE_CHECK_MODES = ("auto", "always", "off")


@dataclass(frozen=True)
class Roots:
    """Where checkpoints live: a runner's staged copies first, else the download cache."""

    staged: Path | None
    download: Path


@dataclass(frozen=True)
class Settings:
    rootdir: Path
    recipes: Path
    results: Path
    golden: Path
    gpu: str | None
    plan: bool
    gpu_count: int | None
    dataset_dir: Path
    changed_since: str | None
    roots: Roots
    progress: str = "auto"
    progress_interval_s: float = 30.0
    resume: bool = False
    precision_check: str = "warn"
    engine_check: str = "auto"

    @property
    def layout(self) -> Layout:
        """Where each file under ``results`` lives."""
        return Layout(self.results)
