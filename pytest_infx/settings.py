"""The run's settings as one frozen value, built once from the command line and ini files.

Kept apart from the pytest package so that the benchmark, launch, lint and report code can take
the settings they need without importing pytest. Each default is written once, here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PROGRESS_MODES = ("auto", "live", "lines", "off")
MIN_PROGRESS_INTERVAL_S = 0.1
"""Shorter intervals only spend the cores on redrawing lines that the eye cannot follow."""
ENGINE_CHECK_MODES = ("auto", "always", "off")

DEFAULT_RECIPES_DIR = "recipes"
DEFAULT_RESULTS_DIR = "infx-results"
DEFAULT_GOLDEN_DIR = "golden"
DEFAULT_PROGRESS = "auto"
DEFAULT_PROGRESS_INTERVAL_S = 30.0
DEFAULT_PRECISION_CHECK = "warn"
DEFAULT_ENGINE_CHECK = "auto"
DEFAULT_CHANGELOG_ONLY_ENTRIES = "forbid"

SPEC_SEPARATOR = "//"
"""What separates the parts of an xdist spec, so no srun argument may hold it."""


@dataclass(frozen=True)
class Roots:
    """Where checkpoints live: a runner's staged copies first, else the download cache."""

    staged: Path | None
    download: Path


@dataclass(frozen=True)
class SlurmSettings:
    """What the user asked of the cluster; `extra` are srun arguments passed as they are."""

    workers: int
    partition: str | None = None
    gpus: int | None = None
    time: str | None = None
    account: str | None = None
    extra: tuple[str, ...] = ()
    wait_s: float | None = None


@dataclass(frozen=True)
class LintSettings:
    """What ``pytest -m lint`` judges and against what, as the user gave it.

    ``root`` is ``None`` when no lint root was named: the lint then finds it (the rootdir when
    it holds the changelog, else the Git top level), which costs a ``git`` call that a run
    without lint must not pay. ``root_option`` says the root was named on the command line,
    which adds the lint items even to a run given paths. ``changelog_only_entries`` is the ini
    text, parsed where the lint runs so that a bad value stops only a run that lints.
    """

    root: Path | None = None
    root_option: bool = False
    base: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    changelog_only_entries: str = DEFAULT_CHANGELOG_ONLY_ENTRIES
    scenario_types: tuple[str, ...] = ()
    include: bool = False
    audit: bool = False
    pr: int | None = None
    main: bool = False


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
    progress: str = DEFAULT_PROGRESS
    progress_interval_s: float = DEFAULT_PROGRESS_INTERVAL_S
    resume: bool = False
    precision_check: str = DEFAULT_PRECISION_CHECK
    engine_check: str = DEFAULT_ENGINE_CHECK
    lint: LintSettings = field(default_factory=LintSettings)
    slurm: SlurmSettings | None = None
