"""Recipe files into items, and what happens to the selected items before they run: the
runner's selection, grouping by server, preflight, the engines' own argv check, resume and the
``--infx-plan`` lines."""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path

import pytest

import pytest_infx.plugin.collect.files as collect
import pytest_infx.plugin.collect.lint as lint
import pytest_infx.plugin.collect.selection as selection
import pytest_infx.plugin.markers as markers
import pytest_infx.plugin.options as options
import pytest_infx.plugin.stash as stash
import pytest_infx.plugin.workers as workers
from pytest_infx import hardware
from pytest_infx.plugin.kinds import item_kinds, result_kinds
from pytest_infx.plugin.state import RunState
from pytest_infx.settings import Settings
from pytest_infx.usage import UsageError


def ignore(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m lint`` alone selects the lint rules and the host's own lint-marked tests: recipe
    items never carry the marker, so the recipe folder is not read, and a test module whose
    source cannot mark a test ``lint`` is not imported. ``-m infx_lint`` asks for the rules
    alone, which come from no file, so nothing is collected at all. Likewise an ``-m`` that can
    select only items with a recipe marker (``-m speedbench``, the plan command's) imports
    only the test modules whose source can carry one of those markers."""
    markexpr = markers.markexpr(config)
    recipe_marks = (
        collect.recipe_marks_only(markexpr, frozenset(item_kinds(config)))
        if markexpr
        else frozenset()
    )
    if recipe_marks:
        if collect.in_recipe_folder(config, collection_path):
            return None
        from pytest_infx.lint import marked

        return marked.skippable(collection_path, config.rootpath, recipe_marks) or None
    if markexpr not in (lint.MARKER, markers.OWN_LINT) or not lint.wants_lint(config):
        return None
    if markexpr == markers.OWN_LINT:
        return collection_path != config.rootpath or None
    if collect.in_recipe_folder(config, collection_path):
        return True
    from pytest_infx.lint import marked

    return marked.skippable(collection_path, config.rootpath) or None


def recipe_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not collect.is_recipe_file(parent.config, file_path):
        return None
    return collect.RecipeFile.from_parent(parent, path=file_path)


def with_dangling_links(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """pytest collects regular files only; a recipe path that is something else (a symbolic
    link to nothing or in a loop, a pipe, a device) is added here, so that it is a collection
    error naming what it is instead of a recipe that silently is not."""
    report = yield
    if isinstance(collector, pytest.Dir) and report.passed:
        for entry in sorted(collector.path.iterdir()) if collector.path.is_dir() else ():
            if (
                not entry.is_file()
                and not entry.is_dir()
                and collect.is_recipe_file(collector.config, entry)
            ):
                report.result.append(collect.RecipeFile.from_parent(collector, path=entry))
    return report


def _runner(config: pytest.Config) -> str:
    state = RunState.of(config)
    runner = state.runner
    if runner is None:
        given = options.settings(config).gpu
        problem = hardware.unknown_runner(given) if given is not None else None
        if problem is not None:
            raise pytest.UsageError(f"--gpu {given}: {problem}")
        runner = given or hardware.default_runner()
        state.runner = runner
    return runner


def _changed(config: pytest.Config) -> frozenset[str] | None:
    settings = options.settings(config)
    if settings.changed_since is None:
        return None
    from pytest_infx.files.git import GitError
    from pytest_infx.recipes import changes

    try:
        found = changes.changed_since(config.rootpath, settings.recipes, settings.changed_since)
    except GitError as exc:
        raise pytest.UsageError(f"--changed-since: {exc}") from None
    return frozenset(c.key for c in found)


def select(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """This runner's points, grouped by server (xdist's ``loadgroup`` keeps a group on one
    worker), and the lint rules where lint was asked for."""
    if any(collect.ref_of(item) for item in items):
        chosen = selection.select(items, collect.ref_of, _runner(config), _changed(config))
        if chosen.drop:
            config.hook.pytest_deselected(items=chosen.drop)
        RunState.of(config).add_reasons(chosen.reasons)

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


def finish(session: pytest.Session) -> None:
    """Preflight, the argv check and resume for the items that will run; the plan lines where
    ``--infx-plan`` asked for them."""
    config = session.config
    recipe_items = any(collect.ref_of(item) for item in session.items)
    if not recipe_items:
        return
    settings = options.settings(config)
    if not config.option.collectonly:
        _prepare(session, settings)
    if settings.plan and not RunState.of(config).worker:
        RunState.of(config).plan = tuple(_plan_lines(session, settings))


def _prepare(session: pytest.Session, settings: Settings) -> None:
    from pytest_infx.prepare import precision, preflight

    config = session.config
    if not settings.plan and not RunState.of(config).worker:
        from pytest_infx.plugin.run.history import History

        History(settings, {}, lambda: result_kinds(config)).check()
    RunState.of(config).session_items = list(session.items)
    datasets = preflight.Datasets(settings.dataset_dir)
    datasets.golden = preflight.GoldenTree.from_wire(workers.golden_tree(config))
    try:
        check = precision.check_for(settings)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    recording = bool(config.getoption("update_snapshots", False))
    engines = options.engines(config)
    for item in session.items:
        point = collect.point_of(item)
        if point is not None:
            item.stash[stash.PREFLIGHT] = preflight.preflight(
                point, datasets, settings.golden, check, recording=recording, engines=engines
            )
    _engine_check(session, settings)
    if settings.resume:
        import pytest_infx.plugin.run.resume as resume
        from pytest_infx.results.layout import Layout

        resume.mark(session.items, Layout(settings.results), datasets)


def _plan_lines(session: pytest.Session, settings: Settings) -> list[str]:
    from pytest_infx.launch.spec import server_name
    from pytest_infx.prepare import plan

    lines: list[str] = []
    servers = []
    kinds = result_kinds(session.config)
    for item in session.items:
        point, ref = collect.point_of(item), collect.ref_of(item)
        if point is not None and ref is not None:
            name = server_name(collect.server_label(session.config, ref), ref.server)
            servers.append((name, point.id))
            lines.extend(
                plan.render(
                    point,
                    session.config.rootpath,
                    settings.golden,
                    server=name,
                    engines=options.engines(session.config),
                    kinds=kinds,
                )
            )
    lines.extend(plan.sharing(servers))
    points = [p for item in session.items if (p := collect.point_of(item)) is not None]
    lines.extend(plan.missing_curves(points, settings.golden))
    return lines


def _say(config: pytest.Config) -> Callable[[str], None]:
    """A line on the terminal while the check works: a parser import or an install can take
    minutes, which must not look like a hang. A worker's terminal is not shown; its lines go
    nowhere, as the controller's check says the same."""

    def say(message: str) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not RunState.of(config).worker:
            reporter.write_line(f"infx: {message}")

    return say


def _engine_check(session: pytest.Session, settings: Settings) -> None:
    """The selected points' server commands, parsed by their engines' own parsers; a rejected
    one fails its items in preflight, at the recipe line."""
    from pytest_infx.prepare import preflight

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
        points,
        settings.golden,
        sources,
        mode=settings.engine_check,
        progress=_say(config),
        engines=options.engines(config),
    )
    RunState.of(config).add_reasons(lines)
    for point_id, problems in found.items():
        for item in by_id.get(point_id, []):
            item.stash[stash.PREFLIGHT] = [*item.stash.get(stash.PREFLIGHT, []), *problems]
