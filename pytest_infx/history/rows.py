"""A result record as the history's row: its config, the point's key and its figures.

Both the run (as each point finishes) and ``infx db ingest`` (for a results folder written
earlier) make rows here, so a point ingested later has the same key it would have had.
"""

from __future__ import annotations

from pytest_infx.history.metrics import of_record
from pytest_infx.history.store import PointRow
from pytest_infx.results import verdict
from pytest_infx.results.records import CellRecord, FixedRecord, Record

FIXED_SEQ_LEN_BENCHMARK = "fixed-seq-len"
"""InferenceX's benchmark type of a fixed-seq-len row, which our rows share so that a
baseline ingested from its files and one of ours are found alike."""


def cell_of(record: Record) -> str:
    """The part of a point's identity no InferenceX column holds: a SPEED-Bench cell's draft
    length and thinking mode, an AgentX point's variant."""
    if isinstance(record, CellRecord):
        return f"k{record.point.draft_length}-{record.point.thinking}"
    return record.point.variant or ""


def golden_of(record: Record) -> str | None:
    if not isinstance(record, CellRecord) or record.golden is None:
        return None
    if record.golden.recorded:
        return "recorded"
    return verdict.of(record.golden.ok)


def reason_of(record: Record, golden: str | None) -> str:
    """Why a point failed, as its stored row says: its own checks' reasons, or its golden
    curve; empty for a point that passed both."""
    reasons = list(record.reasons)
    if not record.passed and not reasons:
        reasons.append("failed its own checks")
    if golden == verdict.Verdict.FAIL:
        reasons.append("AL outside its golden curve's tolerance")
    return "; ".join(reasons)


def row_of(record: Record) -> PointRow:
    """The row of one of our records; a record without its config (written before records
    carried one) has no key, and is a ValueError the ingest counts as skipped."""
    if record.config is None:
        raise ValueError(
            f"{record.id}: the record has no config identity (written by a pytest-infx before "
            "record version 2); run the point again to store it"
        )
    golden = golden_of(record)
    isl = osl = 0
    kind: str = record.kind
    if isinstance(record, CellRecord):
        dataset = record.dataset.name
        conc = record.point.concurrency
    elif isinstance(record, FixedRecord):
        dataset = record.prompts.dataset
        conc = record.point.concurrency
        isl, osl = record.point.isl, record.point.osl
        kind = FIXED_SEQ_LEN_BENCHMARK
    else:
        dataset = "builtin-traces" if record.traces_sha256 else "hub-traces"
        conc = record.concurrency
    return PointRow(
        config=record.config,
        kind=kind,
        conc=conc,
        cell=cell_of(record),
        item=record.id,
        recipe=record.recipe,
        dataset=dataset,
        status=verdict.of(record.passed and golden != verdict.Verdict.FAIL),
        metrics=of_record(record),
        golden=golden,
        reason=reason_of(record, golden),
        isl=isl,
        osl=osl,
    )
