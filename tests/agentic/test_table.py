from __future__ import annotations

from pathlib import Path

from results.samples import identity

from pytest_infx.agentic.record import result_record
from pytest_infx.agentic.results import parse_export
from pytest_infx.agentic.table import render_tables
from pytest_infx.results.records import GpuTelemetry, InferencexThroughput


def test_one_table_per_recipe_rows_by_tp_then_concurrency(data_dir: Path) -> None:
    ok = parse_export(data_dir / "profile_export_ok.json", gpus=1)
    bad = parse_export(data_dir / "profile_export_errors11.json", gpus=2)
    records = [
        result_record(identity("b-recipe", 2, 16), bad),
        result_record(identity("b-recipe", 4, 1), ok),
        result_record(identity("b-recipe", 2, 4), ok),
        result_record(identity("a-recipe", 1, 1), ok),
    ]
    text = render_tables(records)
    blocks = text.split("\n\n")
    assert [block.splitlines()[0] for block in blocks] == ["a-recipe", "b-recipe"]
    header = blocks[1].splitlines()[1].split()
    assert header[:3] == ["TP", "conc", "tok/s/GPU"]
    assert "TTFT p50 ms" in blocks[1] and "TPOT p50 ms" in blocks[1]
    rows = blocks[1].splitlines()[3:6]
    assert [row.split()[:2] for row in rows] == [["4", "1"], ["2", "4"], ["2", "16"]]
    assert "11/100 (11.0%) *" in rows[2]
    assert f"{bad.output_throughput_per_gpu:,.1f}" in rows[2]
    assert f"{bad.ttft_ms.p99:,.1f}" in rows[2]  # type: ignore[union-attr]
    assert blocks[1].splitlines()[-1].startswith("* submission_valid=false")


def test_missing_latencies_render_as_dash(data_dir: Path) -> None:
    record = result_record(
        identity("r", 1, 1), parse_export(data_dir / "profile_export_ok.json", gpus=1)
    )
    latency = record.latency_ms.model_copy(update={"ttft": None})
    record = record.model_copy(
        update={"latency_ms": latency, "interactivity_tokens_per_s_per_user": None}
    )
    row = render_tables([record]).splitlines()[3].split()
    assert row[3] == "-" and row[4] == "-" and row[6] == "-"


def test_the_inferencex_total_per_gpu_is_its_own_column(data_dir: Path) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=1)
    throughput = InferencexThroughput(
        method="inferencex",
        total_tokens_per_s=9876.0,
        output_tokens_per_s=200.0,
        input_tokens_per_s=9676.0,
        total_tokens_per_s_per_gpu=1234.5,
        output_tokens_per_s_per_gpu=25.0,
        input_tokens_per_s_per_gpu=1209.5,
        output_tokens_per_s_per_user=None,
        duration_s=10.0,
        gpus=8,
        requests_per_s=1.0,
    )
    record = result_record(identity("r", 8, 4), result, throughput=throughput)
    lines = render_tables([record]).splitlines()
    assert "total tok/s/GPU" in lines[1]
    row = lines[3].split()
    assert row[2] == "25.0"
    assert row[7] == "1,234.5"
    aiperf_only = result_record(identity("r", 1, 1), result)
    assert render_tables([aiperf_only]).splitlines()[3].split()[7] == "-"


def test_gpu_power_and_tokens_per_joule_are_columns_where_a_point_has_them(
    data_dir: Path,
) -> None:
    result = parse_export(data_dir / "profile_export_ok.json", gpus=1)
    plain = result_record(identity("r", 1, 1), result)
    telemetry = GpuTelemetry(
        gpus=[0],
        samples=60,
        seconds=60.5,
        mean_power_w=612.4,
        peak_power_w=700.0,
        energy_j=37050.0,
        mean_utilization_pct=91.0,
        peak_temperature_c=58.0,
        peak_memory_mib=120000.0,
        output_tokens_per_joule=0.084,
    )
    measured = result_record(identity("r", 1, 4), result).model_copy(
        update={"gpu_telemetry": telemetry}
    )
    lines = render_tables([plain, measured]).splitlines()
    header = lines[1].split("  ")
    assert [cell.strip() for cell in header if cell.strip()][-3:] == ["GPU W", "tok/J", "errors"]
    assert "612" in lines[4] and "0.08" in lines[4]
    cells = [cell.strip() for cell in lines[3].split("  ") if cell.strip()]
    assert cells[-3:-1] == ["-", "-"]
    assert "GPU W" not in render_tables([plain])
