from __future__ import annotations

import pytest

from pytest_infx.lint.builtin import get_rule

from .conftest import MakeRulesRepo
from .helpers import AGENTIC_BASE, DFLASH_RECIPE, SGLANG_AGENTIC, VLLM_DIGEST, line_of

DFLASH = "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"
SGLANG = "recipes/mimov2.6flash-fp4-b200-sglang-agentic.yaml"
BASE = "recipes/_base/mimo-agentic.yaml"
DIGEST = "@" + VLLM_DIGEST
RECIPE_RULES = (
    "recipes-load",
    "recipes-image-digest",
    "recipes-draft-length",
    "recipes-thinking",
    "recipes-attention-tp",
    "recipes-agentic-golden",
    "recipes-al-literals",
    "recipes-golden-uncommitted",
)


def rendered(rules_repo: MakeRulesRepo, rule_id: str, changes: dict[str, str | None]) -> list[str]:
    ctx = rules_repo(changes)
    rule = get_rule(rule_id)
    assert rule.skip_reason(ctx) is None
    return [finding.render() for finding in rule.check(ctx)]


@pytest.mark.parametrize("rule_id", RECIPE_RULES)
def test_passing_repo_passes_every_recipe_rule(rules_repo: MakeRulesRepo, rule_id: str) -> None:
    assert rendered(rules_repo, rule_id, {}) == []


def test_recipe_rules_skip_without_a_recipe_folder(rules_repo: MakeRulesRepo) -> None:
    ctx = rules_repo({DFLASH: None, SGLANG: None, BASE: None})
    assert not (ctx.root / "recipes").exists()
    reason = get_rule("recipes-thinking").skip_reason(ctx)
    assert reason is not None and reason.startswith("no recipe folder")


