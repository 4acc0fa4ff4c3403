"""The command line and ini file read into one :class:`~pytest_infx.settings.Settings` value,
in one place so hooks and fixtures read them the same way (:mod:`.declare` declares them)."""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_infx.files.cachedir import cache_root
from pytest_infx.files.numbers import NumberError, count
from pytest_infx.files.textio import InputFileError, input_limit
from pytest_infx.plugin.state import RunState
from pytest_infx.settings import (
    DEFAULT_CHANGELOG_ONLY_ENTRIES,
    DEFAULT_ENGINE_CHECK,
    DEFAULT_GOLDEN_DIR,
    DEFAULT_PRECISION_CHECK,
    DEFAULT_PROGRESS,
    DEFAULT_PROGRESS_INTERVAL_S,
    DEFAULT_RECIPES_DIR,
    ENGINE_CHECK_MODES,
    MAX_REPEATS,
    MIN_PROGRESS_INTERVAL_S,
    PROGRESS_MODES,
    SPEC_SEPARATOR,
    Environment,
    HistorySettings,
    LintSettings,
    Roots,
    Settings,
    SlurmSettings,
    default_db_url,
    environment,
)

if TYPE_CHECKING:
    from pytest_infx.engines.extensions import HookImpl
    from pytest_infx.engines.registry import EngineRegistry


def _roots(config: pytest.Config, env: Environment) -> Roots:
    """Where checkpoints are found; a root that was given must be usable, named as it was
    given (the option, its ini key or its variable)."""
    from pytest_infx import usage

    staged_given = [
        ("--infx-staged-root", config.getoption("infx_staged_root")),
        ("ini infx_staged_root", config.getini("infx_staged_root")),
        ("INFX_STAGED_ROOT", env.staged_root),
    ]
    download_given = [
        ("--infx-download-root", config.getoption("infx_download_root")),
        ("ini infx_download_root", config.getini("infx_download_root")),
        ("INFX_DOWNLOAD_ROOT", env.download_root),
    ]
    staged = next(((what, v) for what, v in staged_given if v), None)
    download = next(((what, v) for what, v in download_given if v), None)
    if staged is not None and os.path.lexists(staged[1]):
        usage.existing_folder(staged[0], Path(staged[1]), "give the folder of staged checkpoints")
    if download is not None:
        usage.writable_folder(download[0], Path(download[1]))
    return Roots(
        Path(staged[1]) if staged else None,
        Path(download[1]) if download else cache_root(env=env) / "models",
    )


def settings(config: pytest.Config) -> Settings:
    """The options as one value, computed once: collection asks for it for every file."""
    state = RunState.of(config)
    found = state.settings
    if found is None:
        found = state.settings = _settings(config)
    return found


def engine_hooks(config: pytest.Config) -> Sequence[HookImpl]:
    """This run's implementations of ``pytest_infx_register_engines``."""
    hooks: Sequence[HookImpl] = (
        config.pluginmanager.hook.pytest_infx_register_engines.get_hookimpls()
    )
    return hooks


def engines(config: pytest.Config) -> EngineRegistry:
    """The run's engine adapters, with those of its hook implementations; built on first use,
    since building imports the adapters, which a cached collection never needs."""
    state = RunState.of(config)
    found = state.engines
    if found is None:
        from pytest_infx.engines.registry import build

        found = state.engines = build(engine_hooks(config))
    return found


BOOL_INIS = ("infx_resume", "infx_lint")
MAX_GPU_COUNT = 1024
"""More GPUs than any one node has: the leaser lists every GPU and tries lock files across them,
so ten million would grow memory and not finish instead of failing at once."""


def check_ini_booleans(config: pytest.Config) -> None:
    """pytest reads a ``bool`` ini value only when asked, and a value such as ``perhaps`` is
    then an INTERNALERROR; asked here first, it is a usage error naming the key."""
    for name in BOOL_INIS:
        try:
            config.getini(name)
        except ValueError as exc:
            # pytest's message is "invalid truth value 'perhaps'": the value as the file gives it
            found = re.search(r"truth value (.+)$", str(exc))
            shown = found.group(1) if found else "(not a boolean)"
            raise pytest.UsageError(
                f"ini {name} = {shown}: give true or false (also yes/no, on/off, 1/0)"
            ) from None


