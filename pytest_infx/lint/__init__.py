"""Repository lint rules (``pytest -m lint``, ``infx lint``): changelog, comment, recipe and
golden registry rules. What a rule of another package needs is here; the built-in rules are
listed in :mod:`pytest_infx.lint.builtin`, imported only by a run that lints."""

from __future__ import annotations

from pytest_infx.lint.context import LintContext, build_context, default_base_ref
from pytest_infx.lint.findings import Finding, Rule

__all__ = [
    "Finding",
    "LintContext",
    "Rule",
    "build_context",
    "default_base_ref",
]
