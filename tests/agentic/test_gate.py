from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_infx.agentic.gate import check_requests, parse_threshold
from pytest_infx.agentic.results import AgenticResult, parse_export


def _with_counts(data_dir: Path, *, completed: int, failed: int) -> AgenticResult:
    base = parse_export(data_dir / "profile_export_errors11.json", gpus=1)
    return dataclasses.replace(base, total=completed + failed, completed=completed, failed=failed)


def test_eleven_percent_fails_with_the_numbers(data_dir: Path) -> None:
    verdict = check_requests(_with_counts(data_dir, completed=89, failed=11))
    assert not verdict.passed
    assert verdict.message.startswith("11 of 100 requests failed (11.0% > 10.0% threshold)")
    assert "top error" in verdict.message and "500" in verdict.message


def test_exactly_ten_percent_passes(data_dir: Path) -> None:
    verdict = check_requests(_with_counts(data_dir, completed=90, failed=10))
    assert verdict.passed and verdict.reasons == ()


def test_ten_percent_passes_at_any_count(data_dir: Path) -> None:
    for total in (10, 30, 70, 1000, 4470):
        failed = total // 10
        result = _with_counts(data_dir, completed=total - failed, failed=failed)
        assert check_requests(result).passed, total


def test_zero_completed_fails(data_dir: Path) -> None:
    verdict = check_requests(_with_counts(data_dir, completed=0, failed=0))
    assert not verdict.passed
    assert verdict.reasons[0].startswith("no request completed (0 finished, 0 failed)")


def test_zero_completed_fails_even_under_a_lax_threshold(data_dir: Path) -> None:
    verdict = check_requests(_with_counts(data_dir, completed=0, failed=5), threshold=1.0)
    assert not verdict.passed and "no request completed (5 finished, 5 failed)" in verdict.message


def test_threshold_is_configurable(data_dir: Path) -> None:
    result = _with_counts(data_dir, completed=89, failed=11)
    assert check_requests(result, threshold=0.11).passed
    strict = check_requests(_with_counts(data_dir, completed=99, failed=1), threshold=0.0)
    assert not strict.passed and "(1.0% > 0.0% threshold)" in strict.message


def test_parse_threshold() -> None:
    assert parse_threshold(None, source="env") == 0.10
    assert parse_threshold("0.25", source="env") == 0.25
    with pytest.raises(ValueError, match="AIPERF_FAILED_REQUEST_THRESHOLD: 'ten' is not a number"):
        parse_threshold("ten", source="AIPERF_FAILED_REQUEST_THRESHOLD")
    with pytest.raises(ValueError, match="a ratio, not a percent"):
        parse_threshold("10", source="--infx-agentic-error-threshold")