def _settings(config: pytest.Config) -> Settings:
    from pytest_infx import usage

    root = config.rootpath
    env = environment()
    option_recipes = config.getoption("infx_recipes")
    recipes = option_recipes or config.getini("infx_recipes")
    option_results = config.getoption("infx_results")
    results = option_results or config.getini("infx_results")
    dataset_dir = config.getoption("infx_dataset_dir")
    gpu_count = config.getoption("infx_gpu_count")
    recipe_folder = Path(os.path.normpath(root / recipes))
    try:
        if option_recipes is not None and not recipe_folder.exists():
            usage.existing_folder("--infx-recipes", recipe_folder, "give the recipe folder")
        if recipes != DEFAULT_RECIPES_DIR and option_recipes is None and not recipe_folder.exists():
            usage.existing_folder("ini infx_recipes", recipe_folder, "give the recipe folder")
        shown = "--infx-results" if option_results else "ini infx_results"
        results_folder = usage.resolved(shown, Path(results))
        if option_results or Path(results).is_file():
            usage.writable_folder(shown, results_folder)
        if dataset_dir:
            dataset_dir = usage.resolved("--infx-dataset-dir", Path(dataset_dir))
            usage.existing_folder("--infx-dataset-dir", dataset_dir)
        golden_ini = config.getini("infx_golden")
        golden_shown = "ini infx_golden" if golden_ini else "the golden folder"
        golden = usage.resolved(
            golden_shown, root / (golden_ini or DEFAULT_GOLDEN_DIR), "give the golden curve folder"
        )
        if os.path.lexists(golden):
            usage.existing_folder(golden_shown, golden, "give the golden curve folder")
        if env.cache_dir:
            usage.writable_folder("INFX_CACHE_DIR", Path(env.cache_dir))
        roots = _roots(config, env)
        input_limit(env)
    except (usage.UsageError, InputFileError) as exc:
        raise pytest.UsageError(str(exc)) from None
    if gpu_count is not None:
        try:
            count(gpu_count, "--infx-gpu-count", least=0, most=MAX_GPU_COUNT)
        except NumberError:
            raise pytest.UsageError(
                f"--infx-gpu-count {gpu_count}: give 0 to {MAX_GPU_COUNT} GPUs (default: what "
                "nvidia-smi shows)"
            ) from None
    return Settings(
        rootdir=root,
        recipes=recipe_folder,
        results=results_folder,
        golden=golden,
        gpu=config.getoption("infx_gpu"),
        plan=config.getoption("infx_plan"),
        gpu_count=gpu_count,
        dataset_dir=Path(dataset_dir) if dataset_dir else root,
        changed_since=config.getoption("infx_changed_since"),
        roots=roots,
        progress=_progress(config),
        progress_interval_s=_progress_interval(config),
        resume=bool(config.getoption("infx_resume") or config.getini("infx_resume")),
        precision_check=_precision_check(config),
        engine_check=_engine_check(config),
        lint=_lint(config),
        slurm=_slurm(config),
        history=_history(config, env, results_folder),
        env=env,
    )


def _history(config: pytest.Config, env: Environment, results: Path) -> HistorySettings:
    """The database URL: the option, else the ini, else ``INFX_DB_URL``, else SQLite in the
    results folder; ``off`` in any of them turns the history off."""
    from pytest_infx.baseline_tolerance import tolerances

    url = _text(config, "infx_db") or env.db_url or default_db_url(results)
    lines = tuple(str(line) for line in config.getini("infx_baseline_tolerance"))
    try:
        tolerances(lines, source="ini infx_baseline_tolerance")
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    baseline = config.getoption("infx_baseline")
    branch = config.getoption("infx_branch")
    off = url.lower() in ("off", "none")
    if not off and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", url) is None:
        shown = "--infx-db" if config.getoption("infx_db") else "the history database"
        raise pytest.UsageError(
            f"{shown} {url!r} is not a database URL: give sqlite:///PATH, "
            "postgresql+psycopg://user@host/db, or off"
        )
    return HistorySettings(
        url=None if off else url,
        baseline=baseline or None,
        branch=branch or None,
        tolerances=lines,
        mad_k=_gate_number(config, "infx_baseline_mad_k", 3.0, integer=False),
        window=int(_gate_number(config, "infx_baseline_window", 10, integer=True)),
        repeats=int(_gate_number(config, "infx_repeats", 1, integer=True, most=MAX_REPEATS)),
    )


def _gate_number(
    config: pytest.Config, name: str, default: float, *, integer: bool, most: int = 1000
) -> float:
    """A positive, finite number of the gate from the ini; a bad one is a usage error before
    any point is measured."""
    import math

    text = str(config.getini(name) or "").strip()
    if not text:
        return default
    try:
        value = float(int(text)) if integer else float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= most):
        kind = "a whole number" if integer else "a number"
        raise pytest.UsageError(
            f"ini {name} = {text!r}: give {kind} above 0 and at most {most}, e.g. {default:g}"
        )
    return value


def _text(config: pytest.Config, name: str) -> str | None:
    """The option, else its ini twin (both named ``name``); ``None`` when neither is set."""
    value = config.getoption(name, default=None)
    if value is None or value == "":
        value = config.getini(name)
    text = str(value).strip() if value is not None else ""
    return text or None


