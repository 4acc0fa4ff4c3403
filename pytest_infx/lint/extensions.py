"""Lint rules from outside pytest-infx: an installed package's entry point, or a
``pytest_infx_lint_rules`` hook in a plugin or conftest.

A repository adds a rule of its own (a naming scheme, a file that must exist) without editing
pytest-infx. ``infx lint`` runs no pytest and so sees no hook: an installed package reaches it,
and ``pytest -m lint`` too, through the entry point group.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pytest_infx.lint.findings import Rule
from pytest_infx.providers import ExtensionPoint, Provided

GROUP = "pytest_infx_lint_rules"
HOOK = "pytest_infx_lint_rules"
BUILTIN = "pytest-infx itself"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What a selector can name: no space or comma (selectors are split on them) and nothing that
a pytest node id gives a meaning (``::``, ``[``, ``/``)."""


class RuleRegistrationError(ValueError):
    """A rule provider gave something unusable; the message names the provider."""


RULES = ExtensionPoint(
    group=GROUP,
    hook=HOOK,
    returns="a list of pytest_infx.lint.Rule",
    error=RuleRegistrationError,
    single=Rule,
    entry_point_provides=True,
)
"""Each entry point names a rule, a list of rules, or a function that takes no arguments and
returns them; each ``pytest_infx_lint_rules`` implementation returns them. Every offer is named
by where it is, so a bad one is reported as its own."""


def checked(provided: Iterable[Provided[object]], builtin: Sequence[Rule]) -> tuple[Rule, ...]:
    """The provided rules, to run after the built-in ones; something that is not a rule, or a
    rule id that is already taken, raises :class:`RuleRegistrationError` naming the provider."""
    owners = {rule.id: BUILTIN for rule in builtin}
    rules: list[Rule] = []
    for offer in provided:
        rule = offer.value
        if not isinstance(rule, Rule):
            raise RuleRegistrationError(
                f"{offer.source}: {rule!r} is not a lint rule; give"
                " pytest_infx.lint.Rule(id, description, check) values"
            )
        if not isinstance(rule.id, str) or not _ID.fullmatch(rule.id):
            raise RuleRegistrationError(
                f"{offer.source}: lint rule id {rule.id!r} is not usable; use letters, digits,"
                " '-', '_' and '.' (a family prefix ends at the first '-')"
            )
        if not callable(rule.check) or not callable(rule.skip_reason):
            raise RuleRegistrationError(
                f"{offer.source}: lint rule {rule.id!r} has no callable check; give a function"
                " from the lint context to a list of findings"
            )
        owner = owners.get(rule.id)
        if owner is not None:
            raise RuleRegistrationError(
                f"{offer.source}: lint rule id {rule.id!r} is already provided by {owner};"
                " give the rule another id"
            )
        owners[rule.id] = offer.source
        rules.append(rule)
    return tuple(rules)
