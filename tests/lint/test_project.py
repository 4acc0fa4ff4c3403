from __future__ import annotations

from pathlib import Path

from pytest_infx.lint.context import build_context, default_base_ref
from pytest_infx.lint.findings import all_rules

ROOT = Path(__file__).resolve().parents[2]


def test_the_project_repository_passes_every_rule_that_can_run() -> None:
    ctx = build_context(ROOT, base_ref=default_base_ref(ROOT))
    ran = [rule for rule in all_rules() if rule.skip_reason(ctx) is None]
    assert {rule.id for rule in ran} >= {
        "changelog-schema",
        "comments-broad",
        "recipes-thinking",
        "recipes-agentic-golden",
        "golden-registry",
        "golden-orphans",
    }
    assert [finding.render() for rule in ran for finding in rule.check(ctx)] == []
