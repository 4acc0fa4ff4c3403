from __future__ import annotations

import math
import statistics

import pytest

from pytest_infx.speedbench.al import (
    acceptance_rate,
    al_standard_error,
    als_agree,
    counter_al,
    per_position_rates,
    request_al,
    request_weighted_al,
    summarize,
    token_weighted_al,
)
from pytest_infx.speedbench.client import RequestSpecMetrics
from pytest_infx.speedbench.metrics import CounterDelta


def cd(
    drafts: float | None,
    accepted: float | None,
    draft_tokens: float | None = None,
    per_pos: tuple[float, ...] = (),
) -> CounterDelta:
    return CounterDelta("vllm", drafts, draft_tokens, accepted, per_pos, None)


def spec(steps: int, accepted: int) -> RequestSpecMetrics:
    return RequestSpecMetrics("vllm", steps, accepted, steps * 3, None)


def test_counter_al_is_one_plus_accepted_per_draft() -> None:
    drafts, accepted = 40.0, 58.0
    assert counter_al(cd(drafts, accepted)) == pytest.approx(1 + accepted / drafts)
    assert counter_al(cd(0.0, 0.0)) is None
    assert counter_al(cd(-3.0, 1.0)) is None
    assert counter_al(cd(None, None)) is None


def test_rates() -> None:
    d = cd(10.0, 15.0, draft_tokens=30.0, per_pos=(8.0, 5.0, 2.0))
    assert acceptance_rate(d) == pytest.approx(15 / 30)
    assert per_position_rates(d) == pytest.approx((0.8, 0.5, 0.2))
    assert acceptance_rate(cd(10.0, 15.0)) is None
    assert per_position_rates(cd(0.0, 0.0, per_pos=(1.0,))) == ()


def test_request_and_token_weighted_differ_when_lengths_differ() -> None:
    long, short = spec(100, 100), spec(2, 4)
    specs = [long, short, spec(0, 0)]
    als = [1 + 100 / 100, 1 + 4 / 2]
    assert request_al(long) == pytest.approx(als[0])
    assert request_al(spec(0, 0)) is None
    assert request_weighted_al(specs) == pytest.approx(statistics.fmean(als))
    assert token_weighted_al(specs) == pytest.approx(1 + 104 / 102)
    assert request_weighted_al(specs) != pytest.approx(token_weighted_al(specs))
    assert token_weighted_al([spec(0, 0)]) is None
    assert request_weighted_al([]) is None


def test_standard_error_of_per_request_al() -> None:
    specs = [spec(10, a) for a in (5, 10, 15, 20)]
    als = [1 + a / 10 for a in (5, 10, 15, 20)]
    assert al_standard_error(specs) == pytest.approx(statistics.stdev(als) / math.sqrt(4))
    assert al_standard_error(specs[:1]) is None


def test_agreement_within_tolerance() -> None:
    assert als_agree(2.0, 2.005) is True
    assert als_agree(2.0, 2.02) is False
    assert als_agree(2.0, 2.02, tolerance=0.05) is True
    assert als_agree(None, 2.0) is None


def test_summary_collects_both_sources() -> None:
    specs = [spec(10, 12), spec(20, 18)]
    d = cd(30.0, 30.0, draft_tokens=90.0, per_pos=(20.0, 8.0, 2.0))
    s = summarize(d, specs)
    assert s.al == pytest.approx(2.0)
    assert s.rounded == 2.0
    assert s.token_weighted == pytest.approx(s.al)
    assert s.request_weighted == pytest.approx((2.2 + 1.9) / 2)
    assert s.requests_with_metrics == 2
    assert s.per_position == pytest.approx((20 / 30, 8 / 30, 2 / 30))
