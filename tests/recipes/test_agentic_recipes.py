"""The AgentX recipes plan what InferenceX's launch scripts run for named points (commit
843c6254f, benchmarks/single_node/agentic/<script>): server flags per variant, environment,
synthetic acceptance from the golden curve, and the aiperf settings. The plugin's own flags
(model, served name, host, port, TP) and the admission it sets per point are left out here;
``test_after_*`` tests state what InferenceX does that other work in progress will give."""

from __future__ import annotations

from pytest_infx.engines.base import ServerPlan
from pytest_infx.engines.registry import installed
from pytest_infx.prepare.identity import identity_of

from .conftest import client, flags, planned, repository_points

SGLANG_EAGLE3 = {
    "--speculative-algorithm": "EAGLE",
    "--speculative-num-steps": "3",
    "--speculative-eagle-topk": "1",
    "--speculative-num-draft-tokens": "4",
}
DSV4_SGLANG_ENV = {
    "SGLANG_ENABLE_UNIFIED_RADIX_TREE": "1",
    "SGLANG_OPT_UNIFIED_CACHE_FREE_OUT_OF_WINDOW_SLOTS": "1",
    "PYTHONNOUSERSITE": "1",
    "TORCH_CUDA_ARCH_LIST": "10.0",
    "SGLANG_TIMEOUT_KEEP_ALIVE": "900",
    "SGLANG_JIT_DEEPGEMM_FAST_WARMUP": "1",
    "SGLANG_OPT_SWA_SPLIT_LEAF_ON_INSERT": "1",
    "SGLANG_OPT_USE_JIT_NORM": "1",
    "SGLANG_OPT_USE_JIT_INDEXER_METADATA": "1",
    "SGLANG_OPT_USE_TOPK_V2": "1",
    "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2": "1",
    "SGLANG_SIMULATE_ACC_LEN": "2.49",
    "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
}
PENDING_ENV = {"SGLANG_SIMULATE_ACC_TOKEN_MODE", "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION"}


def script_env(env: object) -> dict[str, str]:
    assert isinstance(env, dict)
    return {k: v for k, v in env.items() if k not in PENDING_ENV}


def aiperf(
    concurrency: int, traces: str = "semianalysis_cc_traces_weka_062126"
) -> dict[str, object]:
    return {
        "client": "aiperf",
        "scenario": "inferencex-agentx-mvp",
        "endpoint": "/v1/chat/completions",
        "endpoint_type": "chat",
        "stream": True,
        "use_server_token_count": True,
        "num_dataset_entries": 393,
        "concurrency": concurrency,
        "duration_s": 3600,
        "seed": 42,
        "trajectory_start_ratio": [0.25, 0.75],
        "request_count": None,
        "traces": traces,
        "failed_request_threshold": 0.1,
        "trace_idle_gap_cap_s": 300.0,
        "warmup_grace_period_s": 1800.0,
        "max_context_length": None,
        "chat_template": False,
    }


def test_dsv4_dep4_hicache_point_as_dsv4_fp4_b300_sglang_mtp_sh() -> None:
    point_id = "dsv4-fp4-b300-sglang-agentic-hicache-mtp[tp4-c64-ep4-dpa-hicache]"
    point, plan = planned(point_id)
    assert (point.tp, point.concurrency, point.variant, plan.gpus) == (4, 64, "ep4-dpa-hicache", 4)
    assert flags(plan, agentic=True) == {
        "--trust-remote-code": None,
        "--dp": "4",
        "--tokenizer-worker-num": "4",
        "--enable-dp-attention": None,
        "--enable-dp-attention-local-control-broadcast": None,
        "--incremental-streaming-output": None,
        "--stream-interval": "20",
        "--dist-init-addr": "127.0.0.1:10888",
        "--ep-size": "4",
        "--moe-runner-backend": "flashinfer_mxfp4",
        "--disable-flashinfer-autotune": None,
        "--mem-fraction-static": "0.95",
        "--swa-full-tokens-ratio": "0.1",
        "--allow-auto-truncate": None,
        "--chunked-prefill-size": "16384",
        "--tool-call-parser": "deepseekv4",
        "--reasoning-parser": "deepseek-v4",
        "--watchdog-timeout": "1800",
        **SGLANG_EAGLE3,
        "--attention-backend": "compressed",
        "--page-size": "256",
        "--disable-shared-experts-fusion": None,
        "--enable-cache-report": None,
        "--enable-hierarchical-cache": None,
        "--hicache-ratio": "8",
        "--hicache-write-policy": "write_back",
        "--hicache-io-backend": "direct",
        "--hicache-mem-layout": "page_first_direct",
        "--skip-server-warmup": None,
    }
    assert script_env(plan.env) == DSV4_SGLANG_ENV
    assert client(point_id) == aiperf(64)


