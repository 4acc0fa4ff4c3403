"""Acceptance length from counter deltas and from per-request metrics.

Two sources exist and they answer slightly different questions: the counters give the
token-weighted AL of everything the server did in the window, per-request metrics give each
request's own AL. When the pass was the only traffic, the counter AL equals the token-weighted
per-request AL, which makes their agreement a check that nothing else ran in the window.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_infx.speedbench.client import RequestSpecMetrics
from pytest_infx.speedbench.metrics import CounterDelta

AGREEMENT_TOLERANCE = 0.01


def counter_al(d: CounterDelta) -> float | None:
    """AL = 1 + Δaccepted/Δdrafts; None when nothing was drafted (InferenceX's N/A)."""
    if d.drafts is None or d.accepted is None or d.drafts <= 0:
        return None
    return 1.0 + d.accepted / d.drafts


def acceptance_rate(d: CounterDelta) -> float | None:
    """Δaccepted/Δdraft_tokens; None where the engine exposes no draft-token counter."""
    if d.accepted is None or d.draft_tokens is None or d.draft_tokens <= 0:
        return None
    return d.accepted / d.draft_tokens


def per_position_rates(d: CounterDelta) -> tuple[float, ...]:
    """Fraction of drafts accepting at least i+1 tokens, for each draft position i."""
    if d.drafts is None or d.drafts <= 0:
        return ()
    return tuple(v / d.drafts for v in d.accepted_per_pos)


def _speculated(specs: Sequence[RequestSpecMetrics]) -> list[RequestSpecMetrics]:
    """Requests that ran at least one verify step; a 1-token answer has no AL of its own."""
    return [s for s in specs if s.num_steps > 0]


def request_al(spec: RequestSpecMetrics) -> float | None:
    if spec.num_steps <= 0:
        return None
    return 1.0 + spec.num_accepted / spec.num_steps


def request_weighted_al(specs: Sequence[RequestSpecMetrics]) -> float | None:
    """Mean of the per-request ALs: every prompt counts once, however long its answer."""
    values = [v for s in _speculated(specs) if (v := request_al(s)) is not None]
    return statistics.fmean(values) if values else None


def token_weighted_al(specs: Sequence[RequestSpecMetrics]) -> float | None:
    """1 + Σaccepted/Σsteps: what the counters measure, restricted to these requests."""
    used = _speculated(specs)
    steps = sum(s.num_steps for s in used)
    if steps <= 0:
        return None
    return 1.0 + sum(s.num_accepted for s in used) / steps


def al_standard_error(specs: Sequence[RequestSpecMetrics]) -> float | None:
    """Standard error of the mean per-request AL, the statistical margin of a golden compare."""
    values = [v for s in _speculated(specs) if (v := request_al(s)) is not None]
    if len(values) < 2:
        return None
    return statistics.stdev(values) / math.sqrt(len(values))


def als_agree(
    counter: float | None,
    token_weighted: float | None,
    *,
    tolerance: float = AGREEMENT_TOLERANCE,
) -> bool | None:
    """Whether the two AL sources match; None when either is missing (nothing to compare)."""
    if counter is None or token_weighted is None:
        return None
    return abs(counter - token_weighted) <= tolerance


@dataclass(frozen=True, slots=True)
class ALSummary:
    al: float | None
    acceptance_rate: float | None
    per_position: tuple[float, ...]
    request_weighted: float | None
    token_weighted: float | None
    standard_error: float | None
    requests_with_metrics: int

    @property
    def rounded(self) -> float | None:
        """Two decimals, as the golden files and InferenceX record it."""
        return None if self.al is None else round(self.al, 2)


def summarize(d: CounterDelta, specs: Sequence[RequestSpecMetrics]) -> ALSummary:
    return ALSummary(
        al=counter_al(d),
        acceptance_rate=acceptance_rate(d),
        per_position=per_position_rates(d),
        request_weighted=request_weighted_al(specs),
        token_weighted=token_weighted_al(specs),
        standard_error=al_standard_error(specs),
        requests_with_metrics=len(specs),
    )
