"""``pytest -m lint``: one pytest item per lint rule.

Each rule is an item named by its stable id (``infx-lint::changelog-schema``), so ``-k
changelog`` selects the changelog rules and a failure report is exactly the rule's findings, with
no traceback. Items are made in ``pytest_collection_modifyitems`` rather than collected from a
file: lint reads the repository, not a test module. The context is built on the first item that
runs, once per process, so ``--collect-only`` and deselected rules cost nothing, and the recipe
diff against the base is only computed if the coverage rule runs.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_infx.plugin.options as options
from pytest_infx.files.git import toplevel as git_toplevel
from pytest_infx.files.store import PickleCache
from pytest_infx.lint.context import CHANGELOG_NAME, LintContext
from pytest_infx.lint.findings import Rule
from pytest_infx.plugin.markers import OWN_LINT, markexpr
from pytest_infx.plugin.state import RunState
from pytest_infx.settings import Settings

if TYPE_CHECKING:
    from pytest_infx.compat.pytest import TerminalRepr
    from pytest_infx.lint.session import LintSession

SUITE_NAME = "infx-lint"
MARKER = "lint"


class LintFailed(Exception):
    """Raised by a lint item; its text is every rendered finding of the rule."""


class LintWarning(UserWarning):
    """A warning-level rule's findings: in pytest's warnings summary, the item passing."""


def lint_root(config: pytest.Config) -> Path:
    """``--infx-lint-root`` / ini ``infx_lint_root`` (relative to the rootdir), else the
    rootdir when it holds the changelog, else the Git top level: a repository that keeps its
    pytest ini in a test folder (InferenceX's ``utils/``) lints the whole repository."""
    given = options.settings(config).lint.root
    if given is not None:
        return given
    if (config.rootpath / CHANGELOG_NAME).exists():
        return config.rootpath
    return git_toplevel(config.rootpath) or config.rootpath


def only_lint(config: pytest.Config) -> bool:
    """``-m lint`` alone: recipe points would only be collected to be deselected."""
    return markexpr(config) == MARKER


def wants_lint(config: pytest.Config) -> bool:
    """Whether this run gets the lint items: never when paths were given (they restrict
    collection) unless ``--infx-lint-root`` names what to lint; otherwise when ``-m`` mentions
    ``lint``, or the ini file opts in (``infx_lint = true``) so a repository's plain ``pytest``
    lints too."""
    settings = options.settings(config).lint
    if settings.root_option:
        return True
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return False
    return MARKER in markexpr(config) or settings.include


class LintSuite(pytest.Collector):
    """Parent of the lint items (node id ``infx-lint``); owns the one lint context."""

    def __init__(self, *, settings: Settings, lint: LintSession, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.lint = lint
        self.root = lint.request.root
        self.ran = 0
        self.skips: list[str] = []
        self._context: LintContext | None = None

    def collect(self) -> list[pytest.Item]:
        return [LintItem.from_parent(self, name=rule.id, rule=rule) for rule in self.lint.rules]

    def context(self) -> LintContext:
        if self._context is None:
            self._context = self._build()
        return self._context

    def _build(self) -> LintContext:
        cache = getattr(self.config, "cache", None)
        recipes = self.root / self.lint.request.recipes
        return self.lint.context(
            load_tree=_shared_tree(self.config, self.settings, recipes),
            load_engines=lambda: options.engines(self.config),
            store=PickleCache(cache.mkdir("infx-lint")) if cache is not None else None,
        )

    def summary(self) -> list[str]:
        """What a reader must know about the scope of this run: a missing base (every rule
        then judged the whole history, and the change-scoped ones were skipped)."""
        ctx = self._context
        if ctx is None:
            return []
        if self.ran and len(self.skips) == self.ran:
            return [
                f"ERROR: nothing to judge in {ctx.root}: every lint rule was skipped"
                f" ({'; '.join(dict.fromkeys(self.skips))}).",
                "Point the lint at the repository: ini infx_lint_root (relative to the rootdir)"
                " or --infx-lint-root.",
            ]
        if ctx.base_missing is not None:
            return [
                f"WARNING: base ref {ctx.base_missing!r} not found in {ctx.root}: the lint"
                " rules judged the whole history, not this change, and append-only, pr-link"
                " and coverage were skipped.",
                "Fetch the base (git fetch origin main; in CI check out with fetch-depth: 0)"
                " or name one with --infx-base REF.",
            ]
        if ctx.audit:
            return [f"history audit (--infx-lint-all): judged every entry and file in {ctx.root}"]
        if ctx.base_ref is None:
            return []
        return [f"PR mode: judged the change since {ctx.base_ref} in {ctx.root}"]


def _folder(rootdir: Path, root: Path, folder: Path) -> str:
    """A folder of the settings as the lint root sees it. The ini names it relative to the
    rootdir, as the benchmark run reads it (an ini in a test folder names
    ``../golden_al_distribution``); a folder that is not there but is under the lint root is
    read relative to the lint root."""
    found = folder.resolve()
    named = Path(os.path.relpath(found, rootdir.resolve()))
    if not found.exists() and (root / named).exists():
        return named.as_posix()
    try:
        return found.relative_to(root).as_posix()
    except ValueError:
        return str(found)


def _suite(config: pytest.Config) -> LintSuite | None:
    suite = RunState.of(config).suite
    return suite if isinstance(suite, LintSuite) else None


def summary_lines(config: pytest.Config) -> list[str]:
    """The lint suite's summary lines for the terminal (none when lint did not run)."""
    suite = _suite(config)
    return suite.summary() if suite is not None else []


def judged_nothing(config: pytest.Config) -> bool:
    """Whether lint rules ran and every one was skipped: the run judged nothing, which must
    not read as a pass."""
    suite = _suite(config)
    return suite is not None and suite.ran > 0 and len(suite.skips) == suite.ran


def stopped_by_collection(config: pytest.Config, errors: int) -> list[str]:
    """What to say when the host's collection errors kept every lint rule from running."""
    suite = _suite(config)
    if suite is None or suite.ran or not errors:
        return []
    return [
        f"ERROR: {errors} collection error{'s' if errors != 1 else ''} in this repository's"
        " own tests stopped the run before any lint rule ran.",
        f"To lint without collecting them, run: pytest -m {OWN_LINT}",
    ]


def _shared_tree(
    config: pytest.Config, settings: Settings, recipes: Path
) -> Callable[[], Any] | None:
    """The plugin's own recipe tree when it reads the same folder, so a run that collects
    recipes and lints them reads every file once."""
    if settings.recipes.resolve() != recipes.resolve():
        return None
    import pytest_infx.plugin.collect.files as collect

    return lambda: collect.tree(config)


class LintItem(pytest.Item):
    """One lint rule: passes, skips with the rule's reason, or fails with its findings."""

    def __init__(self, *, rule: Rule, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.add_marker(MARKER)

    @property
    def suite(self) -> LintSuite:
        assert isinstance(self.parent, LintSuite)
        return self.parent

    def runtest(self) -> None:
        suite = self.suite
        suite.ran += 1
        ctx = suite.context()
        reason = self.rule.skip(ctx)
        if reason is not None:
            suite.skips.append(reason)
            pytest.skip(f"{self.rule.id}: {reason}")
        findings = self.rule.findings(ctx)
        if findings:
            count = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
            lines = [f"{self.rule.id}: {self.rule.description} ({count})"]
            lines.extend(finding.render() for finding in findings)
            if self.rule.severity == "warning":
                # shown at the rule, not at this line of the plugin
                warnings.warn_explicit(LintWarning("\n".join(lines)), LintWarning, self.nodeid, 0)
                return
            raise LintFailed("\n".join(lines))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, LintFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.suite.root, None, self.nodeid


def lint_items(session: pytest.Session) -> list[pytest.Item]:
    """One item per lint rule under a fresh ``infx-lint`` suite; nothing is read until an
    item runs. An explicit ``--infx-base`` that does not exist is a usage error, not a skip."""
    # the rule modules cost as much as the rest of the plugin: imported by a run that lints
    from pytest_infx.lint.session import PYTEST, LintRequest, LintSetupError, open_session

    config = session.config
    settings = options.settings(config)
    lint = settings.lint
    root = lint_root(config)
    if not root.is_dir():
        raise pytest.UsageError(f"--infx-lint-root: {root} is not a folder")
    request = LintRequest(
        root,
        settings.env,
        PYTEST,
        base=lint.base,
        audit=lint.audit,
        pr=lint.pr,
        main=lint.main,
        select=lint.select,
        ignore=lint.ignore,
        changelog_only_entries=lint.changelog_only_entries,
        scenario_types=lint.scenario_types,
        recipes=_folder(settings.rootdir, root, settings.recipes),
        golden=_folder(settings.rootdir, root, settings.golden),
    )
    try:
        opened = open_session(
            request, config.pluginmanager.hook.pytest_infx_lint_rules.get_hookimpls()
        )
    except LintSetupError as exc:
        raise pytest.UsageError(str(exc)) from None
    suite = LintSuite.from_parent(
        session, name=SUITE_NAME, nodeid=SUITE_NAME, settings=settings, lint=opened
    )
    RunState.of(config).suite = suite
    items = suite.collect()
    # Reported like a collected file, so "collected N items" counts the rules.
    report = pytest.CollectReport(suite.nodeid, "passed", None, list(items))
    session.ihook.pytest_collectreport(report=report)
    return items