def test_dsv4_dep8_at_512_lowers_the_static_memory_fraction() -> None:
    _, at_512 = planned("dsv4-fp4-b300-sglang-agentic-hicache-mtp[tp8-c512-ep8-dpa]")
    _, at_196 = planned("dsv4-fp4-b300-sglang-agentic-hicache-mtp[tp8-c196-ep8-dpa]")
    assert flags(at_512, agentic=True)["--mem-fraction-static"] == "0.94"
    assert flags(at_196, agentic=True)["--mem-fraction-static"] == "0.95"
    assert "--enable-hierarchical-cache" not in flags(at_196, agentic=True)


def test_qwen_ep2_hicache_point_as_qwen3_5_fp8_b300_sglang_mtp_sh() -> None:
    point_id = "qwen3.5-fp8-b300-sglang-agentic-mtp[tp2-c36-ep2-hicache]"
    _, plan = planned(point_id)
    assert flags(plan, agentic=True) == {
        "--trust-remote-code": None,
        "--dp": "1",
        "--ep-size": "2",
        "--enable-symm-mem": None,
        "--quantization": "fp8",
        "--kv-cache-dtype": "fp8_e4m3",
        "--mamba-ssm-dtype": "bfloat16",
        "--attention-backend": "trtllm_mha",
        "--moe-runner-backend": "flashinfer_trtllm",
        "--max-prefill-tokens": "16384",
        "--chunked-prefill-size": "16384",
        "--mem-fraction-static": "0.8",
        "--stream-interval": "50",
        "--scheduler-recv-interval": "10",
        "--tokenizer-path": "Qwen/Qwen3.5-397B-A17B-FP8",
        "--reasoning-parser": "qwen3",
        "--tool-call-parser": "qwen3_coder",
        "--enable-cache-report": None,
        "--page-size": "64",
        "--enable-hierarchical-cache": None,
        "--hicache-size": "144",
        "--hicache-io-backend": "kernel",
        "--hicache-mem-layout": "page_first",
        "--hicache-write-policy": "write_through_selective",
        "--speculative-algorithm": "NEXTN",
        "--speculative-num-steps": "3",
        "--speculative-eagle-topk": "1",
        "--speculative-num-draft-tokens": "4",
    }
    assert script_env(plan.env) == {
        "TORCH_CUDA_ARCH_LIST": "10.0",
        "PYTHONNOUSERSITE": "1",
        "NCCL_NVLS_ENABLE": "1",
        "SGL_ENABLE_JIT_DEEPGEMM": "false",
        "SGLANG_ENABLE_FLASHINFER_GEMM": "true",
        "SGLANG_TIMEOUT_KEEP_ALIVE": "1800",
        "SGLANG_SIMULATE_ACC_LEN": "3.39",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
    }
    assert client(point_id) == aiperf(36, "semianalysis_cc_traces_weka_062126_256k")
    _, tp4 = planned("qwen3.5-fp8-b300-sglang-agentic-mtp[tp4-c8]")
    assert flags(tp4, agentic=True)["--tokenizer-worker-num"] == "6"


def test_glm_b200_hicache_size_follows_the_concurrency_as_glm5_2_fp4_b200_sglang_mtp_sh() -> None:
    _, c12 = planned("glm5.2-fp4-b200-sglang-agentic-mtp[tp8-c12-hicache]")
    _, c8 = planned("glm5.2-fp4-b200-sglang-agentic-mtp[tp8-c8-hicache]")
    assert flags(c12, agentic=True)["--hicache-size"] == "270"
    assert "--hicache-ratio" not in flags(c12, agentic=True)
    assert flags(c8, agentic=True)["--hicache-ratio"] == "0.75"
    assert flags(c8, agentic=True)["--mem-fraction-static"] == "0.83"
    assert c8.env["SGLANG_SIMULATE_ACC_LEN"] == "2.99"


