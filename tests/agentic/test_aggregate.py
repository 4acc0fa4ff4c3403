"""The InferenceX computation of an AgentX point, checked against a record set worked by hand.

The rules are those of InferenceX's ``utils/agentic/aggregation/process_agentic_result.py`` and
``request_metrics.py`` at 843c6254f: warm-up records (``metadata.benchmark_phase`` other than
``profiling``) and records with an ``error`` are dropped and counted; throughput is the tokens
of the kept records over (last ``request_end_ns`` - first ``request_start_ns``); per GPU divides
by TP x PP x PCP; percentiles interpolate linearly between closest ranks (``aggregation_common``);
interactivity is 1 / the matching inter-token latency statistic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.agentic.aggregate import (
    build_aggregate,
    headline,
    load_records,
    parse_records,
    percentile,
    request_metrics,
)
from pytest_infx.agentic.results import ExportError
from pytest_infx.results.identity import ConfigIdentity

S = 1_000_000_000


def _record(
    start_s: float,
    end_s: float,
    isl: int,
    osl: int,
    *,
    ttft_ms: float = 100.0,
    itl_ms: float = 10.0,
    e2el_ms: float = 1000.0,
    phase: str | None = "profiling",
    error: Any = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "request_start_ns": int(start_s * S),
        "request_end_ns": int(end_s * S),
    }
    if phase is not None:
        metadata["benchmark_phase"] = phase
    return {
        "metadata": metadata,
        "metrics": {
            "input_sequence_length": {"value": isl, "unit": "tokens"},
            "output_sequence_length": {"value": osl, "unit": "tokens"},
            "time_to_first_token": {"value": ttft_ms, "unit": "ms"},
            "inter_token_latency": {"value": itl_ms, "unit": "ms"},
            "request_latency": {"value": e2el_ms, "unit": "ms"},
        },
        "error": error,
    }


RECORDS = [
    _record(0, 5, 1000, 100, phase="warmup"),
    _record(10, 12, 2000, 200, ttft_ms=500, itl_ms=10, e2el_ms=2000),
    _record(11, 14, 3000, 300, ttft_ms=1000, itl_ms=20, e2el_ms=3000),
    _record(11, 20, 4000, 0, error={"type": "HTTPStatusError", "code": 500, "message": "boom"}),
    _record(12, 15, 1000, 500, ttft_ms=1500, itl_ms=30, e2el_ms=3000, phase=None),
]
SHAPE = ConfigIdentity(
    hardware="b200",
    engine_version="0.31.0",
    spec_method="none",
    model_prefix="mimov2.6flash",
    precision="fp4",
    framework="vllm",
    tp=4,
    pcp=2,
    conc=8,
    runner="b200-nv_0",
    fingerprint="0123456789abcdef",
    model="m",
)


def _lines(records: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r) + "\n" for r in records] + ["\n"]


def test_warmup_and_failed_records_are_counted_and_dropped() -> None:
    found = parse_records(_lines(RECORDS))
    assert len(found.records) == 3
    assert found.accounting == {
        "records_total": 5,
        "records_profiled": 3,
        "records_dropped_total": 2,
        "records_warmup_dropped": 1,
        "records_error_dropped": 1,
        "error_categories": {"HTTPStatusError": 1},
    }


def test_throughput_per_gpu_is_total_tokens_over_the_kept_span_over_tp_pp_pcp() -> None:
    found = parse_records(_lines(RECORDS))
    metrics = request_metrics(found, {}, num_gpus=SHAPE.gpus)
    block = metrics["throughput"]
    # kept: starts 10, 11, 12 s; ends 12, 14, 15 s -> span 5 s (the failed request's end at 20 s
    # and the warm-up's start at 0 s do not count); input 6000, output 1000 tokens
    assert block["duration_seconds"] == pytest.approx(5.0)
    assert block["input"]["tokens_per_second"] == pytest.approx(1200.0)
    assert block["output"]["tokens_per_second"] == pytest.approx(200.0)
    assert block["total"]["tokens_per_second"] == pytest.approx(1400.0)
    # TP 4 x PP 1 x PCP 2 = 8 GPUs
    assert SHAPE.gpus == 8
    assert block["per_gpu"] == pytest.approx(
        {"total_tput_tps": 175.0, "output_tput_tps": 25.0, "input_tput_tps": 150.0}
    )


def test_latency_percentiles_interpolate_and_interactivity_inverts_the_itl() -> None:
    latency = request_metrics(parse_records(_lines(RECORDS)), {}, num_gpus=1)["latency"]
    # TTFT 0.5, 1.0, 1.5 s: p90 rank 1.8 -> 1.0 + 0.8 x 0.5
    assert latency["ttft"]["p50"] == pytest.approx(1.0)
    assert latency["ttft"]["p90"] == pytest.approx(1.4)
    assert latency["ttft"]["mean"] == pytest.approx(1.0)
    assert latency["tpot"] == latency["itl"]
    assert latency["itl"]["p50"] == pytest.approx(0.02)
    assert latency["intvty"]["p50"] == pytest.approx(50.0)
    assert latency["intvty"]["p95"] == pytest.approx(1 / latency["itl"]["p95"])
    # E2E 2, 3, 3 s: p75 rank 1.5 -> 3.0
    assert latency["e2el"]["p75"] == pytest.approx(3.0)
    # e2e over output tokens: 2/200, 3/300, 3/500 s -> median 0.01 s -> 100 tokens/s
    assert latency["e2e_norm_intvty"]["p50"] == pytest.approx(100.0)


def test_percentile_matches_closest_rank_interpolation() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([4.0], 95) == 4.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([10.0, 0.0], 95) == pytest.approx(9.5)


def test_no_span_gives_no_throughput_block() -> None:
    lone = [_record(3, 3, 10, 10)]
    assert request_metrics(parse_records(_lines(lone)), {}, num_gpus=1)["throughput"] == {}


def test_aggregate_has_inferencex_fields_and_rounding() -> None:
    export = {
        "metadata": {"dataset": {"name": "builtin"}},
        "theoretical_prefix_cache_hit": {"unit": "%", "sum": 3, "count": 4, "avg": 75.0},
    }
    agg = build_aggregate(
        parse_records(_lines(RECORDS)),
        export,
        SHAPE.model_copy(
            update={"model": "XiaomiMiMo/MiMo-V2.6-Flash-RL", "image": "vllm/vllm-openai:v0.31.0"}
        ),
    )
    assert json.loads(json.dumps(agg)) == agg
    assert {k: agg[k] for k in ("hw", "conc", "tp", "ep", "pp", "pcp_size", "dcp_size")} == {
        "hw": "b200-nv_0",
        "conc": 8,
        "tp": 4,
        "ep": 1,
        "pp": 1,
        "pcp_size": 2,
        "dcp_size": 1,
    }
    assert agg["scenario_type"] == "agentic-coding"
    assert agg["dp_attention"] == "false"
    assert (agg["framework"], agg["precision"], agg["spec_decoding"]) == ("vllm", "fp4", "none")
    assert agg["recipe_fingerprint"] == "0123456789abcdef"
    assert (agg["num_requests_total"], agg["num_requests_successful"]) == (5, 3)
    assert agg["dataset"] == {"name": "builtin"}
    per_gpu = agg["request_metrics"]["throughput"]["per_gpu"]
    assert per_gpu == {"total_tput_tps": 175, "output_tput_tps": 25, "input_tput_tps": 150}
    assert isinstance(per_gpu["total_tput_tps"], int)
    assert agg["request_metrics"]["cache"]["theoretical_cache_hit_rate"] == 0.75
    assert agg["request_metrics"]["latency"]["itl"]["p50"] == 0.02


def test_a_broken_record_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "profile_export.jsonl"
    path.write_text(json.dumps(RECORDS[1]) + "\n{not json\n")
    with pytest.raises(ExportError, match=r"profile_export\.jsonl:2: not a JSON record"):
        load_records(path)
    with pytest.raises(ExportError, match="per-request records are missing"):
        load_records(tmp_path / "absent.jsonl")


def test_headline_is_our_throughput_block_from_the_aggregate() -> None:
    agg = build_aggregate(parse_records(_lines(RECORDS)), {}, SHAPE)
    block = headline(agg, num_gpus=SHAPE.gpus, requests_per_s=3.5)
    assert block is not None
    assert block.model_dump() == {
        "method": "inferencex",
        "total_tokens_per_s": 1400,
        "output_tokens_per_s": 200,
        "input_tokens_per_s": 1200,
        "total_tokens_per_s_per_gpu": 175,
        "output_tokens_per_s_per_gpu": 25,
        "input_tokens_per_s_per_gpu": 150,
        "output_tokens_per_s_per_user": 50,
        "duration_s": 5,
        "gpus": 8,
        "requests_per_s": 3.5,
    }
    lone = build_aggregate(parse_records(_lines([_record(3, 3, 1, 1)])), {}, SHAPE)
    assert headline(lone, num_gpus=8, requests_per_s=1.0) is None


INFERENCEX_VAR = "INFX_INFERENCEX_CHECKOUT"


def test_inferencex_own_aggregation_gives_the_same_request_metrics(tmp_path: Path) -> None:
    """Runs InferenceX's ``process_agentic_result`` from a checkout named by
    ``$INFX_INFERENCEX_CHECKOUT`` on the same records; skipped without one."""
    checkout = os.environ.get(INFERENCEX_VAR)
    if not checkout:
        pytest.skip(f"set {INFERENCEX_VAR} to an InferenceX checkout to compare with its code")
    artifacts = tmp_path / "results" / "aiperf_artifacts"
    artifacts.mkdir(parents=True)
    (artifacts / "profile_export.jsonl").write_text("".join(_lines(RECORDS)))
    env = {
        **os.environ,
        "RESULT_FILENAME": "ref",
        "RESULT_DIR": str(tmp_path / "results"),
        "AGENTIC_OUTPUT_DIR": str(tmp_path / "out"),
        "KV_OFFLOADING": "none",
        "TP": "4",
        "PCP_SIZE": "2",
        "CONC": "8",
        "FRAMEWORK": "vllm",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "utils.agentic.aggregation.process_agentic_result"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads((tmp_path / "out" / "ref.json").read_text())
    ours = build_aggregate(parse_records(_lines(RECORDS)), {}, SHAPE)
    assert ours["request_metrics"] == theirs["request_metrics"]
    assert ours["request_accounting"] == theirs["request_accounting"]