def test_load_reports_file_line_and_field(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace("  concurrency: 32", "  concurrency: 32\n  concurency: 8")
    found = rendered(rules_repo, "recipes-load", {DFLASH: bad})
    line = line_of(bad, "concurency: 8")
    assert found == [
        f"{DFLASH}:{line}: speedbench.concurency: unknown field. did you mean 'concurrency'?"
        " allowed here: speculative, draft-lengths, thinking-modes, sampling, concurrency,"
        " dataset, output-len, golden, tolerance, request-timeout, repeats"
    ]


def test_load_reports_an_override_that_does_not_validate(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE + "overrides:\n  - when: {draft-length: 7}\n    tp: zero\n"
    found = rendered(rules_repo, "recipes-load", {DFLASH: bad})
    assert len(found) == 1
    assert found[0].startswith(f"{DFLASH}:{line_of(bad, 'tp: zero')}: tp: Input should be")


def test_load_reports_an_override_that_matches_no_point(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE + "overrides:\n  - when: {draft-length: 9}\n    tp: 8\n"
    found = rendered(rules_repo, "recipes-load", {DFLASH: bad})
    assert len(found) == 1
    assert found[0].startswith(f"{DFLASH}:{line_of(bad, 'when: {draft-length: 9}')}:")
    assert "matches no point" in found[0]


def test_load_reports_an_owned_flag_set_by_an_override(rules_repo: MakeRulesRepo) -> None:
    bad = (
        DFLASH_RECIPE
        + "overrides:\n  - when: {draft-length: 7}\n"
        + "    engine: {args: {tensor_parallel_size: 8}}\n"
    )
    found = rendered(rules_repo, "recipes-load", {DFLASH: bad})
    assert len(found) == 1
    assert "tensor_parallel_size" in found[0]
    assert found[0].startswith(f"{DFLASH}:{line_of(bad, 'tensor_parallel_size: 8')}:")


def test_load_reports_an_engine_no_adapter_answers_for(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace("name: vllm", "name: vlm", 1)
    found = rendered(rules_repo, "recipes-load", {DFLASH: bad})
    assert found == [
        f"{DFLASH}:{line_of(bad, 'name: vlm')}: engine.name: no engine 'vlm'; did you mean"
        " 'vllm'? engines: vllm, sglang, atom, trtllm. name one of those engines, or install"
        " the package that provides its adapter"
    ]


def test_image_digest(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace(DIGEST, "")
    assert rendered(rules_repo, "recipes-image-digest", {DFLASH: bad}) == [
        f"{DFLASH}:{line_of(bad, 'image:')}: engine.image: image 'vllm/vllm-openai:v0.31.0' of a"
        " b300 recipe is not pinned by digest; append @sha256:<digest> (a tag can move to a"
        " different build under the same name), or, where no digest was ever published, say why"
        " in engine.image-unpinned"
    ]


def test_image_run_by_its_tag_says_why(rules_repo: MakeRulesRepo) -> None:
    tagged = DFLASH_RECIPE.replace(DIGEST, "")
    why = tagged.replace(
        "vllm/vllm-openai:v0.31.0\n",
        "vllm/vllm-openai:v0.31.0\n  image-unpinned: the collector runs a nightly by its tag\n",
    )
    assert why != tagged
    assert rendered(rules_repo, "recipes-image-digest", {DFLASH: why}) == []
    pinned = DFLASH_RECIPE.replace(
        f"{DIGEST}\n", f"{DIGEST}\n  image-unpinned: the collector runs a nightly by its tag\n"
    )
    assert pinned != DFLASH_RECIPE
    found = rendered(rules_repo, "recipes-load", {DFLASH: pinned})
    assert len(found) == 1
    assert "a pinned image: remove 'image-unpinned'" in found[0]


def test_image_digest_not_required_on_cpu(rules_repo: MakeRulesRepo) -> None:
    cpu = DFLASH_RECIPE.replace("runner: b300", "runner: cpu").replace(DIGEST, "")
    assert rendered(rules_repo, "recipes-image-digest", {DFLASH: cpu}) == []


def test_draft_length_beyond_dflash_block(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace("[1, 2, 3, 4, 5, 6, 7]", "[1, 2, 3, 4, 5, 6, 7, 8]")
    assert rendered(rules_repo, "recipes-draft-length", {DFLASH: bad}) == [
        f"{DFLASH}:{line_of(bad, 'draft-lengths')}: speedbench.draft-lengths[7]: draft length 8"
        " is not valid for dflash with block size 8: it drafts 1 to 7 tokens; use draft lengths"
        " 1 to 7"
    ]


def test_draft_length_needs_the_dflash_block_size(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace("    block-size: 8\n", "")
    found = rendered(rules_repo, "recipes-draft-length", {DFLASH: bad})
    assert len(found) == 7
    assert "the recipe does not record the block size; add speculative.block-size" in found[0]


def test_draft_length_of_an_agentic_point(rules_repo: MakeRulesRepo) -> None:
    bad = SGLANG_AGENTIC.replace("draft-length: 3", "draft-length: 9")
    found = rendered(rules_repo, "recipes-draft-length", {SGLANG: bad})
    assert found == [
        f"{SGLANG}:{line_of(bad, 'draft-length: 9')}: agentic.speculative.draft-length: draft"
        " length 9 is not valid for dflash with block size 8: it drafts 1 to 7 tokens; use draft"
        " lengths 1 to 7"
    ]


def test_thinking_on_kwargs_for_the_wrong_family(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace(
        "thinking_on: {enable_thinking: true}", "thinking_on: {thinking: true}"
    )
    assert rendered(rules_repo, "recipes-thinking", {DFLASH: bad}) == [
        f"{DFLASH}:{line_of(bad, 'thinking_on:')}: speedbench.thinking-modes.thinking_on:"
        ' {"thinking": true} does not turn thinking on for mimo models; use'
        ' {"enable_thinking": true}'
    ]


def test_thinking_off_kwargs_that_turn_it_on(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE.replace("{enable_thinking: false}", "{enable_thinking: true}")
    assert rendered(rules_repo, "recipes-thinking", {DFLASH: bad}) == [
        f"{DFLASH}:{line_of(bad, 'thinking_off:')}: speedbench.thinking-modes.thinking_off:"
        ' {"enable_thinking": true} turns thinking on for mimo models; use'
        ' {"enable_thinking": false}'
    ]


def test_thinking_set_by_an_override_is_located_there(rules_repo: MakeRulesRepo) -> None:
    bad = DFLASH_RECIPE + (
        "overrides:\n"
        "  - when: {draft-length: 7}\n"
        "    speedbench:\n"
        "      thinking-modes:\n"
        "        thinking_on: {enable_thinking: false}\n"
    )
    found = rendered(rules_repo, "recipes-thinking", {DFLASH: bad})
    line = line_of(bad, "thinking_on: {enable_thinking: false}")
    assert found == [
        f'{DFLASH}:{line}: speedbench.thinking-modes.thinking_on: {{"enable_thinking": false}}'
        ' does not turn thinking on for mimo models; use {"enable_thinking": true}'
    ]


def test_attention_tp_must_divide_kv_heads_on_sglang(rules_repo: MakeRulesRepo) -> None:
    bad = SGLANG_AGENTIC.replace("    - tp: 2\n", "    - tp: 6\n")
    assert rendered(rules_repo, "recipes-attention-tp", {SGLANG: bad}) == [
        f"{SGLANG}:{line_of(bad, 'tp: 6')}: agentic.points[1].tp: sglang TP 6 neither divides"
        " the model's 4 KV heads nor is a multiple of them; use an attention TP in 1, 2, 4 or a"
        " multiple of 4"
    ]


def test_attention_tp_may_replicate_the_kv_heads(rules_repo: MakeRulesRepo) -> None:
    """SGLang loads a model at a TP that is a multiple of its KV heads (QKVParallelLinear keeps
    TP / heads replicas of each head): InferenceX serves Qwen3.5's 2 KV heads at TP 4 and 8."""
    wide = SGLANG_AGENTIC.replace("    - tp: 2\n", "    - tp: 8\n")
    assert rendered(rules_repo, "recipes-attention-tp", {SGLANG: wide}) == []


def test_attention_tp_of_one_needs_no_kv_heads(rules_repo: MakeRulesRepo) -> None:
    base = AGENTIC_BASE.replace("  kv-heads: 4\n", "")
    dp = SGLANG_AGENTIC.replace(
        "    mem-fraction-static: 0.85\n",
        "    mem-fraction-static: 0.85\n    enable-dp-attention: true\n    dp: 4\n",
    ).replace("    - tp: 2\n      concurrency: [1, 4]\n", "")
    assert rendered(rules_repo, "recipes-attention-tp", {BASE: base, SGLANG: dp}) == []


def test_attention_tp_needs_the_kv_heads(rules_repo: MakeRulesRepo) -> None:
    base = AGENTIC_BASE.replace("  kv-heads: 4\n", "")
    found = rendered(rules_repo, "recipes-attention-tp", {BASE: base})
    assert found == [
        f"{BASE}:1: model: sglang shards attention over TP, which must divide the model's KV"
        " heads, but the recipe does not record them; add model.kv-heads (num_key_value_heads in"
        " the model's config.json)"
    ]


def test_attention_tp_with_dp_attention_and_on_vllm(rules_repo: MakeRulesRepo) -> None:
    dp = SGLANG_AGENTIC.replace("    - tp: 2\n", "    - tp: 6\n").replace(
        "    mem-fraction-static: 0.85\n",
        "    mem-fraction-static: 0.85\n    enable-dp-attention: true\n    dp: 3\n",
    )
    assert rendered(rules_repo, "recipes-attention-tp", {SGLANG: dp}) == []
    newer = SGLANG_AGENTIC.replace("    - tp: 2\n", "    - tp: 6\n").replace(
        "    mem-fraction-static: 0.85\n", "    mem-fraction-static: 0.85\n    attn-dp-size: 3\n"
    )
    assert rendered(rules_repo, "recipes-attention-tp", {SGLANG: newer})
    assert (
        rendered(rules_repo, "recipes-attention-tp", {SGLANG: newer.replace("0.5.21", "0.5.23")})
        == []
    )
    vllm = DFLASH_RECIPE.replace("tp: 4", "tp: 8")
    assert rendered(rules_repo, "recipes-attention-tp", {DFLASH: vllm}) == []


def test_agentic_golden_missing(rules_repo: MakeRulesRepo) -> None:
    bad = SGLANG_AGENTIC.replace("golden: mimov2.6flash_dflash", "golden: mimov2.6flash_mtp")
    assert rendered(rules_repo, "recipes-agentic-golden", {SGLANG: bad}) == [
        f"{SGLANG}:{line_of(bad, 'golden:')}: agentic.speculative.golden: golden curve"
        " 'mimov2.6flash_mtp' does not exist; an agentic run with speculative decoding forces the"
        " golden AL and cannot launch without it; commit golden/mimov2.6flash_mtp.yaml (pytest -m"
        " speedbench --snapshot-update records it) or name an existing curve"
    ]


def test_a_speedbench_recipe_naming_an_uncommitted_curve_is_a_warning(
    rules_repo: MakeRulesRepo,
) -> None:
    bad = DFLASH_RECIPE.replace("golden: mimov2.6flash_dflash", "golden: mimov2.6flash_mtp")
    assert bad != DFLASH_RECIPE
    assert get_rule("recipes-golden-uncommitted").severity == "warning"
    [finding] = rendered(rules_repo, "recipes-golden-uncommitted", {DFLASH: bad})
    assert finding.startswith(
        f"{DFLASH}:{line_of(bad, 'golden:')}: speedbench.golden: no committed golden curve"
        " 'mimov2.6flash_mtp'; its "
    )
    assert "--snapshot-update" in finding and "SPEED-Bench dataset" in finding


def test_a_fixed_seq_len_block_with_speculative_decoding_needs_its_golden_curve_too(
    rules_repo: MakeRulesRepo,
) -> None:
    fixed = (
        SGLANG_AGENTIC.replace(
            "agentic:\n  points:\n", "agentic: null\nfixed-seq-len:\n  points:\n"
        )
        .replace("    - tp: 4\n", "    - tp: 4\n      isl: 1024\n      osl: 1024\n")
        .replace("    - tp: 2\n", "    - tp: 2\n      isl: 1024\n      osl: 1024\n")
    )
    bad = fixed.replace("golden: mimov2.6flash_dflash", "golden: mimov2.6flash_mtp")
    assert rendered(rules_repo, "recipes-agentic-golden", {SGLANG: bad}) == [
        f"{SGLANG}:{line_of(bad, 'golden:')}: fixed-seq-len.speculative.golden: golden curve"
        " 'mimov2.6flash_mtp' does not exist; a fixed-seq-len run with speculative decoding forces"
        " the golden AL and cannot launch without it; commit golden/mimov2.6flash_mtp.yaml"
        " (pytest -m speedbench --snapshot-update records it) or name an existing curve"
    ]
    assert rendered(rules_repo, "recipes-agentic-golden", {SGLANG: fixed}) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("draft-length: 8", "no thinking_on AL for draft length 8 (it has: 1, 2, 3, 5, 6, 7)"),
        ("draft-length: 4", "no thinking_on AL for draft length 4 (it has: 1, 2, 3, 5, 6, 7)"),
    ],
)
def test_agentic_golden_must_cover_the_draft_length(
    rules_repo: MakeRulesRepo, change: str, expected: str
) -> None:
    bad = SGLANG_AGENTIC.replace("draft-length: 3", change)
    found = rendered(rules_repo, "recipes-agentic-golden", {SGLANG: bad})
    assert found == [
        f"{SGLANG}:{line_of(bad, change)}: agentic.speculative.draft-length: golden curve"
        f" 'mimov2.6flash_dflash' has {expected}; pick a draft length the curve covers, or"
        " measure that cell first"
    ]


def test_agentic_golden_mode(rules_repo: MakeRulesRepo) -> None:
    off = SGLANG_AGENTIC.replace("draft-length: 3", "draft-length: 2\n    thinking: thinking_off")
    assert rendered(rules_repo, "recipes-agentic-golden", {SGLANG: off}) == []
    bad = off.replace("draft-length: 2", "draft-length: 8")
    assert "has no thinking_off AL for draft length 8 (it has: 1, 2, 3, 4, 5, 6, 7)" in "".join(
        rendered(rules_repo, "recipes-agentic-golden", {SGLANG: bad})
    )


def test_al_literals(rules_repo: MakeRulesRepo) -> None:
    bad = SGLANG_AGENTIC.replace(
        "    mem-fraction-static: 0.85\n",
        "    mem-fraction-static: 0.85\n  env:\n    SGLANG_SIMULATE_ACC_LEN: '2.97'\n",
    )
    assert rendered(rules_repo, "recipes-al-literals", {SGLANG: bad}) == [
        f"{SGLANG}:{line_of(bad, 'SGLANG_SIMULATE')}: SGLANG_SIMULATE_ACC_LEN: hand-written"
        " acceptance-length setting \"SGLANG_SIMULATE_ACC_LEN: '2.97'\"; remove it: the AL comes"
        " from the golden curve named by the recipe (agentic.speculative.golden), and the engine"
        " flag is set at launch"
    ]


def test_al_literals_in_bases_and_engine_args(rules_repo: MakeRulesRepo) -> None:
    base = AGENTIC_BASE + "  # synthetic_acceptance_length is set at launch\n"
    recipe = DFLASH_RECIPE.replace(
        "    reasoning-parser: mimo\n",
        "    reasoning-parser: mimo\n"
        "    speculative-config: '{\"synthetic_acceptance_length\": 3}'\n",
    )
    found = rendered(rules_repo, "recipes-al-literals", {BASE: base, DFLASH: recipe})
    assert [f.split(": ")[0] for f in found] == [
        f"{DFLASH}:{line_of(recipe, 'speculative-config')}"
    ]


def test_a_stated_difference_naming_an_acceptance_setting_sets_nothing(
    rules_repo: MakeRulesRepo,
) -> None:
    stated = SGLANG_AGENTIC + (
        "differences:\n"
        '- {variable: SGLANG_SIMULATE_ACC_LEN, inferencex: "*", ours: null, reason: owned,'
        ' evidence: "set at launch from the golden curve"}\n'
    )
    assert rendered(rules_repo, "recipes-al-literals", {SGLANG: stated}) == []
    after = stated + "engine:\n  env:\n    SGLANG_SIMULATE_ACC_LEN: '2.97'\n"
    found = rendered(rules_repo, "recipes-al-literals", {SGLANG: after})
    assert [f.split(": ")[0] for f in found] == [f"{SGLANG}:{len(after.splitlines())}"]


def test_load_accepts_an_override_on_a_variant_and_reports_an_unknown_one(
    rules_repo: MakeRulesRepo,
) -> None:
    arm = SGLANG_AGENTIC.replace(
        "  speculative:",
        "    - tp: 4\n      variant: hicache\n      concurrency: [8]\n  speculative:",
    )
    good = arm + "overrides:\n  - when: {variant: hicache}\n    engine: {args: {page-size: 64}}\n"
    assert rendered(rules_repo, "recipes-load", {SGLANG: good}) == []
    bad = good.replace("when: {variant: hicache}", "when: {variant: hicahce}")
    found = rendered(rules_repo, "recipes-load", {SGLANG: bad})
    assert len(found) == 1 and "matches no point" in found[0]
    assert "variant: hicache" in found[0]
