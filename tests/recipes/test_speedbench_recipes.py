"""The SPEED-Bench collectors' recipes plan what InferenceX's scripts run (commit 843c6254f,
benchmarks/single_node/speedbench/<script>): server flags, environment and client settings
for named cells. The plugin's own flags (model, served name, host, port, TP) are left out."""

from __future__ import annotations

from .conftest import client, flags, planned

DATASET = {
    "category": "coding",
    "expected-rows": 80,
    "name": "speed-bench",
    "path": "speed-bench/qualitative.jsonl",
    "subset": "qualitative",
}


def test_dsv4_mtp_cell_as_dsv4_fp4_b300_vllm_sh() -> None:
    point, plan = planned("dsv4-fp4-b300-vllm[k3-thinking_on]")
    assert plan.engine == "vllm" and plan.gpus == 8 and point.tp == 8
    assert flags(plan) == {
        "--data-parallel-size": "1",
        "--pipeline-parallel-size": "1",
        "--kv-cache-dtype": "fp8",
        "--trust-remote-code": None,
        "--block-size": "256",
        "--no-enable-prefix-caching": None,
        "--compilation-config": {"cudagraph_mode": "FULL_AND_PIECEWISE", "custom_ops": ["all"]},
        "--attention_config.use_fp4_indexer_cache": "True",
        "--tokenizer-mode": "deepseek_v4",
        "--tool-call-parser": "deepseek_v4",
        "--enable-auto-tool-choice": None,
        "--reasoning-parser": "deepseek_v4",
        "--max-cudagraph-capture-size": "2048",
        "--max-model-len": "16384",
        "--speculative-config": {"method": "mtp", "num_speculative_tokens": 3},
    }
    assert plan.env == {"VLLM_ENGINE_READY_TIMEOUT_S": "3600"}
    assert client("dsv4-fp4-b300-vllm[k3-thinking_on]") == {
        "endpoint": "/v1/chat/completions",
        "stream": True,
        "concurrency": 1,
        "max_tokens": 4096,
        "sampling": {"temperature": 1.0},
        "chat_template_kwargs": {"thinking": True, "reasoning_effort": "high"},
        "dataset": DATASET,
    }
    assert client("dsv4-fp4-b300-vllm[k3-thinking_off]")["chat_template_kwargs"] == {}


def test_qwen_samples_each_thinking_mode_as_its_model_card_in_qwen3_5_fp4_b300_vllm_sh() -> None:
    on = client("qwen3.5-fp4-b300-vllm[k2-thinking_on]")
    off = client("qwen3.5-fp4-b300-vllm[k2-thinking_off]")
    assert on["sampling"] == {
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
        "presence_penalty": 0.0,
    }
    assert off["sampling"] == {
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
        "presence_penalty": 1.5,
    }
    assert off["chat_template_kwargs"] == {"enable_thinking": False}
    _, plan = planned("qwen3.5-fp4-b300-vllm[k2-thinking_off]")
    assert flags(plan) == {
        "--data-parallel-size": "1",
        "--pipeline-parallel-size": "1",
        "--kv-cache-dtype": "fp8",
        "--trust-remote-code": None,
        "--no-enable-prefix-caching": None,
        "--reasoning-parser": "qwen3",
        "--tool-call-parser": "qwen3_coder",
        "--enable-auto-tool-choice": None,
        "--language-model-only": None,
        "--max-cudagraph-capture-size": "512",
        "--max-model-len": "16384",
        "--speculative-config": {"method": "mtp", "num_speculative_tokens": 2},
    }


def test_kimi_k3_block_rejection_collector_as_its_script() -> None:
    key = "kimik3-fp4-b300-vllm-probabilistic-sample-method-block-rejection-sample-method"
    point, plan = planned(f"{key}[k7-thinking_on]")
    found = flags(plan)
    assert found["--speculative-config"] == {
        "method": "dspark",
        "model": "$MODEL_ROOT/Kimi-K3-DSpark",
        "num_speculative_tokens": 7,
        "attention_backend": "FLASHINFER_MLA",
        "draft_sample_method": "probabilistic",
        "rejection_sample_method": "block",
    }
    assert found["--max-num-seqs"] == "512"
    assert found["--enable-prefix-caching"] is None and "--no-enable-prefix-caching" not in found
    assert found["--attention-config"] == {
        "mla_prefill_backend": "FLASHINFER",
        "use_prefill_query_quantization": True,
    }
    assert plan.env == {
        "NCCL_DMABUF_ENABLE": "0",
        "VLLM_ALLREDUCE_USE_FLASHINFER": "1",
        "VLLM_USE_RUST_FRONTEND": "1",
        "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
    }
    settings = client(f"{key}[k7-thinking_on]")
    assert settings["concurrency"] == 64
    assert settings["sampling"] == {"temperature": 1.0, "top_p": 0.95}
    assert point.thinking == "thinking_on" and point.draft_length == 7


def test_minimax_m3_eagle3_cell_as_minimaxm3_fp4_b300_vllm_sh() -> None:
    _, plan = planned("minimaxm3-fp4-b300-vllm[k1-thinking_off]")
    assert flags(plan) == {
        "--pipeline-parallel-size": "1",
        "--block-size": "128",
        "--language-model-only": None,
        "--max-cudagraph-capture-size": "2048",
        "--trust-remote-code": None,
        "--no-enable-prefix-caching": None,
        "--gpu-memory-utilization": "0.9",
        "--max-model-len": "16384",
        "--max-num-batched-tokens": "16384",
        "--stream-interval": "30",
        "--speculative-config": {
            "method": "eagle3",
            "model": "$MODEL_ROOT/MiniMax-M3-EAGLE3",
            "num_speculative_tokens": 1,
            "attention_backend": "FLASH_ATTN",
        },
    }
    settings = client("minimaxm3-fp4-b300-vllm[k1-thinking_off]")
    assert settings["sampling"] == {"temperature": 1.0, "top_p": 0.95, "top_k": 40}
    assert settings["chat_template_kwargs"] == {"thinking_mode": "disabled"}


def test_each_collector_has_its_draft_lengths_and_modes() -> None:
    from .conftest import repository_points

    cells: dict[str, set[tuple[int | None, str | None]]] = {}
    for point in repository_points().values():
        if point.kind == "speedbench" and point.runner == "b300":
            cells.setdefault(point.recipe_key, set()).add((point.draft_length, point.thinking))
    both = {(k, m) for k in range(1, 9) for m in ("thinking_on", "thinking_off")}
    on = {(k, "thinking_on") for k in range(1, 9)}
    assert cells == {
        "dsr1-fp4-b300-vllm": on,
        "dsv4-fp4-b300-vllm": both,
        "dsv4dspark-fp4-b300-vllm": on,
        "dsv4dsparkprob-fp4-b300-vllm": on,
        "glm5-fp4-b300-vllm": both,
        "glm52-fp4-b300-vllm": on,
        "kimik2.5-fp4-b300-vllm": both,
        "kimik3-fp4-b300-vllm": on,
        "kimik3-fp4-b300-vllm-probabilistic-sample-method-block-rejection-sample-method": on,
        "minimaxm3-fp4-b300-vllm": both,
        "qwen3.5-fp4-b300-vllm": both,
        "mimov2.6flash-fp4-b300-vllm-dflash": {
            (k, m) for k in range(1, 8) for m in ("thinking_on", "thinking_off")
        },
    }
