"""The run's settings as one frozen value, built once from the command line and ini files, and
the process environment as another.

Kept apart from the pytest package so that the benchmark, launch, lint and report code can take
the settings they need without importing pytest. Each default is written once, here, and the
environment is read only here (and where a child process's environment is built), so every
variable that changes what pytest-infx does is listed in one place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

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
HISTORY_DB_NAME = "history.db"


def default_db_url(results: Path) -> str:
    """The results history a run writes when no database is named: SQLite in its results
    folder."""
    return f"sqlite:///{results / HISTORY_DB_NAME}"


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


_GITHUB_PREFIX = "GITHUB_"
_SLURM_NAMES = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
_SLURM_PREFIX = "SLURM"


@dataclass(frozen=True)
class Environment:
    """The variables of the process environment that pytest-infx reads, as they were set;
    an empty value counts as unset.

    The plugin builds one with its :class:`Settings` and passes it down; code that also runs
    without the plugin (the ``infx`` commands, the engine environments) takes one as an
    argument and else reads the current one with :func:`environment`.
    """

    cache_dir: str | None = None
    """``INFX_CACHE_DIR``: the cache root (engine environments, recipe trees)."""
    xdg_cache_home: str | None = None
    max_input_mb: str | None = None
    """``INFX_MAX_INPUT_MB``: the largest input file read, checked where it is used."""
    recipe_cache: str | None = None
    """``INFX_RECIPE_CACHE``: ``0`` turns the parsed-recipe cache off."""
    pip_args: str = ""
    """``INFX_PIP_ARGS``: machine-specific pip arguments for every install."""
    staged_root: str | None = None
    download_root: str | None = None
    runner_name: str | None = None
    """``RUNNER_NAME``: the CI runner's name, part of InferenceX's AgentX result names."""
    db_url: str | None = None
    """``INFX_DB_URL``: the results history database, below ``--infx-db`` and ``infx_db``."""
    step_summary: str | None = None
    """``GITHUB_STEP_SUMMARY``: the file the drift summary is appended to."""
    xdist_worker: str | None = None
    term: str | None = None
    github: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """GitHub Actions' ``GITHUB_*`` variables (run link, pull request, event)."""
    slurm: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """The Slurm job's ``SLURM*`` variables, ``CUDA_VISIBLE_DEVICES`` and (AMD nodes)
    ``ROCR_VISIBLE_DEVICES``."""

    @property
    def in_slurm_job(self) -> bool:
        return bool(self.slurm.get("SLURM_JOB_ID"))


def environment(source: Mapping[str, str] | None = None) -> Environment:
    """The environment of ``source`` (default: this process's, read now)."""
    found = os.environ if source is None else source

    def value(name: str) -> str | None:
        return found.get(name) or None

    return Environment(
        cache_dir=value("INFX_CACHE_DIR"),
        xdg_cache_home=value("XDG_CACHE_HOME"),
        max_input_mb=value("INFX_MAX_INPUT_MB"),
        recipe_cache=value("INFX_RECIPE_CACHE"),
        pip_args=found.get("INFX_PIP_ARGS", ""),
        staged_root=value("INFX_STAGED_ROOT"),
        download_root=value("INFX_DOWNLOAD_ROOT"),
        runner_name=value("RUNNER_NAME"),
        db_url=value("INFX_DB_URL"),
        step_summary=value("GITHUB_STEP_SUMMARY"),
        xdist_worker=value("PYTEST_XDIST_WORKER"),
        term=value("TERM"),
        github=MappingProxyType(
            {k: v for k, v in found.items() if k.startswith(_GITHUB_PREFIX) and v}
        ),
        slurm=MappingProxyType(
            {
                k: v
                for k, v in found.items()
                if (k.startswith(_SLURM_PREFIX) or k in _SLURM_NAMES) and v
            }
        ),
    )


MAX_REPEATS = 20
"""Passes of a fixed-seq-len point: past this a sweep takes hours for a median it had."""


@dataclass(frozen=True)
class HistorySettings:
    """Where the results history lives and what a run is compared with.

    ``url`` is None when the history is off (``--infx-db off``); ``baseline`` is a branch name
    or a run id (None: no gate); ``branch`` is the branch this run is stored under, None to be
    found from GitHub Actions or Git; ``tolerances`` are the ini's ``METRIC: ±N%`` lines;
    ``mad_k`` and ``window`` are the gate's noise band and how many rows it is read from;
    ``repeats`` the passes of a point whose recipe names none.
    """

    url: str | None = None
    baseline: str | None = None
    branch: str | None = None
    tolerances: tuple[str, ...] = ()
    mad_k: float = 3.0
    window: int = 10
    repeats: int = 1


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
    history: HistorySettings = field(default_factory=HistorySettings)
    env: Environment = field(default_factory=environment)
