"""Per-cell checks: each returns the reasons a cell must fail, an empty list when it passes.

Every message carries its numbers so a failed item explains itself in the terminal and in the
result file without opening logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_infx.speedbench.al import AGREEMENT_TOLERANCE, counter_al, token_weighted_al
from pytest_infx.speedbench.client import RequestRecord
from pytest_infx.speedbench.metrics import CounterDelta, series_name
from pytest_infx.speedbench.thinking import has_reasoning, opens_thinking_block

LISTED = 5

INCOMPLETE = "requests_incomplete"
FAILED = "requests_failed"
EMPTY = "empty_output"
PROMPT_THINKING = "prompt_thinking_mismatch"
OUTPUT_THINKING = "output_thinking_mismatch"
NO_SPEC = "no_speculation"
NO_DRAFTS = "no_drafts"
ACCEPTED_RANGE = "accepted_out_of_range"
RESET = "counters_reset"
EMPTY_METRICS = "metrics_empty"
NON_FINITE = "counter_not_finite"
SERIES_VANISHED = "series_vanished"
NO_ACCEPTED = "accepted_series_missing"
AL_RANGE = "al_out_of_range"
AL_DISAGREE = "al_sources_disagree"


@dataclass(frozen=True, slots=True)
class Reason:
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def _ids(records: Sequence[RequestRecord]) -> str:
    shown = ", ".join(r.question_id for r in records[:LISTED])
    more = len(records) - LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def check_requests(records: Sequence[RequestRecord], *, expected: int) -> list[Reason]:
    """Every prompt was sent and answered; failures are listed with their first errors."""
    failed = [r for r in records if r.error is not None]
    completed = len(records) - len(failed)
    reasons: list[Reason] = []
    if completed != expected:
        reasons.append(
            Reason(INCOMPLETE, f"{completed}/{expected} completed, {len(failed)} failed")
        )
    if failed:
        kinds: dict[str, int] = {}
        for r in failed:
            assert r.error is not None
            kinds[r.error.kind] = kinds.get(r.error.kind, 0) + 1
        by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        samples = "; ".join(f"{r.question_id}: {r.error}" for r in failed[:3])
        reasons.append(
            Reason(
                FAILED, f"{len(failed)} of {len(records)} requests failed ({by_kind}): {samples}"
            )
        )
    return reasons


def check_empty_outputs(records: Sequence[RequestRecord]) -> list[Reason]:
    """A completed request with no text and no tokens means the server generated nothing."""
    ok = [r for r in records if r.error is None]
    empty = [r for r in ok if not r.content and not r.reasoning and not (r.completion_tokens or 0)]
    if not empty:
        return []
    return [
        Reason(
            EMPTY,
            f"{len(empty)} of {len(ok)} completed requests returned no content, no reasoning "
            f"and 0 completion tokens: {_ids(empty)}",
        )
    ]


def check_rendered_prompt(rendered: str, *, thinking: bool) -> list[Reason]:
    opens = opens_thinking_block(rendered)
    if opens == thinking:
        return []
    tail = rendered[-60:]
    if thinking:
        msg = f"thinking is on but the rendered prompt opens no <think> block; it ends {tail!r}"
    else:
        msg = f"thinking is off but the rendered prompt ends in an open <think> block: {tail!r}"
    return [Reason(PROMPT_THINKING, msg)]


def check_reasoning(records: Sequence[RequestRecord], *, thinking: bool) -> list[Reason]:
    """Thinking on: every output reasons; thinking off: none does."""
    ok = [r for r in records if r.error is None]
    if thinking:
        wrong = [r for r in ok if not has_reasoning(r)]
        what = "have no reasoning although thinking is on"
    else:
        wrong = [r for r in ok if has_reasoning(r)]
        what = "carry reasoning although thinking is off"
    if not wrong:
        return []
    return [Reason(OUTPUT_THINKING, f"{len(wrong)} of {len(ok)} outputs {what}: {_ids(wrong)}")]


def check_counters(d: CounterDelta, *, k: int, requests: int = 0) -> list[Reason]:
    """Plausibility of the window: the counters exist, grew, and fit draft length `k`.

    Each fault that leaves no usable delta has its own reason (an empty body, a counter at
    +Inf, a series that disappeared, a restart), so that none is mistaken for another. Where
    the engine's accepted count holds each request's prefill token, the `requests` sent in the
    window may add one each to the bound.
    """
    if d.empty:
        return [
            Reason(
                EMPTY_METRICS,
                f"GET /metrics returned no samples {' and '.join(d.empty)} the pass (an empty"
                " body): the server serves no Prometheus metrics (its metrics are off, a proxy"
                " answers instead, or a multiprocess metrics folder is not shared)",
            )
        ]
    if d.non_finite:
        return [
            Reason(
                NON_FINITE,
                "a speculative-decoding counter is not a finite number, so no acceptance length"
                f" can be derived: {', '.join(d.non_finite)}",
            )
        ]
    if d.vanished:
        return [
            Reason(
                SERIES_VANISHED,
                "series present before the pass are absent after it (the metrics exporter"
                f" dropped them; a restart resets counters to 0, it does not remove them):"
                f" {', '.join(d.vanished)}",
            )
        ]
    if d.reset:
        return [
            Reason(
                RESET,
                "counters went down between the snapshots (the server restarted in the window): "
                + ", ".join(d.decreased),
            )
        ]
    if d.drafts is None:
        return [
            Reason(
                NO_SPEC,
                "the server exposes no speculative-decoding counters (series missing): "
                "speculation is not configured",
            )
        ]
    if d.drafts <= 0:
        return [Reason(NO_DRAFTS, f"Δdrafts = {d.drafts:g}: no draft was verified in the window")]
    if d.accepted is None:
        return [
            Reason(
                NO_ACCEPTED,
                f"Δdrafts = {d.drafts:g} but the server exposes no"
                f" {series_name(d, 'accepted')} series, so the accepted tokens (and the"
                " acceptance length) are unknown: the engine version names it differently",
            )
        ]
    reasons: list[Reason] = []
    prefill = requests if d.prefill_in_accepted else 0
    top = k * d.drafts + prefill
    if not 0 <= d.accepted <= top:
        bound = "k·Δdrafts + requests" if prefill else "k·Δdrafts"
        counted = f", {prefill} requests (one prefill token each)" if prefill else ""
        reasons.append(
            Reason(
                ACCEPTED_RANGE,
                f"Δaccepted = {d.accepted:g} is outside [0, {bound}] = [0, {top:g}] "
                f"(k = {k}, Δdrafts = {d.drafts:g}{counted})",
            )
        )
    al = counter_al(d)
    al_top = k + 1 + prefill / d.drafts
    if al is not None and not 1.0 <= al <= al_top:
        shown = "k+1" if not prefill else "k+1 + requests/Δdrafts"
        reasons.append(Reason(AL_RANGE, f"AL {al:.4f} is outside [1, {shown}] = [1, {al_top:g}]"))
    return reasons


def check_al_agreement(
    d: CounterDelta,
    records: Sequence[RequestRecord],
    *,
    tolerance: float = AGREEMENT_TOLERANCE,
) -> list[Reason]:
    """Counter AL equals the token-weighted per-request AL when the pass was the only traffic."""
    specs = [r.spec for r in records if r.error is None and r.spec is not None]
    if not specs:
        return []
    counter = counter_al(d)
    token = token_weighted_al(specs)
    if counter is None or token is None or abs(counter - token) <= tolerance:
        return []
    return [
        Reason(
            AL_DISAGREE,
            f"counter AL {counter:.4f} and token-weighted per-request AL {token:.4f} "
            f"({len(specs)} requests) differ by {abs(counter - token):.4f} > {tolerance:g}: "
            "other traffic reached the server in the window, or a counter is misread",
        )
    ]


_NO_DELTA = frozenset({RESET, EMPTY_METRICS, NON_FINITE, SERIES_VANISHED})
"""Reasons after which the counter delta means nothing, so comparing it is noise."""


def check_cell(
    *,
    records: Sequence[RequestRecord],
    expected: int,
    counters: CounterDelta,
    k: int,
    thinking: bool | None = None,
    rendered: str | None = None,
) -> list[Reason]:
    """All checks of one cell; thinking checks run when the cell has a thinking mode."""
    reasons = check_requests(records, expected=expected)
    reasons += check_empty_outputs(records)
    if thinking is not None:
        if rendered is not None:
            reasons += check_rendered_prompt(rendered, thinking=thinking)
        reasons += check_reasoning(records, thinking=thinking)
    counter_reasons = check_counters(counters, k=k, requests=len(records))
    reasons += counter_reasons
    if not any(r.code in _NO_DELTA for r in counter_reasons):
        reasons += check_al_agreement(counters, records)
    return reasons
