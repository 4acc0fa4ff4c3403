"""Lint findings and the rule registry.

A rule is a plain function from a :class:`~pytest_infx.lint.context.LintContext` to findings, so
the pytest wiring (one item per rule), the ``infx lint`` command and the tests all call the same
code. Rule ids are stable: they are pytest item ids (``pytest -m lint -k changelog``) and what a
reader types to re-run one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pytest_infx.files.textio import InputFileError

if TYPE_CHECKING:
    from pytest_infx.lint.context import LintContext

_EXCERPT_LIMIT = 6


@dataclass(frozen=True)
class Finding:
    """One violation: where it is, what is wrong and what to do.

    ``line`` is 1-based; ``entry`` is the 0-based index of a changelog entry (its position in the
    YAML list), so it can be used directly on the parsed list; it is shown 1-based, as a person
    counts entries and as InferenceX's validator prints them. ``excerpt`` holds the offending
    source lines, already prefixed with their numbers.
    """

    rule: str
    path: str
    line: int | None
    entry: int | None
    message: str
    hint: str
    excerpt: tuple[str, ...] = ()

    def location(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return where if self.entry is None else f"{where} (entry {self.entry + 1})"

    def render(self) -> str:
        text = f"{self.location()}: {self.message}"
        if self.hint:
            text = f"{text} {self.hint}"
        shown = self.excerpt[:_EXCERPT_LIMIT]
        lines = [text, *(f"    {quoted}" for quoted in shown)]
        if len(self.excerpt) > len(shown):
            lines.append(f"    ... ({len(self.excerpt) - len(shown)} more lines)")
        return "\n".join(lines)


@dataclass(frozen=True)
class Reporter:
    """One rule's findings about one file: the rule id and the path are given once, so a check
    that finds several problems in a file writes only what differs between them."""

    rule: str
    path: str

    def __call__(self, message: str, hint: str, line: int | None = None) -> Finding:
        return Finding(self.rule, self.path, line, None, message, hint)


def quote_numbered(numbered: Sequence[tuple[int, str]]) -> tuple[str, ...]:
    """Quote ``(line number, text)`` pairs the way findings show them (``12 | text``)."""
    width = max((len(str(number)) for number, _ in numbered), default=1)
    return tuple(f"{number:>{width}} | {text}" for number, text in numbered)


def quote_lines(lines: Sequence[str], first: int) -> tuple[str, ...]:
    """Quote consecutive source lines starting at line ``first``."""
    return quote_numbered([(first + offset, text) for offset, text in enumerate(lines)])


Check = Callable[["LintContext"], list[Finding]]
Severity = Literal["error", "warning"]
SkipReason = Callable[["LintContext"], str | None]


def _never_skip(ctx: LintContext) -> str | None:
    return None


@dataclass(frozen=True)
class Rule:
    """A named check. ``skip_reason`` says why the rule cannot run on this context (no base ref,
    recipe keys unknown), so the caller can report a skip instead of a silent pass."""

    id: str
    description: str
    check: Check
    skip_reason: SkipReason = _never_skip
    severity: Severity = "error"
    """``warning``: its findings are shown, never failed on; for what a repository may ship on
    purpose but a reader should see (a curve the first run records)."""

    def skip(self, ctx: LintContext) -> str | None:
        """Why the rule cannot run; an input it cannot read is for :meth:`findings` to say."""
        try:
            return self.skip_reason(ctx)
        except InputFileError:
            return None

    def findings(self, ctx: LintContext) -> list[Finding]:
        """The rule's findings; an input file it cannot read (a pipe, a device, a folder, a
        link loop, a file over the size limit) is one finding at that file, not a traceback."""
        try:
            return self.check(ctx)
        except InputFileError as exc:
            where = ctx.relpath(Path(exc.filename))
            return [Finding(self.id, where, None, None, exc.strerror or str(exc), "")]

    def run(self, ctx: LintContext) -> list[Finding]:
        if self.skip(ctx) is not None:
            return []
        return self.findings(ctx)


_RULE_ATTRIBUTE = "__infx_lint_rule__"


def rule(
    rule_id: str,
    description: str,
    *,
    skip_reason: SkipReason = _never_skip,
    severity: Severity = "error",
) -> Callable[[Check], Check]:
    """Mark ``check`` as the rule ``rule_id``: the rule travels on the function itself, and
    :func:`pytest_infx.lint.builtin.all_rules` reads it from the rule modules, so no registry
    is filled as a side effect of importing them (pytester imports a module again, which used
    to register it twice)."""

    def decorate(check: Check) -> Check:
        setattr(check, _RULE_ATTRIBUTE, Rule(rule_id, description, check, skip_reason, severity))
        return check

    return decorate


def marked_rule(value: object) -> Rule | None:
    """The rule a module attribute was marked as by :func:`rule`; ``None`` for anything else
    (an imported helper, or a function that only carries another's mark)."""
    marked = getattr(value, _RULE_ATTRIBUTE, None)
    if not isinstance(marked, Rule) or marked.check is not value:
        return None
    return marked


class UnknownRuleError(ValueError):
    """A rule id in a selection that names no rule and no family of rules."""


def _names(selector: str, chosen: Rule) -> bool:
    """A selector is a rule id or a family prefix (``changelog`` names ``changelog-*``), as
    ruff reads its ``select`` codes."""
    return chosen.id == selector or chosen.id.startswith(f"{selector}-")


def selectors(values: Sequence[str]) -> tuple[str, ...]:
    """Selectors as a user writes them: whitespace- or comma-separated."""
    return tuple(part for value in values for part in value.replace(",", " ").split())


def chosen(
    rules: Sequence[Rule], select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> tuple[Rule, ...]:
    """The ``rules`` that ``select`` names (all when empty), less those ``ignore`` names; a
    selector that names no rule is an error, so a typo never silently turns a rule off."""
    unknown = [s for s in (*select, *ignore) if not any(_names(s, r) for r in rules)]
    if unknown:
        families = sorted({r.id.split("-", 1)[0] for r in rules})
        raise UnknownRuleError(
            f"unknown lint rule id{'s' if len(unknown) > 1 else ''}"
            f" {', '.join(repr(u) for u in unknown)}; a selector is a rule id"
            f" ({', '.join(r.id for r in rules)}) or a family ({', '.join(families)})"
        )
    return tuple(
        r
        for r in rules
        if (not select or any(_names(s, r) for s in select))
        and not any(_names(s, r) for s in ignore)
    )
