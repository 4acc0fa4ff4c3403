from __future__ import annotations

from pytest_infx.results.tally import RecordTally
from results.samples import cell, fixed, point


def test_each_kind_s_records_are_kept_apart_in_the_order_they_came() -> None:
    summary = RecordTally()
    first, again = cell(al=1.5), cell(al=2.5)
    for record in (first, point(), again, fixed()):
        summary.add(record)
    assert summary.of("speedbench") == [first, again]
    assert [r.kind for r in summary.of("agentic") + summary.of("fixed_seq_len")] == [
        "agentic",
        "fixed_seq_len",
    ]
    assert summary.of("other") == []
    summary.of("speedbench").clear()
    assert len(summary.of("speedbench")) == 2, "a reader gets a copy"