def test_kimi_k3_draft_length_follows_the_concurrency_as_kimik3_fp4_b300_vllm_mtp_sh() -> None:
    key = "kimik3-fp4-b300-vllm-agentic-dspark"
    spec = {
        point: flags(planned(f"{key}[tp8-c{point}-dcp8-mooncake]")[1], agentic=True).get(
            "--speculative-config"
        )
        for point in (8, 16, 32)
    }
    base = {
        "method": "dspark",
        "model": "$MODEL_ROOT/Kimi-K3-DSpark",
        "attention_backend": "TOKENSPEED_MLA",
        "draft_sample_method": "probabilistic",
        "rejection_sample_method": "synthetic",
    }
    assert spec[8] == {**base, "num_speculative_tokens": 7, "synthetic_acceptance_length": 3.84}
    assert spec[16] == {**base, "num_speculative_tokens": 3, "synthetic_acceptance_length": 3.0}
    assert spec[32] is None
    found = flags(planned(f"{key}[tp8-c56-dcp8-mooncake]")[1], agentic=True)
    assert found["--gpu-memory-utilization"] == "0.9"
    assert found["--decode-context-parallel-size"] == "8" and found["--dcp-comm-backend"] == "a2a"
    assert found["--kv-transfer-config"] == {
        "kv_connector": "MooncakeStoreConnector",
        "kv_role": "kv_both",
        "kv_load_failure_policy": "recompute",
        "kv_connector_extra_config": {
            "load_async": True,
            "lookup_async": True,
            "enable_offload": False,
        },
    }


def test_minimax_tp2_offload_point_as_minimaxm3_fp4_b300_mtp_sh() -> None:
    point_id = "minimaxm3-fp4-b300-vllm-agentic-mtp[tp2-c24-vllm-simple]"
    _, plan = planned(point_id)
    assert flags(plan, agentic=True) == {
        "--gpu-memory-utilization": "0.9",
        "--block-size": "128",
        "--language-model-only": None,
        "--enable-prefix-caching": None,
        "--no-enable-flashinfer-autotune": None,
        "--reasoning-parser": "minimax_m3",
        "--tool-call-parser": "minimax_m3",
        "--enable-auto-tool-choice": None,
        "--default-chat-template-kwargs": {"thinking_mode": "enabled"},
        "--attention-config": {
            "backend": "FLASHINFER",
            "use_trtllm_attention": True,
            "indexer_kv_dtype": "fp8",
        },
        "--kv-cache-dtype": "fp8",
        "--max-cudagraph-capture-size": "512",
        "--max-num-batched-tokens": "16384",
        "--stream-interval": "20",
        "--trust-remote-code": None,
        "--kv-transfer-config": {
            "kv_connector": "SimpleCPUOffloadConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {"cpu_bytes_to_use": 804232626176, "lazy_offload": True},
        },
        "--speculative-config": {
            "method": "eagle3",
            "model": "$MODEL_ROOT/MiniMax-M3-EAGLE3-GQA",
            "num_speculative_tokens": 3,
            "attention_backend": "FLASH_ATTN",
            "rejection_sample_method": "synthetic",
            "synthetic_acceptance_length": 2.78,
        },
    }
    assert plan.env == {
        "PYTHONNOUSERSITE": "1",
        "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
        "VLLM_FLOAT32_MATMUL_PRECISION": "high",
        "VLLM_FLASHINFER_ALLREDUCE_BACKEND": "trtllm",
        "VLLM_USE_SIMPLE_KV_OFFLOAD": "1",
    }
    assert client(point_id) == aiperf(24)