def _lint(config: pytest.Config) -> LintSettings:
    from pytest_infx import usage
    from pytest_infx.lint.context import repository_root
    from pytest_infx.lint.findings import selectors

    root = _text(config, "infx_lint_root")
    number = config.getoption("infx_pr")
    shown = "--infx-lint-root" if config.getoption("infx_lint_root") else "ini infx_lint_root"
    try:
        lint_root = usage.resolved(shown, config.rootpath / root) if root else None
        if lint_root is not None:
            repository_root(shown, lint_root)
    except usage.UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    return LintSettings(
        root=lint_root,
        root_option=bool(config.getoption("infx_lint_root")),
        base=_text(config, "infx_base"),
        select=selectors(config.getini("infx_lint_select")),
        ignore=selectors(config.getini("infx_lint_ignore")),
        changelog_only_entries=str(
            config.getini("infx_changelog_only_entries") or DEFAULT_CHANGELOG_ONLY_ENTRIES
        ),
        scenario_types=tuple(str(v) for v in config.getini("infx_scenario_types")),
        include=bool(config.getini("infx_lint")),
        audit=bool(config.getoption("infx_lint_all")),
        pr=int(number) if number is not None else None,
        main=bool(config.getoption("infx_main")),
    )


def slurm_asked(config: pytest.Config) -> bool:
    """Whether ``--infx-slurm`` or its ini twin is given at all: asked before pytest
    configures, where a run that gives neither (``--help`` among them) builds no settings and
    imports no Slurm module."""
    return _text(config, "infx_slurm") is not None


def _count(config: pytest.Config, name: str, flag: str, minimum: int) -> int | None:
    text = _text(config, name)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise pytest.UsageError(f"{flag}: expected a whole number >= {minimum}, got {text!r}")
    return value


def _slurm(config: pytest.Config) -> SlurmSettings | None:
    """The Slurm settings; ``None`` when no workers were asked, and then the other Slurm
    options are not read, so they cannot stop a run that does not use them."""
    workers = _count(config, "infx_slurm", "--infx-slurm", 0)
    if not workers:
        return None
    extra_text = _text(config, "infx_slurm_args") or ""
    try:
        extra = tuple(shlex.split(extra_text))
    except ValueError as exc:
        raise pytest.UsageError(f"--infx-slurm-args: {exc} in {extra_text!r}") from None
    wait_text = _text(config, "infx_slurm_wait")
    wait_s = None
    if wait_text is not None:
        try:
            wait_s = float(wait_text)
        except ValueError:
            wait_s = -1.0
        if not wait_s > 0:
            raise pytest.UsageError(f"--infx-slurm-wait: expected seconds > 0, got {wait_text!r}")
    found = SlurmSettings(
        workers=workers,
        partition=_text(config, "infx_slurm_partition"),
        gpus=_count(config, "infx_slurm_gpus", "--infx-slurm-gpus", 0),
        time=_text(config, "infx_slurm_time"),
        account=_text(config, "infx_slurm_account"),
        extra=extra,
        wait_s=wait_s,
    )
    from pytest_infx.plugin.slurm.jobs import srun_argv

    for word in [*srun_argv(found, "x")[1:], sys.executable]:
        if " " in word or SPEC_SEPARATOR in word or not word:
            raise pytest.UsageError(
                f"--infx-slurm: {word!r} cannot be passed to srun through an xdist spec "
                "(no spaces or '//' inside one argument); use a path or value without them"
            )
    return found


def _progress(config: pytest.Config) -> str:
    mode = config.getoption("infx_progress") or config.getini("infx_progress") or DEFAULT_PROGRESS
    if mode not in PROGRESS_MODES:
        raise pytest.UsageError(
            f"ini infx_progress = {mode!r}: use one of {', '.join(PROGRESS_MODES)}"
        )
    return str(mode)


def _progress_interval(config: pytest.Config) -> float:
    value = config.getoption("infx_progress_interval")
    if value is None:
        text = config.getini("infx_progress_interval") or f"{DEFAULT_PROGRESS_INTERVAL_S:g}"
        try:
            value = float(text)
        except ValueError:
            raise pytest.UsageError(
                f"ini infx_progress_interval = {text!r}: give a number of seconds, e.g. 30"
            ) from None
    if not value >= MIN_PROGRESS_INTERVAL_S:
        raise pytest.UsageError(
            f"--infx-progress-interval {value:g}: give a positive number of seconds, at least"
            f" {MIN_PROGRESS_INTERVAL_S:g}"
        )
    return float(value)


def _engine_check(config: pytest.Config) -> str:
    option: str | None = config.getoption("infx_engine_check")
    mode = option or str(config.getini("infx_engine_check") or DEFAULT_ENGINE_CHECK)
    if mode not in ENGINE_CHECK_MODES:
        raise pytest.UsageError(
            f"infx_engine_check = {mode!r}: use one of {', '.join(ENGINE_CHECK_MODES)}"
        )
    return mode


def _precision_check(config: pytest.Config) -> str:
    """Checked where it is used (preflight), so a bad value is a usage error, not a
    collection error of every file."""
    option: str | None = config.getoption("infx_precision_check")
    return option or str(config.getini("infx_precision_check") or DEFAULT_PRECISION_CHECK)
