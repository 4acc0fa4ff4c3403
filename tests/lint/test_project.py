from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.lint.context import build_context, default_base_ref
from pytest_infx.lint.findings import all_rules

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("audit", [True, False], ids=["history-audit", "pr-mode"])
def test_the_project_repository_passes_every_rule_that_can_run(audit: bool) -> None:
    ctx = build_context(ROOT, base_ref=default_base_ref(ROOT), audit=audit)
    ran = [rule for rule in all_rules() if rule.skip_reason(ctx) is None]
    assert {rule.id for rule in ran} >= {
        "changelog-schema",
        *(["comments-broad"] if audit else []),
        "recipes-thinking",
        "recipes-agentic-golden",
        "golden-registry",
        "golden-orphans",
    }
    assert [finding.render() for rule in ran for finding in rule.check(ctx)] == []
