"""One lint run, however it is started.

``pytest -m lint`` (one item per rule) and ``infx lint`` (one line per rule) are two front
doors to the same run: both build it here from a :class:`LintRequest`, so the rules, the
folders, the base and their defaults are the same, and a repository is judged the same way
whichever door a person or a CI job uses. A front door keeps only its presentation and the
names its user typed (:class:`Spelling`), which its errors quote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.files.git import ref_exists
from pytest_infx.lint.builtin import all_rules, select_rules
from pytest_infx.lint.context import (
    DEFAULT_BASE_REF,
    GOLDEN_DIR,
    RECIPE_DIRS,
    SCENARIO_TYPES,
    ChangelogOnly,
    LintContext,
    build_context,
)
from pytest_infx.lint.extensions import RULES, RuleRegistrationError, checked
from pytest_infx.lint.findings import Rule, UnknownRuleError
from pytest_infx.lint.scope import PullRequest, pull_request_from_env
from pytest_infx.settings import DEFAULT_CHANGELOG_ONLY_ENTRIES, Environment

if TYPE_CHECKING:
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.files.store import PickleCache
    from pytest_infx.providers import HookImpl
    from pytest_infx.recipes.loader import Tree


@dataclass(frozen=True)
class Spelling:
    """How a front door names the inputs an error is about."""

    base: str
    select: str
    changelog_only: str


PYTEST = Spelling(
    base="--infx-base",
    select="ini infx_lint_select / infx_lint_ignore",
    changelog_only="ini infx_changelog_only_entries",
)
CLI = Spelling(
    base="--base", select="--select / --ignore", changelog_only="--changelog-only-entries"
)


class LintSetupError(ValueError):
    """A lint input that cannot work (a base that does not exist, an unknown rule, a bad
    provider); the message names the input as the front door's user typed it."""


@dataclass(frozen=True)
class LintRequest:
    """What a lint run judges, as the user gave it. ``base`` is the ref given, ``None`` for the
    default ``origin/main``, which may be missing (the run then judges the whole history and
    says so). ``recipes`` and ``golden`` are folders relative to ``root``."""

    root: Path
    env: Environment
    spelling: Spelling
    base: str | None = None
    audit: bool = False
    pr: int | None = None
    main: bool = False
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    changelog_only_entries: str = DEFAULT_CHANGELOG_ONLY_ENTRIES
    scenario_types: tuple[str, ...] = ()
    recipes: str = RECIPE_DIRS[0]
    golden: str = GOLDEN_DIR

    def pull(self) -> PullRequest:
        """Where the change goes: ``--main``, else the PR number given, else GitHub's."""
        if self.main:
            return PullRequest(main=True)
        if self.pr is not None:
            return PullRequest(number=self.pr)
        return pull_request_from_env(self.env)


@dataclass(frozen=True)
class LintSession:
    """A checked request and the rules it runs; the context is built on demand, so choosing
    and listing the rules reads nothing of the repository."""

    request: LintRequest
    rules: tuple[Rule, ...]
    changelog_only: ChangelogOnly

    def context(
        self,
        *,
        load_tree: Callable[[], Tree] | None = None,
        load_engines: Callable[[], EngineRegistry] | None = None,
        store: PickleCache | None = None,
    ) -> LintContext:
        """What the rules look at; ``load_tree`` and ``load_engines`` let pytest share the
        recipe tree and engine registry it already holds, ``store`` keeps derived values
        between runs."""
        request = self.request
        return build_context(
            request.root,
            base_ref=request.base if request.base is not None else DEFAULT_BASE_REF,
            recipe_dirs=(request.recipes,),
            golden_dir=request.golden,
            load_tree=load_tree,
            load_engines=load_engines,
            store=store,
            base_optional=request.base is None,
            audit=request.audit,
            pull=request.pull(),
            scenario_types=request.scenario_types or SCENARIO_TYPES,
            changelog_only=self.changelog_only,
        )


def open_session(request: LintRequest, hooks: Sequence[HookImpl] = ()) -> LintSession:
    """Check ``request`` and choose its rules among the built-in ones, the installed
    packages' and the pytest run's ``hooks``; :class:`LintSetupError` names what cannot work."""
    spelling = request.spelling
    if request.base is not None and not ref_exists(request.root, request.base):
        raise LintSetupError(
            f"{spelling.base}: git ref {request.base!r} does not exist in {request.root};"
            " fetch it or name another"
        )
    try:
        extra = checked(RULES.provided(hooks), all_rules())
    except RuleRegistrationError as exc:
        raise LintSetupError(str(exc)) from None
    try:
        rules = select_rules(request.select, request.ignore, extra)
    except UnknownRuleError as exc:
        raise LintSetupError(f"{spelling.select}: {exc}") from None
    try:
        changelog_only = ChangelogOnly.parse(request.changelog_only_entries)
    except ValueError as exc:
        raise LintSetupError(f"{spelling.changelog_only}: {exc}") from None
    return LintSession(request, rules, changelog_only)
