from __future__ import annotations

import pytest
from results.samples import TELEMETRY, cell, point

from pytest_infx.history.metrics import of_inferencex
from pytest_infx.history.metrics import of_record as of_kind
from pytest_infx.kinds import KINDS
from pytest_infx.results.records import Record


def of_record(record: Record) -> dict[str, float]:
    return of_kind(record, KINDS.of(record))


def test_a_cell_gives_its_al_and_output_rate_per_gpu() -> None:
    found = of_record(cell(point__tp=2))
    assert found["al"] == 2.08
    assert found["output_tput"] == pytest.approx(256 / 1.5)
    assert found["output_tput_per_gpu"] == pytest.approx(256 / 1.5 / 2)


def test_a_failed_cell_has_no_al() -> None:
    assert "al" not in of_record(cell(al=None, verdict="fail"))


def test_an_agentx_point_gives_inferencex_names_in_seconds() -> None:
    found = of_record(
        point(
            **{
                "latency_ms": {
                    "ttft": {"p50": 10.0, "p90": 20.0, "p99": 30.0},
                    "tpot": {"p50": 50.0, "p90": 60.0, "p99": 80.0},
                    "e2e": None,
                }
            }
        )
    )
    assert found["output_tput_per_gpu"] == 50.0
    assert found["median_ttft"] == pytest.approx(0.010)
    assert found["p99_ttft"] == pytest.approx(0.030)
    assert found["median_intvty"] == pytest.approx(20.0)
    assert "tput_per_gpu" not in found


def test_a_point_with_gpu_telemetry_gives_its_power_and_tokens_per_joule() -> None:
    found = of_record(point(gpu_telemetry=TELEMETRY))
    assert (found["gpu_power_w"], found["output_tokens_per_joule"]) == (1310.5, 2.1)
    unmeasured = of_record(point(gpu_telemetry={**TELEMETRY, "output_tokens_per_joule": None}))
    assert "output_tokens_per_joule" not in unmeasured and unmeasured["gpu_power_w"] == 1310.5
    assert "gpu_power_w" not in of_record(point())


def test_inferencex_throughput_gives_the_total_per_gpu() -> None:
    throughput = {
        "method": "inferencex",
        "total_tokens_per_s": 300.0,
        "output_tokens_per_s": 100.0,
        "input_tokens_per_s": 200.0,
        "total_tokens_per_s_per_gpu": 150.0,
        "output_tokens_per_s_per_gpu": 50.0,
        "input_tokens_per_s_per_gpu": 100.0,
        "output_tokens_per_s_per_user": None,
        "duration_s": 10.0,
        "gpus": 2,
        "requests_per_s": 1.0,
    }
    found = of_record(point(throughput=throughput))
    assert (found["tput_per_gpu"], found["input_tput_per_gpu"]) == (150.0, 100.0)


def test_a_processed_fixed_seq_len_file_is_read_by_its_keys() -> None:
    found = of_inferencex(
        {
            "tput_per_gpu": 1200,
            "median_ttft": 0.25,
            "p99.9_tpot": 0.02,
            "median_intvty": 55.5,
            "hw": "b200",
            "disagg": False,
        }
    )
    assert found == {
        "tput_per_gpu": 1200.0,
        "median_ttft": 0.25,
        "p99.9_tpot": 0.02,
        "median_intvty": 55.5,
    }


def test_an_agentx_aggregate_is_read_from_request_metrics() -> None:
    found = of_inferencex(
        {
            "request_metrics": {
                "throughput": {
                    "per_gpu": {
                        "total_tput_tps": 900.0,
                        "output_tput_tps": 90.0,
                        "input_tput_tps": 810.0,
                    }
                },
                "latency": {"ttft": {"mean": 0.3, "p50": 0.2, "p90": 0.5}, "intvty": {"p50": 40.0}},
            }
        }
    )
    assert found["tput_per_gpu"] == 900.0
    assert found["median_ttft"] == 0.2 and found["p90_ttft"] == 0.5
    assert found["median_intvty"] == 40.0
