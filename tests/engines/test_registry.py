"""The registry: one adapter per engine name, and what it answers for engines it cannot launch."""

from __future__ import annotations

import pytest

from pytest_infx.engines.registry import (
    ENGINES,
    installed,
)


def test_the_engine_names_are_the_registry_s() -> None:
    assert ENGINES == ("vllm", "sglang", "atom", "trtllm")
    assert installed().engine_names() == ENGINES
    assert installed().engine_rules().engines == ENGINES


def test_vllm_gets_speculative_config_keys() -> None:
    setting = installed().synthetic_setting("vllm", 3.24, 4)
    assert setting.spec_config == {
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 3.24,
    }
    assert setting.env == {} and setting.argv == ()


def test_sglang_gets_the_simulation_env() -> None:
    setting = installed().synthetic_setting("sglang", 3.24, 4)
    assert setting.env == {
        "SGLANG_SIMULATE_ACC_LEN": "3.24",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
    }
    assert setting.spec_config == {}


@pytest.mark.parametrize(
    ("al", "value", "warns"),
    [(3.24, "2.24", True), (3.0, "2", False), (1.0, "0", False), (5.0, "4", False)],
)
def test_trtllm_counts_draft_tokens_only_so_it_gets_al_minus_one(
    al: float, value: str, warns: bool
) -> None:
    setting = installed().synthetic_setting("trtllm", al, 4)
    assert setting.env == {"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": value}
    assert bool(setting.notes) == warns
    if warns:
        assert "int()s" in setting.notes[0]


def test_atom_gets_a_command_line_flag() -> None:
    setting = installed().synthetic_setting("atom", 2.5, 3)
    assert setting.argv == ("--spec-decode-acceptance-length", "2.5")


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "atom"])
@pytest.mark.parametrize("al", [0.99, 5.01])
def test_an_al_outside_one_to_k_plus_one_is_refused(engine: str, al: float) -> None:
    with pytest.raises(ValueError, match=r"must lie in \[1, 5\] for k=4"):
        installed().synthetic_setting(engine, al, 4)


def test_an_unknown_engine_is_named() -> None:
    with pytest.raises(ValueError, match="unknown engine 'tgi'; use one of vllm, sglang"):
        installed().synthetic_setting("tgi", 2.0, 2)


def test_the_synthetic_knobs_are_the_adapters_own_names() -> None:
    assert installed().synthetic_knobs() == (
        "SGLANG_SIMULATE_ACC_LEN",
        "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
        "spec-decode-acceptance-length",
        "synthetic_acceptance_length",
    )


def test_every_flag_an_adapter_sets_itself_is_owned() -> None:
    """The owned-flag table (read at load, below the adapters) covers every flag the built-in
    adapters put on a command line from the recipe's own fields, so no recipe arg can give the
    server a second value for one of them."""
    from dataclasses import replace
    from pathlib import Path

    from pytest_infx.engines.registry import BUILTIN, symbolic_paths
    from pytest_infx.engines.spec import SyntheticSetting
    from pytest_infx.recipes.loader import load_tree
    from pytest_infx.recipes.owned import canonical, owner
    from pytest_infx.recipes.points import expand_all

    recipe_may_set = {"per-request-spec-decode-metrics", "extra-llm-api-options"}
    tree = load_tree(Path(__file__).resolve().parents[2] / "recipes")
    points = [p for p in expand_all(tree) if p.recipe.engine.name in BUILTIN]
    as_sglang = [
        replace(
            p,
            recipe=p.recipe.model_copy(
                update={"engine": p.recipe.engine.model_copy(update={"name": "sglang"})}
            ),
        )
        for p in points
        if p.kind == "speedbench" and not p.recipe.engine.embedded
    ]
    seen = set()
    for point in [*points, *as_sglang]:
        adapter = BUILTIN[point.recipe.engine.name]
        synthetic = SyntheticSetting(engine=adapter.name, al=2.0, k=2)
        plan = adapter.plan(point, symbolic_paths(point), synthetic=synthetic)
        given = {canonical(name) for name in point.recipe.engine.args}
        spec = point.recipe.speedbench.speculative if point.recipe.speedbench else None
        given |= {canonical(name) for name in (spec.settings if spec else {})}
        for arg in plan.argv[plan.command :]:
            flag = canonical(arg)
            if not arg.startswith("--") or flag in given or flag in recipe_may_set:
                continue
            seen.add(flag)
            owned = adapter.owned_flags(agentic=point.kind == "agentic")
            assert owner(flag, (owned,)) is not None, (point.id, arg)
    assert {"cuda-graph-max-bs-decode", "max-num-seqs", "speculative-num-draft-tokens"} <= seen


def test_a_provided_adapter_without_the_optional_answers_gets_the_defaults() -> None:
    """An adapter from another package that implements only ``plan`` and ``rendered_prompt``
    owns no flag, runs no parallelism but TP, has no InferenceX framework and serves counters,
    not a queue of iterations; one that implements them is asked."""
    from pytest_infx.engines.registry import Completed
    from pytest_infx.engines.spec import IterationSpec, Parallelism

    class Bare:
        name = "tgi"

        def plan(self, *args: object, **kwargs: object) -> None:
            raise NotImplementedError

        async def rendered_prompt(self, *args: object, **kwargs: object) -> None:
            return None

    class Full(Bare):
        inferencex_framework = "tgi-fw"

        def owned_flags(self, *, agentic: bool) -> dict[str, str]:
            return {"port": "engine.port", **({"max-batch": "admission"} if agentic else {})}

        def parallelism(self, point: object) -> Parallelism:
            return Parallelism(pp=2)

        iteration_stats = True

        def spec_iterations(self, payload: object) -> tuple[IterationSpec, ...]:
            return (IterationSpec(1, 1, 3, 2),)

    bare, full = Completed(Bare()), Completed(Full())
    assert not bare.iteration_stats and bare.spec_iterations([]) == ()
    assert full.iteration_stats and full.spec_iterations([]) == (IterationSpec(1, 1, 3, 2),)
    assert (bare.owned_flags(agentic=True), bare.inferencex_framework) == ({}, None)
    assert bare.parallelism(None) == Parallelism(1, 1, 1, 1)  # type: ignore[arg-type]
    assert full.owned_flags(agentic=True) == {"port": "engine.port", "max-batch": "admission"}
    assert full.parallelism(None) == Parallelism(pp=2)  # type: ignore[arg-type]
    assert full.inferencex_framework == "tgi-fw"
