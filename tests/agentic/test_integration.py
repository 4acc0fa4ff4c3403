"""Real aiperf 0.13.0, AgentX scenario, shipped traces, against the stand-in server.

aiperf replays exactly 100 requests (no trajectory warm-up, so the stand-in's request counter and
aiperf's profiling phase see the same requests) and the stand-in fails an exact share of them,
which puts the gate on both sides of its 10% threshold.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from results.samples import identity

from pytest_infx.agentic import (
    AgenticRun,
    check_requests,
    default_traces_path,
    render_tables,
    result_record,
    run_aiperf,
)

TOKENIZER = Path(__file__).parent / "data" / "tokenizer"


def _run(aiperf: Path, url: str, out: Path) -> AgenticRun:
    return AgenticRun(
        aiperf=aiperf,
        url=url,
        model="standin",
        tokenizer=str(TOKENIZER),
        concurrency=16,
        duration_s=90,
        grace_period_s=10,
        request_count=100,
        trajectory_start_ratio=(0.0, 0.0),
        traces=default_traces_path(),
        artifact_dir=out,
        gpus=2,
        extra_args=("--no-server-metrics", "--no-gpu-telemetry"),
    )


@pytest.mark.engine
@pytest.mark.parametrize(
    ("fraction", "failed", "passed"), [("0.11", 11, False), ("0.10", 10, True)]
)
def test_gate_on_a_real_aiperf_run(
    aiperf_path: Path,
    start_standin: Callable[..., Any],
    tmp_path: Path,
    fraction: str,
    failed: int,
    passed: bool,
) -> None:
    server = start_standin(fraction)
    lines: list[str] = []
    result = run_aiperf(_run(aiperf_path, server.url, tmp_path), on_line=lines.append)
    stats = server.stop()
    assert stats == f"STATS chat_requests=100 failed={failed}"
    assert (result.total, result.failed, result.completed) == (100, failed, 100 - failed)
    assert result.submission_valid is False
    assert result.submission_invalid_reasons == ("unsafe_override",)
    assert result.scenario == "inferencex-agentx-mvp"
    assert result.output_throughput > 0 and result.ttft_ms is not None
    assert any("Scenario violation (override active)" in line for line in lines)
    verdict = check_requests(result)
    assert verdict.passed is passed
    if not passed:
        assert verdict.message.startswith("11 of 100 requests failed (11.0% > 10.0% threshold)")
    point = identity("standin-agentic", 2, 16, model="standin", engine="standin")
    table = render_tables([result_record(point, result, verdict=verdict)])
    assert f"{failed}/100 ({failed:.1f}%) *" in table
