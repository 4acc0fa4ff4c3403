from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.lint.builtin import all_rules, get_rule
from pytest_infx.lint.context import build_context, default_base_ref

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
    errors = [rule for rule in ran if rule.severity == "error"]
    assert [finding.render() for rule in errors for finding in rule.check(ctx)] == []


def test_the_shipped_recipes_whose_golden_curve_is_not_committed_are_named() -> None:
    """A warning, not a failure: these recipes name the curve their first run records."""
    ctx = build_context(ROOT, base_ref=default_base_ref(ROOT), audit=True)
    rule = get_rule("recipes-golden-uncommitted")
    assert rule.severity == "warning"
    found = {(f.path, f.message.split("'")[1]) for f in rule.check(ctx)}
    assert found == {
        ("recipes/dsr1-fp4-b300-vllm.yaml", "dsr1_mtp"),
        ("recipes/glm5-fp4-b300-vllm.yaml", "glm5-nvfp4_mtp"),
        (
            "recipes/dsv4dsparkprob-fp4-b300-vllm.yaml",
            "dsv4-pro-0813-dspark_probabilistic_sample_method",
        ),
    }
