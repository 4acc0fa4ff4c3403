from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pydantic import ValidationError
from results.samples import identity

from pytest_infx.agentic.gate import check_requests
from pytest_infx.agentic.record import result_record, unmeasured
from pytest_infx.agentic.results import parse_export
from pytest_infx.results.records import InferencexThroughput, parse_record

IDENTITY = identity(
    "mimov2.6flash-fp4-b200-sglang-agentic",
    4,
    32,
    model="XiaomiMiMo/MiMo-V2.6-Flash",
    engine="sglang",
    image="lmsysorg/sglang:v0.5.21-cu130",
    gpu="b200",
)


def test_record_carries_identity_numbers_and_verdict(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_errors11.json", gpus=4)
    record = result_record(IDENTITY, result, verdict=check_requests(result))
    assert parse_record(record.as_json()) == record
    assert record.kind == "agentic"
    assert (record.point.tp, record.point.concurrency) == (4, 32)
    assert (record.id, record.recipe, record.model, record.engine, record.image, record.gpu) == (
        IDENTITY.id,
        IDENTITY.recipe,
        IDENTITY.model,
        IDENTITY.engine,
        IDENTITY.image,
        IDENTITY.gpu,
    )
    assert record.server == IDENTITY.server and record.fingerprint == IDENTITY.fingerprint
    assert record.requests.model_dump() == {
        "total": 100,
        "completed": 89,
        "failed": 11,
        "error_ratio": 0.11,
    }
    per_gpu = record.throughput.output_tokens_per_s_per_gpu
    assert per_gpu == pytest.approx(result.output_throughput / 4)
    assert record.latency_ms.ttft is not None and result.ttft_ms is not None
    assert record.latency_ms.ttft.p99 == result.ttft_ms.p99
    assert record.submission_valid is False
    assert record.submission_invalid_reasons == ["unsafe_override"]
    assert record.verdict == "fail" and not record.passed
    assert record.reasons[0].startswith("11 of 100 requests failed")
    assert record.failed_request_threshold == 0.10


def test_record_without_verdict_has_none(data_dir: Path) -> None:
    record = result_record(IDENTITY, parse_export(data_dir / "profile_export_ok.json", gpus=4))
    assert record.verdict is None and record.reasons == [] and not record.passed


def test_identity_must_be_whole(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=1)
    with pytest.raises(ValidationError, match="tp"):
        result_record(identity(tp=0), result)
    with pytest.raises(ValidationError, match="id"):
        result_record(identity(id=""), result)


def test_the_inferencex_throughput_block_replaces_aiperfs_summary(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=4)
    throughput = InferencexThroughput(
        method="inferencex",
        total_tokens_per_s=100.0,
        output_tokens_per_s=25.0,
        input_tokens_per_s=75.0,
        total_tokens_per_s_per_gpu=12.5,
        output_tokens_per_s_per_gpu=3.125,
        input_tokens_per_s_per_gpu=9.375,
        output_tokens_per_s_per_user=None,
        duration_s=1.0,
        gpus=8,
        requests_per_s=result.request_rate,
    )
    record = result_record(IDENTITY, result, throughput=throughput, inferencex_result="x.json")
    assert record.throughput == throughput and record.inferencex_result == "x.json"
    assert record.aiperf.output_tokens_per_s == result.output_throughput
    assert record.aiperf.exit_code == 0
    plain = result_record(IDENTITY, result)
    assert plain.throughput.method == "aiperf"
    assert plain.throughput.output_tokens_per_s_per_gpu == result.output_throughput / 4


def test_a_non_finite_figure_aiperf_measured_fails_the_point_and_the_record_is_still_kept(
    data_dir: Path, tmp_path: Path
) -> None:
    export = json.loads((data_dir / "profile_export_ok.json").read_text(encoding="utf-8"))
    export["output_token_throughput"]["avg"] = math.nan
    export["time_to_first_token"]["p99"] = math.inf
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    result = parse_export(path, gpus=4)
    verdict = check_requests(result)
    assert verdict.passed, "the requests themselves passed their gate"
    record = result_record(IDENTITY, result, verdict=verdict)
    assert record.verdict == "fail" and not record.passed
    assert record.throughput.output_tokens_per_s_per_gpu is None
    assert record.aiperf.output_tokens_per_s is None and record.latency_ms.ttft is None
    assert record.latency_ms.tpot is not None
    assert record.reasons == list(unmeasured(result))
    assert record.reasons == [
        f"aiperf measured output_token_throughput = nan in {path}, not a finite figure of at "
        "least 0; the point has no such measurement",
        f"aiperf measured time_to_first_token.p99 = inf in {path}, not a finite figure of at "
        "least 0; the point has no such measurement",
    ]
    assert parse_record(record.as_json()) == record, "the kept record reads back"
