"""Repository lint rules (``pytest -m lint``, ``infx lint``): changelog, comment, recipe and
golden registry rules."""

from __future__ import annotations

from pytest_infx.lint.context import LintContext, build_context, default_base_ref
from pytest_infx.lint.findings import Finding, Rule, all_rules, get_rule, run_rules

__all__ = [
    "Finding",
    "LintContext",
    "Rule",
    "all_rules",
    "build_context",
    "default_base_ref",
    "get_rule",
    "run_rules",
]
