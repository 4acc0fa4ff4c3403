"""AgentX points: drive aiperf's agentic replay, parse its export, gate on failed requests."""

from __future__ import annotations

from pytest_infx.agentic.gate import (
    DEFAULT_FAILED_REQUEST_THRESHOLD,
    GateVerdict,
    check_requests,
    parse_threshold,
)
from pytest_infx.agentic.record import result_record
from pytest_infx.agentic.results import (
    AgenticResult,
    ExportError,
    MeasuredPercentiles,
    parse_export,
)
from pytest_infx.agentic.runner import AgenticRun, AgenticRunError, build_argv, run_aiperf
from pytest_infx.agentic.table import render_tables
from pytest_infx.agentic.traces import TraceError, TraceSet, default_traces_path, load_traces

__all__ = [
    "DEFAULT_FAILED_REQUEST_THRESHOLD",
    "AgenticResult",
    "AgenticRun",
    "AgenticRunError",
    "ExportError",
    "GateVerdict",
    "MeasuredPercentiles",
    "TraceError",
    "TraceSet",
    "build_argv",
    "check_requests",
    "default_traces_path",
    "load_traces",
    "parse_export",
    "parse_threshold",
    "render_tables",
    "result_record",
    "run_aiperf",
]
