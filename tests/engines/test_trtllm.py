"""The TensorRT-LLM adapter against InferenceX's TensorRT-LLM scripts as the issue quotes them.

Facts (inferencex-matrix-2026-12.md, engines.md):
- ``mpirun -n 1 --oversubscribe --allow-run-as-root trtllm-serve MODEL --backend=pytorch
  --tp_size --ep_size --max_seq_len --max_num_tokens [--max_batch_size]
  --extra_llm_api_options=FILE``; ``--config`` is the same click option;
- the YAML's keys are fields of the LLM-API options model (``speculative_config`` with
  ``decoding_type: MTP`` and ``num_nextn_predict_layers`` for MTP);
- forced acceptance: ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`` = AL - 1;
- ``/metrics`` is a JSON list of per-iteration stats, not counters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_infx.engines.base import PlanError, ServerPlan
from pytest_infx.engines.registry import installed, symbolic_paths
from pytest_infx.engines.trtllm import OPTIONS_FILE, TRTLLM_ENV, TrtllmAdapter, synthetic
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand

OPTIONS = {
    "cuda_graph_config": {"enable_padding": True, "max_batch_size": 128},
    "kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": 0.8},
    "enable_attention_dp": False,
    "print_iter_log": True,
}
RECIPE: dict[str, Any] = {
    "key": "dsr1-fp4-b200-trt-mtp",
    "model": {
        "hub-id": "nvidia/DeepSeek-R1-0528-FP4-v2",
        "served-name": "nvidia/DeepSeek-R1-0528-FP4-v2",
        "prefix": "dsr1",
        "precision": "fp4",
    },
    "runner": "b200",
    "engine": {
        "name": "trtllm",
        "version": "1.3.0rc14",
        "image": "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14@sha256:" + "ab" * 32,
        "env": {"TRTLLM_ENABLE_PDL": "1"},
        "args": {
            "backend": "pytorch",
            "ep_size": 8,
            "max_seq_len": 9416,
            "max_num_tokens": 9416,
            "extra_llm_api_options": OPTIONS,
        },
    },
    "fixed-seq-len": {
        "points": [{"tp": 8, "isl": 8192, "osl": 1024, "concurrency": [4, 8]}],
        "speculative": {"method": "mtp", "draft-length": 3, "golden": "dsr1_mtp"},
    },
}


def points(tmp_path: Path, recipe: dict[str, Any] | None = None) -> list[Point]:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe or RECIPE, sort_keys=False))
    return expand(load_file(path))


def plan_of(point: Point, **kwargs: Any) -> ServerPlan:
    return TrtllmAdapter().plan(point, symbolic_paths(point), **kwargs)


def test_the_command_is_the_one_inferencex_s_scripts_run(tmp_path: Path) -> None:
    plan = plan_of(points(tmp_path)[0])
    argv = list(plan.argv)
    assert argv[: plan.command] == [
        "mpirun", "-n", "1", "--oversubscribe", "--allow-run-as-root", "trtllm-serve"
    ]  # fmt: skip
    assert argv[plan.command :] == [
        "$MODEL_ROOT/DeepSeek-R1-0528-FP4-v2", "--host", "127.0.0.1", "--port", "{port}",
        "--tp_size", "8", "--backend", "pytorch", "--ep_size", "8", "--max_seq_len", "9416",
        "--max_num_tokens", "9416", "--extra_llm_api_options", f"{{files}}/{OPTIONS_FILE}",
    ]  # fmt: skip
    assert plan.env == {"TRTLLM_ENABLE_PDL": "1"}


def test_the_llm_api_options_file_holds_the_recipe_s_options_and_the_draft_length(
    tmp_path: Path,
) -> None:
    written = yaml.safe_load(plan_of(points(tmp_path)[0]).files[OPTIONS_FILE])
    assert written == {
        **OPTIONS,
        "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 3},
    }


def test_forced_acceptance_counts_draft_tokens_only(tmp_path: Path) -> None:
    setting = installed().synthetic_setting("trtllm", 2.5, 3)
    plan = plan_of(points(tmp_path)[0], synthetic=setting)
    assert plan.env["TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"] == "1.5"


def test_the_options_are_part_of_the_server_s_key(tmp_path: Path) -> None:
    first = plan_of(points(tmp_path)[0])
    changed = {**RECIPE, "engine": {**RECIPE["engine"], "args": {**RECIPE["engine"]["args"]}}}
    changed["engine"]["args"]["extra_llm_api_options"] = {**OPTIONS, "print_iter_log": False}
    second = plan_of(points(tmp_path, changed)[0])
    assert first.argv == second.argv and first.key != second.key


def test_an_eagle3_draft_gets_its_length_and_checkpoint(tmp_path: Path) -> None:
    recipe = {**RECIPE}
    recipe["fixed-seq-len"] = {
        **RECIPE["fixed-seq-len"],
        "speculative": {
            "method": "eagle3",
            "draft": "nvidia/DeepSeek-R1-Eagle3",
            "draft-length": 3,
            "golden": "dsr1_mtp",
            "settings": {"eagle3_one_model": True},
        },
    }
    written = yaml.safe_load(plan_of(points(tmp_path, recipe)[0]).files[OPTIONS_FILE])
    assert written["speculative_config"] == {
        "decoding_type": "Eagle3",
        "max_draft_len": 3,
        "speculative_model_dir": "$MODEL_ROOT/DeepSeek-R1-Eagle3",
        "eagle3_one_model": True,
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("options.yaml", "must be a mapping of LLM-API options"),
        ({"speculative_config": {}}, "extra_llm_api_options.speculative_config is set by"),
    ],
)
def test_options_the_plugin_cannot_write_are_refused(
    tmp_path: Path, options: object, message: str
) -> None:
    recipe = {**RECIPE, "engine": {**RECIPE["engine"], "args": {"config": options}}}
    with pytest.raises(PlanError, match=message):
        plan_of(points(tmp_path, recipe)[0])


def test_an_agentic_server_admits_its_concurrency_as_max_batch_size(tmp_path: Path) -> None:
    recipe = {key: value for key, value in RECIPE.items() if key != "fixed-seq-len"}
    recipe["agentic"] = {"points": [{"tp": 8, "concurrency": [16]}]}
    plan = plan_of(points(tmp_path, recipe)[0])
    argv = list(plan.argv)
    assert argv[argv.index("--max_batch_size") + 1] == "32"
    assert TrtllmAdapter().owned_flags(agentic=True)["max-batch-size"]
    assert "max-batch-size" not in TrtllmAdapter().owned_flags(agentic=False)


def speedbench_recipe(options: dict[str, Any]) -> dict[str, Any]:
    recipe = {key: value for key, value in RECIPE.items() if key != "fixed-seq-len"}
    args = {**RECIPE["engine"]["args"], "extra_llm_api_options": options}
    recipe["engine"] = {**RECIPE["engine"], "args": args}
    recipe["speedbench"] = {
        "speculative": {"method": "mtp"},
        "draft-lengths": [2],
        "thinking-modes": {"thinking_off": {}},
        "dataset": {"category": "coding"},
        "concurrency": 4,
        "output-len": 64,
        "golden": "dsr1_mtp",
    }
    return recipe


def test_a_speedbench_server_queues_its_iteration_stats(tmp_path: Path) -> None:
    plan = plan_of(points(tmp_path, speedbench_recipe(OPTIONS))[0])
    written = yaml.safe_load(plan.files[OPTIONS_FILE])
    assert written == {
        **OPTIONS,
        "enable_iter_perf_stats": True,
        "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 2},
    }
    assert TrtllmAdapter().iteration_stats


def test_a_fixed_seq_len_server_runs_without_iteration_stats(tmp_path: Path) -> None:
    plan = plan_of(points(tmp_path)[0])
    assert "enable_iter_perf_stats" not in yaml.safe_load(plan.files[OPTIONS_FILE])


def test_a_speedbench_recipe_that_turns_the_stats_off_is_refused(tmp_path: Path) -> None:
    recipe = speedbench_recipe({**OPTIONS, "enable_iter_perf_stats": False})
    with pytest.raises(PlanError, match="enable_iter_perf_stats must stay on"):
        plan_of(points(tmp_path, recipe)[0])


def test_the_iteration_stats_give_each_iteration_s_speculative_figures() -> None:
    payload = [
        {"iter": 7, "iterLatencyMS": 4.0},
        {
            "iter": 8,
            "specDecodingStats": {
                "numDraftTokens": 6,
                "numAcceptedTokens": 3,
                "numRequestsWithDraftTokens": 2,
                "acceptanceLength": 2.5,
            },
        },
    ]
    (found,) = TrtllmAdapter().spec_iterations(payload)
    assert (found.iteration, found.drafts, found.draft_tokens, found.accepted) == (8, 2, 6, 3)


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"iter": 1}, "expected a JSON list"),
        (["x"], "entry 0 is not an object"),
        ([{"specDecodingStats": {}}], "entry 0 has no integer iter"),
        ([{"iter": 1, "specDecodingStats": {"numDraftTokens": 1.5}}], "lacks an integer"),
    ],
)
def test_iteration_stats_of_another_shape_are_refused(payload: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        TrtllmAdapter().spec_iterations(payload)


def test_attention_dp_and_expert_parallel_come_from_the_recipe(tmp_path: Path) -> None:
    adapter = TrtllmAdapter()
    point = points(tmp_path)[0]
    assert adapter.parallelism(point).ep == 8 and not adapter.dp_attention(point)
    recipe = {**RECIPE, "engine": {**RECIPE["engine"], "args": {**RECIPE["engine"]["args"]}}}
    recipe["engine"]["args"]["extra_llm_api_options"] = {**OPTIONS, "enable_attention_dp": True}
    assert adapter.dp_attention(points(tmp_path, recipe)[0])
    assert adapter.inferencex_framework == "trt" and adapter.parser_env("1.3.0rc14") is None


def test_tensorrt_llm_is_forced_to_al_minus_one_accepted_tokens() -> None:
    whole = synthetic(3.0, 3)
    assert (whole.engine, whole.env, whole.argv, whole.notes) == (
        "trtllm",
        {TRTLLM_ENV: "2"},
        (),
        (),
    )
    fraction = synthetic(2.5, 3)
    assert fraction.env == {TRTLLM_ENV: "1.5"}
    assert fraction.notes and "one-model path honours the fraction" in fraction.notes[0]
