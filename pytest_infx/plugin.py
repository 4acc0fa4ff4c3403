"""pytest hooks of pytest-infx; everything else lives in the modules these hooks call."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx import collect, hardware, options, plan, selection
from pytest_infx.recipes import changes

pytest_plugins = ["pytest_infx.fixtures"]

MARKERS = {
    "speedbench": "SPEED-Bench acceptance-length cell (one draft length x thinking mode)",
    "agentic": "AgentX throughput/latency point (one TP x concurrency)",
    "lint": "repository rule (changelog, comments, recipes, golden registry)",
    "engine": "needs the real embedded CPU engine (installs it on first use)",
}
RUNNER = pytest.StashKey[str]()
REASONS = pytest.StashKey[list[str]]()
PLAN = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    config.stash[REASONS] = []


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if collect.is_recipe_file(parent.config, file_path):
        return collect.RecipeFile.from_parent(parent, path=file_path)
    return None


def _runner(config: pytest.Config) -> str:
    runner = config.stash.get(RUNNER, None)
    if runner is None:
        runner = options.settings(config).gpu or hardware.default_runner()
        config.stash[RUNNER] = runner
    return runner


def _changed(config: pytest.Config) -> frozenset[str] | None:
    ref = options.settings(config).changed_since
    if ref is None:
        return None
    recipes = options.settings(config).recipes
    try:
        return frozenset(c.key for c in changes.changed_since(config.rootpath, recipes, ref))
    except changes.GitError as exc:
        raise pytest.UsageError(f"--changed-since: {exc}") from None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not any(collect.point_of(item) for item in items):
        return
    chosen = selection.select(items, collect.point_of, _runner(config), _changed(config))
    if chosen.drop:
        config.hook.pytest_deselected(items=chosen.drop)
    config.stash[REASONS].extend(chosen.reasons)

    def key(item: pytest.Item) -> str | None:
        point = collect.point_of(item)
        return plan.server_key(point) if point else None

    items[:] = selection.group_by_server(chosen.keep, key)


def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    if not options.settings(config).plan or hasattr(config, "workerinput"):
        return
    lines: list[str] = []
    for item in session.items:
        point = collect.point_of(item)
        if point is not None:
            lines.extend(plan.render(point))
    config.stash[PLAN] = lines


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    plan_lines = config.stash.get(PLAN, [])
    if plan_lines:
        terminalreporter.write_sep("=", "infx plan")
        for line in plan_lines:
            terminalreporter.write_line(line)
    reasons = config.stash.get(REASONS, [])
    if reasons:
        terminalreporter.write_sep("-", "infx selection")
        for reason in reasons:
            terminalreporter.write_line(reason)
