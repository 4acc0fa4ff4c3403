from __future__ import annotations

from pathlib import Path

import pytest
from results.samples import cell, point

from pytest_infx.results.kind import RowFacts
from pytest_infx.results.layout import Layout
from pytest_infx.speedbench.kind import KIND


def test_a_cell_is_kept_under_cells_and_keyed_by_draft_length_and_thinking(
    tmp_path: Path,
) -> None:
    layout = Layout(tmp_path)
    assert KIND.result_path(layout, "r[k2-x]") == layout.cell("r[k2-x]")
    assert KIND.row(cell()) == RowFacts(
        benchmark="speedbench", dataset="speedbench", conc=4, cell="k2-thinking_off", golden="pass"
    )
    recorded = cell(golden={"curve": "c", "ok": True, "recorded": True})
    assert KIND.row(recorded).golden == "recorded"
    assert KIND.row(cell(golden=None)).golden is None


def test_a_cell_s_figures_and_headline() -> None:
    found = KIND.metrics(cell(point__tp=2))
    assert found["al"] == 2.08 and found["output_tput_per_gpu"] == found["output_tput"] / 2
    assert KIND.figure(cell()) == "AL 2.08"
    assert KIND.figure(cell(al=None, verdict="fail")) == "passed"


def test_another_kind_s_record_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"is a agentic record, not a SPEED-Bench cell's"):
        KIND.metrics(point())


def test_the_end_of_run_table_is_the_al_table() -> None:
    assert KIND.title == "infx acceptance length"
    assert KIND.table([cell()])[2].split() == ["2", "2.08"]


def test_a_cell_in_passes_gives_the_history_their_medians_and_a_failed_one_no_al() -> None:
    passes = [{"al": 2.0, "output_tput": 10.0}, {"al": 3.0, "output_tput": 30.0}]
    median = {"al": 2.5, "output_tput": 20.0}
    measured = KIND.metrics(cell(al=2.5, passes=passes, median=median))
    assert (measured["al"], measured["output_tput"]) == (2.5, 20.0)
    failed = KIND.metrics(cell(al=None, verdict="fail", passes=passes, median=median))
    assert "al" not in failed and failed["output_tput"] == 20.0
