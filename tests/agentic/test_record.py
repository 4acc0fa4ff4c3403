from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_infx.agentic.gate import check_requests
from pytest_infx.agentic.record import result_record
from pytest_infx.agentic.results import parse_export

IDENTITY = {
    "recipe": "mimov2.6flash-fp4-b200-sglang-agentic",
    "model": "XiaomiMiMo/MiMo-V2.6-Flash",
    "engine": "sglang",
    "image": "lmsysorg/sglang:v0.5.21-cu130",
    "tp": 4,
    "concurrency": 32,
    "gpu": "b200",
}


def test_record_carries_identity_numbers_and_verdict(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_errors11.json", gpus=4)
    record = result_record(IDENTITY, result, verdict=check_requests(result))
    assert json.loads(json.dumps(record)) == record
    assert record["kind"] == "agentic"
    assert record["point"] == {"tp": 4, "concurrency": 32}
    assert {key: record[key] for key in IDENTITY} == IDENTITY
    assert record["requests"] == {"total": 100, "completed": 89, "failed": 11, "error_ratio": 0.11}
    per_gpu = record["throughput"]["output_tokens_per_s_per_gpu"]
    assert per_gpu == pytest.approx(result.output_throughput / 4)
    assert record["latency_ms"]["ttft"]["p99"] == result.ttft_ms.p99  # type: ignore[union-attr]
    assert record["submission_valid"] is False
    assert record["submission_invalid_reasons"] == ["unsafe_override"]
    assert record["verdict"] == "fail"
    assert record["reasons"][0].startswith("11 of 100 requests failed")
    assert record["failed_request_threshold"] == 0.10


def test_record_without_verdict_has_no_verdict_keys(data_dir: Path) -> None:
    record = result_record(IDENTITY, parse_export(data_dir / "profile_export_ok.json", gpus=4))
    assert "verdict" not in record and "reasons" not in record


def test_identity_must_be_complete(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=1)
    partial = {key: value for key, value in IDENTITY.items() if key not in ("image", "gpu")}
    with pytest.raises(ValueError, match="lacks image, gpu"):
        result_record(partial, result)
    with pytest.raises(ValueError, match="tp must be an integer >= 1"):
        result_record(IDENTITY | {"tp": "4"}, result)


def test_the_inferencex_throughput_block_replaces_aiperfs_summary(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=4)
    throughput = {"method": "inferencex", "output_tokens_per_s_per_gpu": 25.0, "gpus": 8}
    record = result_record(IDENTITY, result, throughput=throughput)
    assert record["throughput"] == {**throughput, "requests_per_s": result.request_rate}
    assert record["aiperf"]["output_tokens_per_s"] == result.output_throughput
    assert record["aiperf"]["exit_code"] == 0
    plain = result_record(IDENTITY, result)
    assert plain["throughput"]["method"] == "aiperf"
    assert plain["throughput"]["output_tokens_per_s_per_gpu"] == result.output_throughput / 4
