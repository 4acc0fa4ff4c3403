from __future__ import annotations

from pathlib import Path

from pytest_infx.golden.compare import CompareOptions, compare_curves
from pytest_infx.golden.curve import Curve
from pytest_infx.golden.report import append_step_summary, drift_summary

GOLDEN = Curve(name="demo_mtp", model_key="m", modes={"thinking_on": {1: 1.8, 2: 2.4, 3: 2.9}})
CLEAN = Curve(name="clean_mtp", model_key="m", modes={"thinking_off": {1: 1.7, 2: 2.2}})


def test_summary_has_one_row_per_curve_and_details_for_drift() -> None:
    drifted = Curve(name="demo_mtp", model_key="m", modes={"thinking_on": {1: 1.81, 2: 2.55}})
    results = [compare_curves(GOLDEN, drifted), compare_curves(CLEAN, CLEAN)]
    text = drift_summary(results)
    lines = text.splitlines()
    assert lines[0] == "### Golden AL drift"
    assert "2 curves, 4 cells checked, 1 drifted; 1 curves out of tolerance." in lines
    assert "| `clean_mtp` | 2 | 0 | 0 | +0.00 (k=1 thinking_off) | 0.05 | ok |" in lines
    assert "| `demo_mtp` | 2 | 1 | 1 | +0.15 (k=2 thinking_on) | 0.05 | drift |" in lines
    assert lines.index("| `clean_mtp` | 2 | 0 | 0 | +0.00 (k=1 thinking_off) | 0.05 | ok |") < (
        lines.index("| `demo_mtp` | 2 | 1 | 1 | +0.15 (k=2 thinking_on) | 0.05 | drift |")
    )
    assert "- k=2 thinking_on: golden 2.40, measured 2.55, delta +0.15, allowed 0.05" in lines
    assert "- k=3 thinking_on is in the golden curve but was not measured" in lines
    assert "**clean_mtp**" not in text


def test_summary_of_nothing_says_so() -> None:
    assert "No golden curve was compared." in drift_summary([])


def test_a_curve_with_only_na_cells_has_no_largest_delta() -> None:
    golden = Curve(name="na", model_key="m", modes={"thinking_on": {1: None}})
    result = compare_curves(golden, golden, CompareOptions())
    assert "| `na` | 1 | 0 | 0 | - | 0.05 | ok |" in drift_summary([result])


def test_append_step_summary_writes_where_github_says(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier\n")
    results = [compare_curves(CLEAN, CLEAN)]
    assert append_step_summary(results, environ={"GITHUB_STEP_SUMMARY": str(target)}) == target
    assert target.read_text() == "earlier\n" + drift_summary(results)
    assert append_step_summary(results, environ={}) is None
