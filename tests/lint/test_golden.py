from __future__ import annotations

import pytest

from pytest_infx.lint.builtin import get_rule

from .conftest import MakeRulesRepo
from .helpers import DFLASH_RECIPE, MIMO_CURVE, README, REFERENCE_CURVE, RUN, SGLANG_AGENTIC

CURVE = "golden/mimov2.6flash_dflash.yaml"
REFERENCE = "golden/dsv4_mtp.yaml"
REGISTRY = "golden/README.md"
DFLASH = "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"
SGLANG = "recipes/mimov2.6flash-fp4-b200-sglang-agentic.yaml"
GOLDEN_RULES = (
    "golden-format",
    "golden-registry",
    "golden-names",
    "golden-header",
    "golden-orphans",
    "golden-cells",
)
ROW_LINE = README.splitlines().index(next(r for r in README.splitlines() if "dsv4_mtp" in r)) + 1


def rendered(rules_repo: MakeRulesRepo, rule_id: str, changes: dict[str, str | None]) -> list[str]:
    ctx = rules_repo(changes)
    rule = get_rule(rule_id)
    assert rule.skip_reason(ctx) is None
    return [finding.render() for finding in rule.check(ctx)]


@pytest.mark.parametrize("rule_id", GOLDEN_RULES)
def test_passing_repo_passes_every_golden_rule(rules_repo: MakeRulesRepo, rule_id: str) -> None:
    assert rendered(rules_repo, rule_id, {}) == []


def test_golden_rules_skip_without_a_golden_folder(rules_repo: MakeRulesRepo) -> None:
    ctx = rules_repo({CURVE: None, REFERENCE: None, REGISTRY: None})
    for rule_id in GOLDEN_RULES:
        reason = get_rule(rule_id).skip_reason(ctx)
        assert reason is not None and reason.startswith("no golden folder"), rule_id


def test_a_truncated_curve_names_the_cells_its_recipe_needs(rules_repo: MakeRulesRepo) -> None:
    """Rule 3: the cells missing from the curve are named at the recipe's golden: line."""
    cut = MIMO_CURVE.split("  thinking_off:")[0]
    line = DFLASH_RECIPE.splitlines().index("  golden: mimov2.6flash_dflash") + 1
    found = rendered(rules_repo, "golden-cells", {CURVE: cut})
    assert len(found) == 1
    assert found[0].startswith(
        f"{DFLASH}:{line}: golden curve mimov2.6flash_dflash has no cell thinking_off k=1,"
        " thinking_off k=2, thinking_off k=3,"
    )
    assert "Record the missing cells with --snapshot-update" in found[0]


def test_format(rules_repo: MakeRulesRepo) -> None:
    bad = MIMO_CURVE.replace("3: 2.97", "3: 4.97")
    line = bad.splitlines().index("    3: 4.97") + 1
    assert rendered(rules_repo, "golden-format", {CURVE: bad}) == [
        f"{CURVE}:{line}: thinking_on k=3: AL 4.97 is outside [1, 4] (AL counts the bonus token,"
        " so 1 <= AL <= k+1). Fix the file; it must keep InferenceX's golden layout."
    ]


def test_registry_lists_every_file(rules_repo: MakeRulesRepo) -> None:
    extra = "golden/mimov2.6flash_dflash_gqa.yaml"
    assert rendered(rules_repo, "golden-registry", {extra: MIMO_CURVE}) == [
        f"{extra}: golden curve mimov2.6flash_dflash_gqa is not listed in golden/README.md."
        " Add a row: | Model | Method | [mimov2.6flash_dflash_gqa.yaml]"
        "(mimov2.6flash_dflash_gqa.yaml) | [<run id>](<run url>) |"
    ]


def test_registry_rows_name_existing_files(rules_repo: MakeRulesRepo) -> None:
    assert rendered(rules_repo, "golden-registry", {REFERENCE: None}) == [
        f"{REGISTRY}:{ROW_LINE}: the row links dsv4_mtp.yaml, but there is no such golden file."
        " Remove the row, or commit the curve it names."
    ]


def test_registry_duplicates_and_missing_table(rules_repo: MakeRulesRepo) -> None:
    row = README.splitlines()[ROW_LINE - 1]
    twice = README + row + "\n"
    found = rendered(rules_repo, "golden-registry", {REGISTRY: twice.replace("\n\n|", "\n|")})
    assert len(found) == 1 and "dsv4_mtp.yaml is listed twice" in found[0]
    found = rendered(rules_repo, "golden-registry", {REGISTRY: "# Curves\n"})
    assert found == [
        f"{REGISTRY}: no registry table; expected a header | Model | Method | Golden YAML |"
        " Source run |. The registry is a table | Model | Method | Golden YAML | Source run |."
    ]


def test_names_model_key(rules_repo: MakeRulesRepo) -> None:
    bad = MIMO_CURVE.replace("mimo-v2.6-flash-rl:", "XiaomiMiMo/MiMo-V2.6-Flash-RL:")
    line = bad.splitlines().index("XiaomiMiMo/MiMo-V2.6-Flash-RL:") + 1
    assert rendered(rules_repo, "golden-names", {CURVE: bad}) == [
        f"{CURVE}:{line}: model key 'XiaomiMiMo/MiMo-V2.6-Flash-RL' is not a lowercased model"
        " name. Use the lowercased basename of the served model path ('mimo-v2.6-flash-rl')."
    ]


