"""A result record as the history's row: its config, the point's key and its figures.

Both the run (as each point finishes) and ``infx db ingest`` (for a results folder written
earlier) make rows here, so a point ingested later has the same key it would have had. The
parts only a record's kind knows come from its kind, which the caller's kinds name.
"""

from __future__ import annotations

from pytest_infx.history.metrics import of_record
from pytest_infx.history.store import PointRow
from pytest_infx.results import verdict
from pytest_infx.results.kind import Kinds
from pytest_infx.results.records import Record


def reason_of(record: Record, golden: str | None) -> str:
    """Why a point failed, as its stored row says: its own checks' reasons, or its golden
    curve; empty for a point that passed both."""
    reasons = list(record.reasons)
    if not record.passed and not reasons:
        reasons.append("failed its own checks")
    if golden == verdict.Verdict.FAIL:
        reasons.append("AL outside its golden curve's tolerance")
    return "; ".join(reasons)


def row_of(record: Record, kinds: Kinds) -> PointRow:
    """The row of one of our records; a record without its config (written before records
    carried one) has no key, and is a ValueError the ingest counts as skipped."""
    if record.config is None:
        raise ValueError(
            f"{record.id}: the record has no config identity (written by a pytest-infx before "
            "record version 2); run the point again to store it"
        )
    kind = kinds.of(record)
    facts = kind.row(record)
    golden = facts.golden
    return PointRow(
        config=record.config,
        kind=facts.benchmark,
        conc=facts.conc,
        cell=facts.cell,
        item=record.id,
        recipe=record.recipe,
        dataset=facts.dataset,
        status=verdict.of(record.passed and golden != verdict.Verdict.FAIL),
        metrics=of_record(record, kind),
        golden=golden,
        reason=reason_of(record, golden),
        isl=facts.isl,
        osl=facts.osl,
    )