def test_mimo_dflash_arms_inject_the_mimo_dflash_curve_at_k3() -> None:
    _, sglang = planned("mimov2.6flash-fp4-b200-sglang-agentic[tp4-c8-dflash]")
    assert sglang.env["SGLANG_SIMULATE_ACC_LEN"] == "2.97"
    assert flags(sglang, agentic=True)["--speculative-algorithm"] == "DFLASH"
    _, vllm = planned("mimov2.6flash-fp4-b200-vllm-agentic[tp8-c4-dflash]")
    assert flags(vllm, agentic=True)["--speculative-config"] == {
        "method": "dflash",
        "num_speculative_tokens": 3,
        "model": "$MODEL_ROOT/MiMo-V2.6-Flash-RL/dflash",
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 2.97,
    }
    _, plain = planned("mimov2.6flash-fp4-b200-vllm-agentic[tp8-c4]")
    assert "--speculative-config" not in flags(plain, agentic=True)


def test_the_agentx_recipes_hold_the_313_points_of_the_21_keys() -> None:
    """The hand-ported ones; those import-inferencex generates are in recipes/inferencex/."""
    counts: dict[str, int] = {}
    for point in repository_points().values():
        generated = "inferencex" in point.path.parts
        if (
            point.kind == "agentic"
            and not generated
            and not point.recipe_key.startswith(("mimo", "smollm2"))
        ):
            counts[point.recipe_key] = counts.get(point.recipe_key, 0) + 1
    assert len(counts) == 21
    assert sum(counts.values()) == 313


def test_after_engines_branch_sglang_points_force_real_draft_tokens() -> None:
    _, plan = planned("dsv4-fp4-b300-sglang-agentic-hicache-mtp[tp4-c64-ep4-dpa-hicache]")
    assert plan.env["SGLANG_SIMULATE_ACC_TOKEN_MODE"] == "real-draft-token"


def test_after_agentx_branch_admission_is_twice_each_points_concurrency() -> None:
    _, sglang = planned("dsv4-fp4-b300-sglang-agentic-hicache-mtp[tp8-c1]")
    argv = list(sglang.argv)
    assert argv[argv.index("--max-running-requests") + 1] == "2"
    _, vllm = planned("dsv4-fp4-b300-vllm-agentic-mtp[tp4-c6]")
    argv = list(vllm.argv)
    assert argv[argv.index("--max-num-seqs") + 1] == "12"


DSV4_VLLM_ENV = {
    "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
    "VLLM_PREFIX_CACHE_RETENTION_INTERVAL": "32768",
    "VLLM_USE_V2_MODEL_RUNNER": "1",
    "VLLM_USE_RUST_FRONTEND": "1",
    "VLLM_DSV4_MEGA_FP8_COMBINE": "1",
    "TORCH_CUDA_ARCH_LIST": "10.0",
    "PYTHONNOUSERSITE": "1",
    "VLLM_FLOAT32_MATMUL_PRECISION": "high",
    "PYTHONHASHSEED": "42",
    "PYTORCH_ALLOC_CONF": "expandable_segments:True",
}
DSV4_VLLM_DEP = {
    "--trust-remote-code": None,
    "--no-enable-flashinfer-autotune": None,
    "--no-disable-hybrid-kv-cache-manager": None,
    "--kv-cache-dtype": "fp8",
    "--block-size": "256",
    "--max-model-len": "1048576",
    "--disable-uvicorn-access-log": None,
    "--tokenizer-mode": "deepseek_v4",
    "--tool-call-parser": "deepseek_v4",
    "--enable-auto-tool-choice": None,
    "--reasoning-parser": "deepseek_v4",
    "--attention-config": {
        "backend": "FLASHINFER_MLA_SPARSE_DSV4",
        "use_prefill_query_quantization": True,
        "use_fp4_indexer_cache": True,
    },
    "--speculative-config": {
        "method": "mtp",
        "num_speculative_tokens": 3,
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 2.49,
    },
    "--enable-expert-parallel": None,
    "--enable-ep-weight-filter": None,
    "--moe-backend": "deep_gemm_amxf4_mega_moe",
    "--prefill-schedule-interval": "8",
    "--long-prefill-token-threshold": "512",
}
"""What dsv4_fp4_b200_vllm_mtp.sh and dsv4_fp4_b300_vllm_mtp.sh both pass with DP_ATTENTION=true
and EP_SIZE > 1. Their compilation config lists every capture size up to MAX_NUM_SEQS x 4 tokens,
which the recipes leave to vLLM (their docs say so): only its mode and cudagraph_mode are here."""


