from __future__ import annotations

from pathlib import Path

import pytest
from results.samples import cell, fixed

from pytest_infx.fixedseq.kind import BENCHMARK, KIND
from pytest_infx.results.layout import Layout


def test_a_point_is_kept_under_fixed_seq_len_and_its_row_is_inferencex_s(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert KIND.result_path(layout, "f[tp1]") == layout.fixed_point("f[tp1]")
    record = fixed()
    facts = KIND.row(record)
    assert (facts.benchmark, facts.dataset) == (BENCHMARK, "random")
    assert (facts.isl, facts.osl, facts.conc) == (
        record.point.isl,
        record.point.osl,
        record.point.concurrency,
    )


def test_only_figures_the_history_knows_are_its_metrics() -> None:
    record = fixed(figures={"tput_per_gpu": 350.0, "not_a_metric": 1.0})
    assert KIND.metrics(record) == {"tput_per_gpu": 350.0}
    assert KIND.figure(fixed()) == "40.0 output tok/s/GPU"


def test_another_kind_s_record_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"not a fixed-seq-len point's"):
        KIND.figure(cell())


def test_the_end_of_run_table_has_a_line_per_point() -> None:
    assert KIND.title == "infx fixed-seq-len"
    record = fixed()
    assert [line.split()[0] for line in KIND.table([record])][1:] == [record.id]
    assert KIND.table([]) == []
