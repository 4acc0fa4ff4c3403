"""Rows and runs for the history's tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from pytest_infx.history.store import PointRow, RunStamp
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.verdict import Verdict

START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
CONFIG = ConfigIdentity(
    model_prefix="smollm2",
    hardware="cpu",
    framework="vllm",
    engine_version="0.32.0",
    precision="bf16",
    spec_method="none",
    tp=1,
)


def stamp(run_id: str, *, branch: str = "main", day: int = 0, attempt: int = 1) -> RunStamp:
    return RunStamp(
        run_id=run_id,
        attempt=attempt,
        branch=branch,
        commit=f"{day:040x}",
        started=START + timedelta(days=day),
        machine="test",
        plugin_version="0.1.0",
    )


def row(tput: float = 100.0, **fields: object) -> PointRow:
    base = PointRow(
        config=CONFIG,
        kind="agentic",
        conc=4,
        cell="",
        item="smollm2-cpu[tp1-c4]",
        recipe="smollm2-cpu",
        dataset="builtin-traces",
        status=Verdict.PASS,
        metrics={"tput_per_gpu": tput, "median_ttft": 0.5, "median_intvty": 20.0},
    )
    return replace(base, **fields)  # type: ignore[arg-type]