def test_names_model_key_matches_the_recipes(rules_repo: MakeRulesRepo) -> None:
    bad = MIMO_CURVE.replace("mimo-v2.6-flash-rl:", "glm-5.2-fp8:")
    line = bad.splitlines().index("glm-5.2-fp8:") + 1
    assert rendered(rules_repo, "golden-names", {CURVE: bad}) == [
        f"{CURVE}:{line}: model key 'glm-5.2-fp8' is not the model {DFLASH} serves"
        " ('mimo-v2.6-flash-rl'). The model key is the lowercased basename of the served model"
        " path; check that the curve was measured on this model."
    ]


def test_an_agentic_recipe_may_read_a_curve_of_another_precision(
    rules_repo: MakeRulesRepo,
) -> None:
    served = SGLANG_AGENTIC.replace(
        "extends: _base/mimo-agentic.yaml\n",
        "extends: _base/mimo-agentic.yaml\nmodel:\n  hub-id: XiaomiMiMo/MiMo-V2.6-Flash-RL-NVFP4\n"
        "  served-name: mimo-v2.6-flash-rl-nvfp4\n",
    )
    assert served != SGLANG_AGENTIC
    assert rendered(rules_repo, "golden-names", {SGLANG: served}) == []


def test_names_start_with_the_model_prefix(rules_repo: MakeRulesRepo) -> None:
    name = "mimo_dflash"
    changes: dict[str, str | None] = {
        CURVE: None,
        f"golden/{name}.yaml": MIMO_CURVE,
        REGISTRY: README.replace("mimov2.6flash_dflash.yaml", f"{name}.yaml"),
        DFLASH: DFLASH_RECIPE.replace("golden: mimov2.6flash_dflash", f"golden: {name}"),
        SGLANG: SGLANG_AGENTIC.replace("golden: mimov2.6flash_dflash", f"golden: {name}"),
    }
    found = rendered(rules_repo, "golden-names", changes)
    assert len(found) == 1
    assert found[0] == (
        f"golden/{name}.yaml: curve {name} is used by {SGLANG}, whose model prefix is"
        f" 'mimov2.6flash', but its name does not start with it. Name it"
        " mimov2.6flash_<method>[_<variant>].yaml (and update the recipes)."
    )


def test_names_stem(rules_repo: MakeRulesRepo) -> None:
    found = rendered(rules_repo, "golden-names", {"golden/MiMo_DFlash.yaml": MIMO_CURVE})
    assert found == [
        "golden/MiMo_DFlash.yaml: curve name 'MiMo_DFlash' (the file stem) must match"
        " [a-z0-9_.-]+. Rename the file to <model-prefix>_<method>[_<variant>].yaml in lowercase."
    ]


def test_header_needs_the_source_run_on_line_1(rules_repo: MakeRulesRepo) -> None:
    bad = "\n".join(MIMO_CURVE.splitlines()[1:]) + "\n"
    assert rendered(rules_repo, "golden-header", {CURVE: bad}) == [
        f"{CURVE}:1: line 1 is not the source-run line. Start the file with '# Source GitHub"
        " Actions run: https://github.com/<org>/<repo>/actions/runs/<id>' (or '# Source: <where"
        " it was measured>')."
    ]


def test_header_run_url_and_readme_agree(rules_repo: MakeRulesRepo) -> None:
    bad = MIMO_CURVE.replace("runs/41346734342", "runs/41346734343")
    assert rendered(rules_repo, "golden-header", {CURVE: bad}) == [
        f"{CURVE}:1: source run {RUN}/41346734343 differs from the README row's"
        f" {RUN}/41346734342 ({REGISTRY}:6). Both must name the run that measured these values."
    ]
    bad = MIMO_CURVE.replace(f"{RUN}/41346734342", "TBD")
    assert rendered(rules_repo, "golden-header", {CURVE: bad}) == [
        f"{CURVE}:1: source run 'TBD' is not a GitHub Actions run URL. Write"
        " https://github.com/<org>/<repo>/actions/runs/<id>."
    ]


def test_header_accepts_a_local_source(rules_repo: MakeRulesRepo) -> None:
    local = MIMO_CURVE.replace(
        f"# Source GitHub Actions run: {RUN}/41346734342", "# Source: pytest -m speedbench on cpu"
    )
    assert rendered(rules_repo, "golden-header", {CURVE: local}) == []


def test_orphans(rules_repo: MakeRulesRepo) -> None:
    unmarked = REFERENCE_CURVE.replace("# reference: true\n", "")
    assert rendered(rules_repo, "golden-orphans", {REFERENCE: unmarked}) == [
        f"{REFERENCE}: no recipe uses golden curve dsv4_mtp and it is not marked as reference."
        " Point a recipe's golden: at it, add '# reference: true' to its header if it is kept"
        " for comparison, or remove it and its README row."
    ]


def test_a_recipe_that_does_not_load_still_uses_its_curve(rules_repo: MakeRulesRepo) -> None:
    broken = SGLANG_AGENTIC.replace("  points:", "  pointz:")
    changes: dict[str, str | None] = {SGLANG: broken, DFLASH: None}
    assert rendered(rules_repo, "golden-orphans", changes) == []
