from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_infx.speedbench.dataset import default_dataset_path

from .conftest import Sweep

DEFAULT_ROWS = sum(1 for line in default_dataset_path().read_text().splitlines() if line.strip())


def _failed_cell(sweep: Sweep, item_id: str, code: str) -> dict[str, Any]:
    cell = sweep.cell(item_id)
    assert cell["verdict"] == "fail" and cell["al"] is None
    assert any(r.startswith(f"{code}: ") for r in cell["reasons"]), cell["reasons"]
    return cell


def _run(sweep: Sweep, faults: Sequence[str], **fields: Any) -> pytest.RunResult:
    sweep.add("fake-cpu-vllm", faults=faults, **fields)
    return sweep.run("--snapshot-update")


def test_ignored_thinking_fails_the_thinking_on_cell_from_prompt_and_outputs(
    sweep: Sweep,
) -> None:
    result = _run(sweep, ["ignore-thinking"])
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*fake-cpu-vllm[[]k1-thinking_on[]] failed its checks:",
            "*- prompt_thinking_mismatch: thinking is on but the rendered prompt opens no"
            " <think> block*",
            "*- output_thinking_mismatch: 4 of 4 outputs have no reasoning although thinking"
            " is on*",
        ]
    )
    _failed_cell(sweep, "fake-cpu-vllm[k1-thinking_on]", "prompt_thinking_mismatch")
    assert sweep.cell("fake-cpu-vllm[k1-thinking_off]")["verdict"] == "pass"


def test_empty_outputs_fail_the_cell(sweep: Sweep) -> None:
    result = _run(sweep, ["empty-output=2"], modes=["thinking_off"])
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*- empty_output: 2 of 4 completed requests returned no content, no reasoning and 0*"]
    )
    cell = _failed_cell(sweep, "fake-cpu-vllm[k1-thinking_off]", "empty_output")
    assert cell["requests"]["empty"] == 2


def test_failed_requests_fail_the_cell_with_the_count(sweep: Sweep) -> None:
    result = _run(
        sweep, ["fail-requests=2"], modes=["thinking_off"], dataset={"category": "coding"}
    )
    result.assert_outcomes(failed=1)
    done = DEFAULT_ROWS - 2
    result.stdout.fnmatch_lines(
        [
            f"*- requests_incomplete: {done}/{DEFAULT_ROWS} completed, 2 failed",
            f"*- requests_failed: 2 of {DEFAULT_ROWS} requests failed (2 http): *HTTP 500*",
        ]
    )
    cell = _failed_cell(sweep, "fake-cpu-vllm[k1-thinking_off]", "requests_incomplete")
    assert cell["requests"]["completed"] == done and cell["requests"]["failed"] == 2


def test_counters_reset_mid_pass_fail_the_cell(sweep: Sweep) -> None:
    result = _run(sweep, ["reset-counters"], modes=["thinking_off"])
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*- counters_reset: counters went down between the snapshots*: drafts 1000 -> *"]
    )
    cell = _failed_cell(sweep, "fake-cpu-vllm[k1-thinking_off]", "counters_reset")
    assert cell["counters"]["delta"]["decreased"]


def test_a_sweep_without_any_al_exits_non_zero_with_the_critical_line(sweep: Sweep) -> None:
    result = _run(sweep, ["fail-requests=1000"])
    result.assert_outcomes(failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["CRITICAL: no SPEED-Bench cell produced an AL value; the sweep fails"]
    )
