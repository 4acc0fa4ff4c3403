from __future__ import annotations

from results.samples import cell, fixed, point

from pytest_infx.kinds import KINDS
from pytest_infx.results.records import AGENTIC, FIXED_SEQ_LEN, SPEEDBENCH


def test_every_record_kind_has_its_benchmark_kind() -> None:
    assert KINDS.names() == (SPEEDBENCH, AGENTIC, FIXED_SEQ_LEN)
    for record in (cell(), point(), fixed()):
        assert KINDS.of(record).name == record.kind
