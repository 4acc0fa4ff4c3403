"""pytest hooks of pytest-infx; everything else lives in the modules these hooks call."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_infx import collect, gcpause, hardware, markers, options, selection
from pytest_infx.engines import extensions
from pytest_infx.lint import items as lint
from pytest_infx.report import reporter, summary

pytest_plugins = ["pytest_infx.fixtures"]

RUNNER = pytest.StashKey[str]()
SUMMARY = pytest.StashKey[summary.Summary]()
RUN_DIR = pytest.StashKey[tuple[Path, str | None]]()
PROGRESS_DIR = pytest.StashKey[tuple[Path, str | None]]()
REASONS = pytest.StashKey[list[str]]()
PLAN = pytest.StashKey[list[str]]()
FROZEN = pytest.StashKey[bool]()
GC_PAUSE = pytest.StashKey[gcpause.Pause]()
NOTES = pytest.StashKey[list[str]]()
GOLDEN_TREE_KEY = pytest.StashKey[dict[str, list[str] | None]]()
WORKER_REASONS = "infx_reasons"
GOLDEN_TREE = "infx_golden_tree"


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``--infx-slurm N`` becomes xdist's worker specs here, before xdist reads them. A run
    that asks for no Slurm workers does not import the launch package at all (lint runs)."""
    asked = config.getoption("infx_slurm", None) or config.getini("infx_slurm")
    if asked and not hasattr(config, "workerinput"):
        from pytest_infx.launch import slurm_controller
        from pytest_infx.report.progress import Tracker

        slurm_controller.configure_controller(config, Tracker)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_infx import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser
) -> Generator[None, object, object]:
    result = yield
    early_config.stash[NOTES] = options.add_short_names(parser)
    return result


def pytest_configure(config: pytest.Config) -> None:
    options.check_ini_booleans(config)
    config.stash.setdefault(NOTES, []).extend(markers.register(config))
    config.stash[REASONS] = []
    config.stash[GC_PAUSE] = gcpause.Pause()
    _use_engine_providers(config)
    # registered before pytest's own cleanups, so it runs after their closing gc.collect()
    config.add_cleanup(lambda: _give_back_gc(config))
    config.stash[SUMMARY] = summary.Summary()
    config.pluginmanager.register(
        summary.SummaryPlugin(config, config.stash[SUMMARY]), "infx-summary"
    )
    config.pluginmanager.register(reporter.ReportPlugin(config), "infx-report")
    if not hasattr(config, "workerinput"):
        run_dir = Path(tempfile.mkdtemp(prefix="infx-run-"))
        config.stash[RUN_DIR] = (run_dir, os.environ.get(options.RUN_DIR_VAR))
        os.environ[options.RUN_DIR_VAR] = str(run_dir)
    if not lint.only_lint(config):
        _register_sweep_reports(config)
    if hasattr(config, "workerinput") and os.environ.get("SLURM_JOB_ID"):
        from pytest_infx.launch import slurm

        node_dir = slurm.configure_worker(config, os.environ)
        if node_dir is not None:
            config.stash[RUN_DIR] = (node_dir, os.environ.get(options.RUN_DIR_VAR))
            os.environ[options.RUN_DIR_VAR] = str(node_dir)


def _register_sweep_reports(config: pytest.Config) -> None:
    """Resume reporting everywhere; the progress display where the terminal is, reading the
    folder it names to the workers (under Slurm one on the shared results filesystem, since a
    job's run folder is on its node)."""
    from pytest_infx import resume
    from pytest_infx.report import progress

    config.pluginmanager.register(resume.ResumePlugin(config), "infx-resume")
    found = config.stash.get(RUN_DIR, None)
    if found is None:
        return
    settings = options.settings(config)
    shown = found[0] / progress.FOLDER
    if config.pluginmanager.has_plugin("infx-slurm"):
        shown = settings.results / f".progress-{found[0].name}"
    config.stash[PROGRESS_DIR] = (shown, os.environ.get(options.PROGRESS_DIR_VAR))
    os.environ[options.PROGRESS_DIR_VAR] = str(shown)
    interval = settings.progress_interval_s
    display = progress.ProgressPlugin(config, settings.progress, interval, shown)
    config.pluginmanager.register(display, progress.PLUGIN_NAME)


def _use_engine_providers(config: pytest.Config) -> None:
    """Adapters from this run's ``pytest_infx_register_engines`` hooks join those of installed
    packages; a provider that gives something unusable stops the run before collection."""
    impls = config.pluginmanager.hook.pytest_infx_register_engines.get_hookimpls
    extensions.use_hook(impls)
    config.add_cleanup(lambda: extensions.drop_hook(impls))
    if extensions.identity():
        from pytest_infx.engines import registry

        try:
            registry.adapters()
        except extensions.EngineRegistrationError as exc:
            raise pytest.UsageError(str(exc)) from None


