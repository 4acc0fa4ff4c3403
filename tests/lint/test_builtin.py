from __future__ import annotations

import types

import pytest

import pytest_infx.lint.builtin as builtin
from pytest_infx.lint import comments, golden, recipes
from pytest_infx.lint.builtin import all_rules, get_rule, select_rules
from pytest_infx.lint.changelog import rules as changelog
from pytest_infx.lint.findings import UnknownRuleError, rule


def test_the_rule_modules_are_listed_in_report_order() -> None:
    assert builtin.RULE_MODULES == (changelog, comments, recipes, golden)
    families = list(dict.fromkeys(r.id.split("-", 1)[0] for r in all_rules()))
    assert families == ["changelog", "comments", "recipes", "golden"]


def test_registry_has_stable_unique_ids() -> None:
    ids = [registered.id for registered in all_rules()]
    assert len(ids) == len(set(ids))
    assert {
        "changelog-schema",
        "changelog-bytes",
        "changelog-append-only",
        "changelog-pr-link",
        "changelog-config-keys",
        "changelog-coverage",
        "comments-header",
        "comments-broad",
        "comments-describe",
    } <= set(ids)
    assert all(registered.description for registered in all_rules())


def test_duplicate_rule_id_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    again = types.ModuleType("infx_test_duplicate_rules")
    again.check = rule("changelog-schema", "again")(lambda ctx: [])  # type: ignore[attr-defined]
    monkeypatch.setattr(builtin, "RULE_MODULES", (*builtin.RULE_MODULES, again))
    with pytest.raises(ValueError, match="'changelog-schema' is registered twice"):
        all_rules()


def test_unknown_rule_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="comments-broad"):
        get_rule("nope")
    assert get_rule("comments-broad").id == "comments-broad"


def test_a_selector_is_a_rule_id_or_a_family_and_a_typo_is_an_error() -> None:
    assert [r.id for r in select_rules(["comments-broad"])] == ["comments-broad"]
    family = [r.id for r in select_rules(["comments"], ["comments-broad"])]
    assert family and all(i.startswith("comments-") and i != "comments-broad" for i in family)
    with pytest.raises(UnknownRuleError, match="'coments'"):
        select_rules(["coments"])