def parallel(plan: ServerPlan) -> tuple[str, str, str]:
    """The TP flag, the data-parallel size and the admission, which ``flags`` leaves out or
    shows apart from the plugin-owned flags."""
    argv = list(plan.argv)

    def value(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    return value("--tensor-parallel-size"), value("--data-parallel-size"), value("--max-num-seqs")


def test_dsv4_dep8_point_as_dsv4_fp4_b200_vllm_mtp_sh() -> None:
    """DP_ATTENTION=true: PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP"),
    MAX_NUM_SEQS=$((2 * CONC / TP)), --max-num-batched-tokens 8192, GPU_MEMORY_UTILIZATION 0.90,
    VLLM_RPC_TIMEOUT=600000, and the per-rank SimpleCPUOffloadConnector budget."""
    point_id = "dsv4-fp4-b200-vllm-agentic-mtp[tp8-c64-ep8-dpa-vllm-simple]"
    point, plan = planned(point_id)
    assert (point.tp, plan.gpus) == (8, 8)
    assert parallel(plan) == ("1", "8", "16")
    found = flags(plan, agentic=True)
    assert found.pop("--data-parallel-size") == "8"
    assert found == {
        **DSV4_VLLM_DEP,
        "--gpu-memory-utilization": "0.9",
        "--numa-bind": None,
        "--enable-cumem-allocator": None,
        "--max-num-batched-tokens": "8192",
        "--compilation-config": {"cudagraph_mode": "FULL_DECODE_ONLY", "mode": 0},
        "--kv-transfer-config": {
            "kv_connector": "SimpleCPUOffloadConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {
                "cpu_bytes_to_use_per_rank": 356125000000,
                "enable_cross_layers_blocks": "true",
                "lazy_offload": False,
            },
        },
    }
    assert plan.env == {**DSV4_VLLM_ENV, "VLLM_RPC_TIMEOUT": "600000"}
    assert client(point_id) == aiperf(64)
    name = identity_of(point, runner="b200-dgxc_1", engines=installed()).file_name()
    assert name.startswith("dsv4_tp8_conc64_kvnone_spec-mtp_fp4_vllm_tp8-pp1-dcp1-pcp1-ep8-dpatrue")


def test_dsv4_dep4_and_dep8_points_as_dsv4_fp4_b300_vllm_mtp_sh() -> None:
    """DP_ATTENTION=true: PARALLEL_ARGS=(--tensor-parallel-size 1 --data-parallel-size "$TP"),
    MAX_NUM_SEQS=$((2 * CONC / TP)); IS_DEP8 (TP 8) raises --max-num-batched-tokens to 16384 and
    lowers GPU_MEM_UTIL to 0.92; DEP keeps eager offload (SIMPLE_LAZY_OFFLOAD=false)."""
    key = "dsv4-fp4-b300-vllm-agentic-mtp"
    point, dep4 = planned(f"{key}[tp4-c64-ep4-dpa-vllm-simple]")
    assert (point.tp, dep4.gpus) == (4, 4)
    assert parallel(dep4) == ("1", "4", "32")
    found = flags(dep4, agentic=True)
    assert found.pop("--data-parallel-size") == "4"
    assert found == {
        **DSV4_VLLM_DEP,
        "--gpu-memory-utilization": "0.95",
        "--max-num-batched-tokens": "8192",
        "--compilation-config": {"cudagraph_mode": "FULL_DECODE_ONLY", "mode": 0},
        "--kv-transfer-config": {
            "kv_connector": "SimpleCPUOffloadConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {
                "cpu_bytes_to_use": 356000000000,
                "enable_cross_layers_blocks": "true",
                "lazy_offload": False,
            },
        },
    }
    assert dep4.env == {**DSV4_VLLM_ENV, "NCCL_NVLS_ENABLE": "1"}
    assert client(f"{key}[tp4-c64-ep4-dpa-vllm-simple]") == aiperf(64)
    _, dep8 = planned(f"{key}[tp8-c576-ep8-dpa-vllm-simple]")
    assert (dep8.gpus, parallel(dep8)) == (8, ("1", "8", "144"))
    dep8_flags = flags(dep8, agentic=True)
    assert dep8_flags["--max-num-batched-tokens"] == "16384"
    assert dep8_flags["--gpu-memory-utilization"] == "0.92"
