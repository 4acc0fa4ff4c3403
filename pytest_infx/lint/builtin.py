"""The built-in lint rules: the modules that define them, listed here in the order their rules
are reported.

A rule travels on its check function (see :func:`pytest_infx.lint.findings.rule`), so listing a
module is all it takes to ship its rules, and a reader finds every rule module in one tuple.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from pytest_infx.lint import comments, golden, recipes
from pytest_infx.lint.changelog import rules as changelog
from pytest_infx.lint.context import LintContext
from pytest_infx.lint.findings import Finding, Rule, chosen, marked_rule

RULE_MODULES: tuple[ModuleType, ...] = (changelog, comments, recipes, golden)


def all_rules() -> tuple[Rule, ...]:
    """Every built-in rule, in a stable order (by module, then definition); an id given twice is
    an error naming it."""
    found: dict[str, Rule] = {}
    for module in RULE_MODULES:
        for value in vars(module).values():
            marked = marked_rule(value)
            if marked is None:
                continue
            known = found.setdefault(marked.id, marked)
            if known is not marked:
                raise ValueError(f"lint rule id {marked.id!r} is registered twice")
    return tuple(found.values())


def get_rule(rule_id: str) -> Rule:
    rules = {registered.id: registered for registered in all_rules()}
    try:
        return rules[rule_id]
    except KeyError:
        raise KeyError(
            f"unknown lint rule {rule_id!r}; known rules: {', '.join(sorted(rules))}"
        ) from None


def select_rules(
    select: Sequence[str] = (), ignore: Sequence[str] = (), extra: Sequence[Rule] = ()
) -> tuple[Rule, ...]:
    """The rules a repository chose among the built-in ones and ``extra`` (other packages'),
    as :func:`~pytest_infx.lint.findings.chosen` reads the selectors."""
    return chosen((*all_rules(), *extra), select, ignore)


def run_rules(ctx: LintContext, rules: tuple[Rule, ...] | None = None) -> list[Finding]:
    """Run ``rules`` (default: all) and return their findings in rule order."""
    found: list[Finding] = []
    for selected in all_rules() if rules is None else rules:
        found.extend(selected.run(ctx))
    return found
