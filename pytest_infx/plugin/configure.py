"""Start and end of a pytest process: the plugins pytest-infx registers, the run folders, and
the engine providers of this run.

The controller makes the run folder and names both folders to its workers through
``workerinput`` (see :mod:`pytest_infx.plugin.workers`); nothing travels through the
environment.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Generator
from pathlib import Path

import pytest

import pytest_infx.plugin.checks as checks
import pytest_infx.plugin.collect.files as collect
import pytest_infx.plugin.collect.groups as groups
import pytest_infx.plugin.collect.lint as lint
import pytest_infx.plugin.declare as declare
import pytest_infx.plugin.kinds as kinds
import pytest_infx.plugin.markers as markers
import pytest_infx.plugin.options as options
import pytest_infx.plugin.output.reporter as reporter
import pytest_infx.plugin.output.summary as summary
from pytest_infx import gcpause
from pytest_infx.engines import extensions
from pytest_infx.extras import MissingExtra, require
from pytest_infx.plugin.state import Folders, RunState
from pytest_infx.results.layout import Layout
from pytest_infx.results.tally import RecordTally
from pytest_infx.settings import environment

RUN_FOLDER_INPUT = "infx_run_dir"
PROGRESS_FOLDER_INPUT = "infx_progress_dir"


def cmdline_main(config: pytest.Config) -> None:
    """``--infx-slurm N`` becomes xdist's worker specs here, before xdist reads them. A run
    that asks for no Slurm workers does not import the Slurm modules at all (lint runs)."""
    if options.slurm_asked(config) and not RunState.of(config).worker:
        try:
            require("xdist", purpose="--infx-slurm")
        except MissingExtra as exc:
            raise pytest.UsageError(str(exc)) from None
        import pytest_infx.plugin.slurm.controller as slurm_controller
        from pytest_infx.plugin.output.activity import Tracker

        slurm_controller.configure_controller(config, Tracker)


def short_names(
    early_config: pytest.Config, parser: pytest.Parser
) -> Generator[None, object, object]:
    result = yield
    RunState.of(early_config).add_notes(declare.add_short_names(parser))
    return result


def configure(config: pytest.Config) -> None:
    checks.check(config)
    collect.widen_to_recipes(config)
    state = RunState.of(config)
    state.add_notes(markers.register(config))
    for line in kinds.marker_lines(config):
        config.addinivalue_line("markers", line)
    _use_engine_providers(config)
    # registered before pytest's own cleanups, so it runs after their closing gc.collect()
    config.add_cleanup(lambda: _give_back_gc(config))
    config.pluginmanager.register(
        summary.SummaryPlugin(config, RecordTally(), lambda: kinds.result_kinds(config)),
        "infx-summary",
    )
    config.pluginmanager.register(reporter.ReportPlugin(config), "infx-report")
    workerinput: dict[str, object] | None = getattr(config, "workerinput", None)
    if workerinput is None:
        run = Path(tempfile.mkdtemp(prefix="infx-run-"))
        state.folders = Folders(run, _progress_folder(config, run))
        state.owns_run_folder = True
    else:
        config.pluginmanager.register(groups.ServerGroupIds(), groups.PLUGIN_NAME)
        if RUN_FOLDER_INPUT in workerinput:
            shown = workerinput.get(PROGRESS_FOLDER_INPUT)
            run = Path(str(workerinput[RUN_FOLDER_INPUT]))
            folders = Folders(run, Path(str(shown)) if shown else None)
            state.folders = _slurm_node_folders(config, folders)
    if not lint.only_lint(config):
        _register_sweep_reports(config)


def _progress_folder(config: pytest.Config, run: Path) -> Path | None:
    """Where the workers' progress files go and the display reads them: the run folder, or
    under Slurm a folder on the shared results filesystem, since a job's run folder is on its
    node. A lint-only run has no display."""
    import pytest_infx.plugin.output.activity as activity

    if lint.only_lint(config):
        return None
    if config.pluginmanager.has_plugin("infx-slurm"):
        return Layout(options.settings(config).results).progress(run.name)
    return run / activity.FOLDER


def _slurm_node_folders(config: pytest.Config, folders: Folders) -> Folders:
    """A worker inside a Slurm job runs on its own node, in a node-local run folder it owns."""
    env = environment()
    if not env.in_slurm_job:
        return folders
    import pytest_infx.plugin.slurm.jobs as slurm

    node = slurm.configure_worker(config, env.slurm)
    if node is None:
        return folders
    RunState.of(config).owns_run_folder = True
    return Folders(node, folders.progress)


def _register_sweep_reports(config: pytest.Config) -> None:
    """Resume reporting everywhere; the progress display where the terminal is."""
    import pytest_infx.plugin.output.activity as activity
    import pytest_infx.plugin.output.progress as progress
    import pytest_infx.plugin.run.resume as resume

    config.pluginmanager.register(resume.ResumePlugin(config), "infx-resume")
    folders = RunState.of(config).folders
    if folders is None or folders.progress is None or RunState.of(config).worker:
        return
    settings = options.settings(config)
    interval = settings.progress_interval_s
    display = progress.ProgressPlugin(config, settings.progress, interval, folders.progress)
    config.pluginmanager.register(display, activity.PLUGIN_NAME)


def _use_engine_providers(config: pytest.Config) -> None:
    """Adapters from this run's ``pytest_infx_register_engines`` hooks join those of installed
    packages; a provider that gives something unusable stops the run before collection."""
    if extensions.identity(options.engine_hooks(config)):
        try:
            options.engines(config)
        except extensions.EngineRegistrationError as exc:
            raise pytest.UsageError(str(exc)) from None


def _give_back_gc(config: pytest.Config) -> None:
    if RunState.of(config).frozen:
        gcpause.unfreeze()


def unconfigure(config: pytest.Config) -> None:
    """The folders this process made are removed, after every server it registered has been
    stopped; the progress folder only by the process that made it."""
    state = RunState.of(config)
    folders = state.folders
    if folders is None or not state.owns_run_folder:
        return
    if folders.progress is not None and not state.worker:
        shutil.rmtree(folders.progress, ignore_errors=True)
    registry = folders.run / "registry.jsonl"
    if registry.exists():
        from pytest_infx.launch import Registry, sweep

        sweep(Registry(registry))
    shutil.rmtree(folders.run, ignore_errors=True)
