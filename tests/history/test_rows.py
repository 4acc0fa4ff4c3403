from __future__ import annotations

import pytest
from results.samples import cell, point

from history.samples import CONFIG
from pytest_infx.history.rows import row_of
from pytest_infx.kinds import KINDS


def test_a_cell_row_keys_on_its_draft_length_and_thinking_mode() -> None:
    record = cell(config=CONFIG.model_dump())
    row = row_of(record, KINDS)
    assert (row.kind, row.cell, row.conc, row.status, row.golden) == (
        "speedbench",
        "k2-thinking_off",
        4,
        "pass",
        "pass",
    )
    assert row.config == CONFIG and row.metrics["al"] == 2.08


def test_an_agentx_row_keys_on_its_variant() -> None:
    record = point(
        config=CONFIG.model_dump(), point={"tp": 1, "concurrency": 2, "variant": "hicache"}
    )
    assert (row_of(record, KINDS).cell, row_of(record, KINDS).dataset) == (
        "hicache",
        "builtin-traces",
    )


def test_a_failed_record_is_a_failed_row_and_a_recorded_curve_says_so() -> None:
    assert row_of(point(config=CONFIG.model_dump(), verdict="fail"), KINDS).status == "fail"
    recorded = cell(config=CONFIG.model_dump(), golden={"curve": "c", "ok": True, "recorded": True})
    assert row_of(recorded, KINDS).golden == "recorded"


def test_a_record_without_its_config_has_no_row() -> None:
    with pytest.raises(ValueError, match=r"no config identity.*before record version 2"):
        row_of(cell(**{"config!": None}), KINDS)


def test_a_cell_outside_its_golden_curve_is_stored_failed_with_why() -> None:
    record = cell(config=CONFIG.model_dump(), golden__ok=False, golden__drifted=1)
    assert record.passed, "its own checks passed: only the golden gate failed it"
    row = row_of(record, KINDS)
    assert (row.status, row.golden) == ("fail", "fail")
    assert row.reason == "AL outside its golden curve's tolerance"


def test_a_failed_record_s_reasons_are_its_row_s() -> None:
    record = point(config=CONFIG.model_dump(), verdict="fail", reasons=["3 of 10 failed"])
    assert (row_of(record, KINDS).status, row_of(record, KINDS).reason) == (
        "fail",
        "3 of 10 failed",
    )
