from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.agentic.results import ExportError, parse_export


def _export(data_dir: Path, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((data_dir / name).read_text())
    return loaded


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(data))
    return path


def test_real_export_with_failures(data_dir: Path) -> None:
    raw = _export(data_dir, "profile_export_errors11.json")
    result = parse_export(data_dir / "profile_export_errors11.json", gpus=4)
    assert (result.total, result.completed, result.failed) == (100, 89, 11)
    assert result.error_ratio == pytest.approx(0.11)
    assert result.aiperf_version == "0.13.0"
    assert result.scenario == "inferencex-agentx-mvp"
    assert result.submission_valid is False
    assert result.submission_invalid_reasons == ("unsafe_override",)
    throughput = raw["output_token_throughput"]["avg"]
    assert result.output_throughput == pytest.approx(throughput)
    assert result.output_throughput_per_gpu == pytest.approx(throughput / 4)
    ttft = raw["time_to_first_token"]
    assert result.ttft_ms is not None
    assert (result.ttft_ms.p50, result.ttft_ms.p99) == (ttft["p50"], ttft["p99"])
    itl = raw["inter_token_latency"]
    assert result.tpot_ms is not None and result.tpot_ms.p50 == itl["p50"]
    assert result.interactivity == pytest.approx(1000.0 / itl["p50"])
    e2e = raw["request_latency"]
    assert result.e2e_ms is not None and result.e2e_ms.p90 == e2e["p90"]
    assert sum(kind.count for kind in result.errors) == 11
    assert {kind.code for kind in result.errors} == {500}


def test_real_clean_export(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=1)
    assert result.failed == 0 and result.completed == result.total > 0
    assert result.errors == ()
    assert result.request_rate > 0 and result.duration_s > 0
    assert result.output_tokens > 0


def test_missing_export_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "profile_export_aiperf.json"
    with pytest.raises(ExportError, match=f"{path}: aiperf export not found"):
        parse_export(path, gpus=1)


def test_truncated_export_names_the_file(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text((data_dir / "profile_export_ok.json").read_text()[:500])
    with pytest.raises(ExportError, match=f"{path}: not valid JSON"):
        parse_export(path, gpus=1)


def test_other_json_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, {"records": []})
    with pytest.raises(ExportError, match="not an aiperf profile export"):
        parse_export(path, gpus=1)


def test_inconsistent_counts_are_refused(tmp_path: Path, data_dir: Path) -> None:
    data = _export(data_dir, "profile_export_errors11.json")
    data["completed_request_count"] = {"unit": "requests", "avg": 99.0}
    with pytest.raises(ExportError, match="completed_request_count=99 is not request_count=89"):
        parse_export(_write(tmp_path, data), gpus=1)


def test_changed_units_are_refused(tmp_path: Path, data_dir: Path) -> None:
    data = _export(data_dir, "profile_export_ok.json")
    data["time_to_first_token"]["unit"] = "sec"
    with pytest.raises(ExportError, match="'time_to_first_token' is in 'sec', expected 'ms'"):
        parse_export(_write(tmp_path, data), gpus=1)


def test_non_numeric_stat_is_named(tmp_path: Path, data_dir: Path) -> None:
    data = _export(data_dir, "profile_export_ok.json")
    data["request_latency"]["p99"] = "slow"
    with pytest.raises(ExportError, match=r"request_latency\.p99 must be a number"):
        parse_export(_write(tmp_path, data), gpus=1)


def test_all_failed_export_has_no_latencies(tmp_path: Path, data_dir: Path) -> None:
    data = _export(data_dir, "profile_export_errors11.json")
    for tag in list(data):
        value = data[tag]
        if isinstance(value, dict) and "unit" in value and tag != "benchmark_duration":
            del data[tag]
    data["error_request_count"] = {"unit": "requests", "avg": 7.0}
    result = parse_export(_write(tmp_path, data), gpus=1)
    assert (result.total, result.completed, result.failed) == (7, 0, 7)
    assert result.ttft_ms is None and result.tpot_ms is None and result.interactivity is None
    assert result.output_throughput == 0.0


def test_gpus_must_be_positive(data_dir: Path) -> None:
    with pytest.raises(ValueError, match="gpus must be >= 1"):
        parse_export(data_dir / "profile_export_ok.json", gpus=0)