def _give_back_gc(config: pytest.Config) -> None:
    if config.stash.get(FROZEN, False):
        gcpause.unfreeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    shown = config.stash.get(PROGRESS_DIR, None)
    if shown is not None:
        shutil.rmtree(shown[0], ignore_errors=True)
        _restore(options.PROGRESS_DIR_VAR, shown[1])
    found = config.stash.get(RUN_DIR, None)
    if found is None:
        return
    run_dir, previous = found
    registry = run_dir / "registry.jsonl"
    if registry.exists():
        from pytest_infx.launch import Registry, sweep

        sweep(Registry(registry))
    shutil.rmtree(run_dir, ignore_errors=True)
    _restore(options.RUN_DIR_VAR, previous)


def _restore(name: str, previous: str | None) -> None:
    if previous is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = previous


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Where no host test will run (``--collect-only``, or only recipe and lint items), what
    collection built is frozen before the collector resumes, so neither the resumed collector nor
    pytest's closing full collection walks it; it is given back after that closing collection."""
    try:
        return (yield)
    finally:
        if session.config.stash[GC_PAUSE].stop(freeze=_runs_only_ours(session)):
            session.config.stash[FROZEN] = True


def pytest_collectstart(collector: pytest.Collector) -> None:
    """The collector is paused while pytest walks the recipe folder and running again for the
    host's own test files."""
    pause = collector.config.stash[GC_PAUSE]
    if collect.in_recipe_folder(collector.config, collector.path):
        pause.start()
    else:
        pause.stop()


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"infx: {note}" for note in config.stash.get(NOTES, [])]


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m lint`` alone selects the lint rules and the host's own lint-marked tests: recipe
    items never carry the marker, so the recipe folder is not read, and a test module whose
    source cannot mark a test ``lint`` is not imported. ``-m infx_lint`` asks for the rules
    alone, which come from no file, so nothing is collected at all."""
    markexpr = str(config.getoption("markexpr", default="") or "").strip()
    if markexpr not in (lint.MARKER, markers.OWN_LINT) or not lint.wants_lint(config):
        return None
    if markexpr == markers.OWN_LINT:
        return collection_path != config.rootpath or None
    if collect.in_recipe_folder(config, collection_path):
        return True
    from pytest_infx.lint import marked

    return marked.skippable(collection_path, config.rootpath) or None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not collect.is_recipe_file(config, file_path):
        return None
    return collect.RecipeFile.from_parent(parent, path=file_path)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """pytest collects regular files only; a recipe that is a symbolic link to nothing is
    added here, so that it is a collection error instead of a recipe that silently is not."""
    report = yield
    if isinstance(collector, pytest.Dir) and report.passed:
        for link in sorted(collector.path.iterdir()) if collector.path.is_dir() else ():
            if (
                link.is_symlink()
                and not link.exists()
                and collect.is_recipe_file(collector.config, link)
            ):
                report.result.append(collect.RecipeFile.from_parent(collector, path=link))
    return report


def _runner(config: pytest.Config) -> str:
    runner = config.stash.get(RUNNER, None)
    if runner is None:
        given = options.settings(config).gpu
        problem = hardware.unknown_runner(given) if given is not None else None
        if problem is not None:
            raise pytest.UsageError(f"--gpu {given}: {problem}")
        runner = given or hardware.default_runner()
        config.stash[RUNNER] = runner
    return runner


def _changed(config: pytest.Config) -> frozenset[str] | None:
    ref = options.settings(config).changed_since
    if ref is None:
        return None
    from pytest_infx.recipes import changes

    recipes = options.settings(config).recipes
    try:
        return frozenset(c.key for c in changes.changed_since(config.rootpath, recipes, ref))
    except changes.GitError as exc:
        raise pytest.UsageError(f"--changed-since: {exc}") from None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if any(collect.ref_of(item) for item in items):
        chosen = selection.select(items, collect.ref_of, _runner(config), _changed(config))
        if chosen.drop:
            config.hook.pytest_deselected(items=chosen.drop)
        config.stash[REASONS].extend(chosen.reasons)

        def key(item: pytest.Item) -> str | None:
            ref = collect.ref_of(item)
            return ref.server if ref else None

        items[:] = selection.group_by_server(chosen.keep, key)
        if getattr(config.option, "loadgroup", False):
            selection.mark_server_groups(items, key)
    if lint.wants_lint(config):
        rules = lint.lint_items(session)
        for rule in rules:
            rule.add_marker(markers.OWN_LINT)
        items.extend(rules)


def _runs_only_ours(session: pytest.Session) -> bool:
    """Whether no test of the host repository runs in this process: ``--collect-only``, or only
    recipe and lint items were selected."""
    if session.config.option.collectonly:
        return True
    items: list[pytest.Item] = getattr(session, "items", [])
    return all(collect.ref_of(i) is not None or isinstance(i, lint.LintItem) for i in items)


def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    recipe_items = any(collect.ref_of(item) for item in session.items)
    if recipe_items and not config.option.collectonly:
        from pytest_infx import precision, preflight, run

        config.stash[run.SESSION_ITEMS] = list(session.items)
        settings = options.settings(config)
        datasets = preflight.Datasets(settings.dataset_dir)
        workerinput: dict[str, Any] = getattr(config, "workerinput", {})
        datasets.golden = preflight.GoldenTree.from_wire(workerinput.get(GOLDEN_TREE))
        check = precision.check_for(settings)
        recording = bool(config.getoption("update_snapshots", False))
        for item in session.items:
            point = collect.point_of(item)
            if point is not None:
                item.stash[run.PREFLIGHT] = preflight.preflight(
                    point, datasets, settings.golden, check, recording=recording
                )
        _engine_check(session, settings)
        if settings.resume:
            from pytest_infx import resume

            resume.mark(session.items, settings.results, datasets)
    if not recipe_items or not options.settings(config).plan or hasattr(config, "workerinput"):
        return
    from pytest_infx import plan

    golden = options.settings(config).golden
    lines: list[str] = []
    planned = []
    for item in session.items:
        point = collect.point_of(item)
        if point is not None:
            planned.append(point)
            lines.extend(plan.render(point, config.rootpath, golden))
    lines.extend(plan.sharing(planned))
    config.stash[PLAN] = lines


def _engine_check(session: pytest.Session, settings: options.Settings) -> None:
    """The selected points' server commands, parsed by their engines' own parsers; a rejected
    one fails its items in preflight, at the recipe line."""
    from pytest_infx import preflight, run

    config = session.config
    if settings.engine_check == "off":
        return
    by_id: dict[str, list[pytest.Item]] = {}
    for item in session.items:
        point = collect.point_of(item)
        if point is not None:
            by_id.setdefault(point.id, []).append(item)
    points = [p for items in by_id.values() if (p := collect.point_of(items[0])) is not None]
    sources = {source.path: source for source in collect.tree(config).sources}
    found, lines = preflight.engine_problems(
        points, settings.golden, sources, mode=settings.engine_check
    )
    config.stash[REASONS].extend(lines)
    for point_id, problems in found.items():
        for item in by_id.get(point_id, []):
            item.stash[run.PREFLIGHT] = [*item.stash.get(run.PREFLIGHT, []), *problems]


def pytest_sessionfinish(session: pytest.Session) -> None:
    if session.config.stash.get(FROZEN, False):
        gcpause.refreeze()
    if lint.judged_nothing(session.config) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        reasons: list[str] = session.config.stash[REASONS]
        workeroutput[WORKER_REASONS] = reasons


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Every worker, a replacement started mid-run included, judges golden names from the
    golden folder as the run started (see preflight.GoldenTree)."""
    from pytest_infx import preflight

    config: pytest.Config = node.config
    if GOLDEN_TREE_KEY not in config.stash:
        tree = preflight.golden_tree(options.settings(config).golden)
        config.stash[GOLDEN_TREE_KEY] = tree.to_wire()
    node.workerinput[GOLDEN_TREE] = config.stash[GOLDEN_TREE_KEY]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """Workers select the points; the controller shows their one-line reasons once."""
    config: pytest.Config = node.config
    reasons = config.stash[REASONS]
    if not reasons:
        reasons.extend(getattr(node, "workeroutput", {}).get(WORKER_REASONS, []))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    plan_lines = config.stash.get(PLAN, [])
    if plan_lines:
        terminalreporter.write_sep("=", "infx plan")
        for line in plan_lines:
            terminalreporter.write_line(line)
    errors = sum(
        1 for r in terminalreporter.stats.get("error", []) if isinstance(r, pytest.CollectReport)
    )
    lint_lines = lint.stopped_by_collection(config, errors) or lint.summary_lines(config)
    if lint_lines:
        terminalreporter.write_sep("-", "infx lint")
        for line in lint_lines:
            red = line.startswith("ERROR")
            terminalreporter.write_line(line, yellow=line.startswith("WARNING"), red=red, bold=True)
    reasons = config.stash.get(REASONS, [])
    if reasons:
        terminalreporter.write_sep("-", "infx selection")
        for reason in reasons:
            terminalreporter.write_line(reason)
