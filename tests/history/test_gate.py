from __future__ import annotations

from pytest_infx.baseline_tolerance import MetricTolerance
from pytest_infx.history.gate import DRIFT_STEPS, BaselineVerdict, compare, drift

LIMITS = (MetricTolerance("tput_per_gpu", 0.05), MetricTolerance("median_ttft", 0.10))


def test_a_drop_past_the_tolerance_fails_and_is_named() -> None:
    verdict = compare(
        "k[tp1-c4]",
        {"tput_per_gpu": 94.0, "median_ttft": 0.5, "al": 2.0},
        {"tput_per_gpu": 100.0, "median_ttft": 0.5, "al": 2.1},
        LIMITS,
        baseline_run="r7",
    )
    assert [d.metric for d in verdict.failed] == ["tput_per_gpu"]
    message = verdict.message()
    assert (
        "k[tp1-c4]: tput_per_gpu 94 tok/s/gpu vs baseline 100 tok/s/gpu (-6.0%, allowed 5%)"
        in message
    )
    assert "baseline run r7" in message
    assert {d.metric for d in verdict.deltas} == {"tput_per_gpu", "median_ttft", "al"}


def test_exactly_the_tolerance_and_any_improvement_pass() -> None:
    verdict = compare(
        "k",
        {"tput_per_gpu": 95.0, "median_ttft": 0.1},
        {"tput_per_gpu": 100.0, "median_ttft": 0.5},
        LIMITS,
        baseline_run="r",
    )
    assert verdict.passed


def test_a_latency_rise_past_the_tolerance_fails() -> None:
    verdict = compare("k", {"median_ttft": 0.56}, {"median_ttft": 0.5}, LIMITS, baseline_run="r")
    assert [d.metric for d in verdict.failed] == ["median_ttft"]
    assert "560 ms vs baseline 500 ms (+12.0%, allowed 10%)" in verdict.message()


def test_no_baseline_passes_and_says_so() -> None:
    verdict = compare("k", {"tput_per_gpu": 1.0}, None, LIMITS, baseline_run=None)
    assert verdict.passed
    assert verdict.message() == "k: no baseline to compare with; the point passes"


def test_five_small_drops_that_add_up_are_a_drift_a_last_run_comparison_misses() -> None:
    history = [{"tput_per_gpu": v} for v in (100.0, 97.0, 94.1, 91.3, 88.6)]
    verdict = compare(
        "k", {"tput_per_gpu": 86.0}, history[-1], LIMITS, baseline_run="r", history=history
    )
    assert verdict.passed
    assert [d.metric for d in verdict.drifts] == ["tput_per_gpu"]
    assert verdict.drifts[0].steps == 5
    assert "slow drift of tput_per_gpu: 5 consecutive runs each within 5%, -14.0% in all" in (
        verdict.drifts[0].describe()
    )


def test_a_recovery_or_too_few_steps_is_no_drift() -> None:
    limit = MetricTolerance("tput_per_gpu", 0.05)
    assert drift(limit, [100.0, 97.0, 99.0, 96.0], {"tput_per_gpu": 93.0}) is None
    short = [100.0, 96.0][: DRIFT_STEPS - 1]
    assert drift(limit, short, {"tput_per_gpu": 92.0}) is None
    assert drift(limit, [100.0, 99.0, 98.0], {"tput_per_gpu": 97.0}) is None


def test_a_verdict_crosses_the_wire_whole() -> None:
    history = [{"tput_per_gpu": v} for v in (100.0, 97.0, 94.1, 91.3)]
    verdict = compare(
        "k", {"tput_per_gpu": 88.0}, history[-1], LIMITS, baseline_run="r", history=history
    )
    assert BaselineVerdict.from_wire(verdict.to_wire()) == verdict


NOISY = [{"tput_per_gpu": v} for v in (105.7, 79.1, 49.4, 86.9, 92.0, 70.3)]
"""Unslowed CPU runs of one point on a shared host: a 2x spread."""


def test_a_noisy_run_beyond_the_tolerance_but_inside_the_spread_passes() -> None:
    verdict = compare(
        "k", {"tput_per_gpu": 60.0}, NOISY[-1], LIMITS, baseline_run="r", history=NOISY
    )
    (delta,) = (d for d in verdict.deltas if d.metric == "tput_per_gpu")
    assert delta.beyond_tolerance and not delta.outside_noise
    assert verdict.passed
    assert delta.runs == len(NOISY) and delta.baseline == (79.1 + 86.9) / 2


def test_a_drop_beyond_the_tolerance_and_the_spread_fails_saying_both() -> None:
    quiet = [{"tput_per_gpu": v} for v in (100.0, 101.0, 99.0, 100.5, 99.5)]
    verdict = compare(
        "k", {"tput_per_gpu": 50.0}, quiet[-1], LIMITS, baseline_run="r", history=quiet, k=3
    )
    assert [d.metric for d in verdict.failed] == ["tput_per_gpu"]
    message = verdict.message()
    assert "(median of 5 runs)" in message and "beyond its tolerance" in message
    assert "outside the baseline's noise, median 100 +/- 3*MAD 1.5 over 5 runs" in message


def test_the_baseline_is_the_median_of_the_last_window_rows() -> None:
    history = [{"tput_per_gpu": v} for v in (10.0, 10.0, 10.0, 100.0, 100.0, 100.0)]
    verdict = compare(
        "k",
        {"tput_per_gpu": 100.0},
        history[-1],
        LIMITS,
        baseline_run="r",
        history=history,
        window=3,
    )
    assert verdict.deltas[0].baseline == 100.0 and verdict.deltas[0].runs == 3


def test_too_few_rows_for_a_spread_leave_the_tolerance_to_decide() -> None:
    history = [{"tput_per_gpu": 100.0}, {"tput_per_gpu": 100.0}]
    verdict = compare(
        "k", {"tput_per_gpu": 90.0}, history[-1], LIMITS, baseline_run="r", history=history
    )
    assert not verdict.passed
    assert "too few baseline runs (2 < 3) to read the noise" in verdict.message()


def test_a_non_finite_or_non_positive_baseline_is_never_compared_with() -> None:
    for bad in (float("nan"), float("inf"), 0.0, -1000.0):
        verdict = compare(
            "k", {"tput_per_gpu": 1.0}, {"tput_per_gpu": bad}, LIMITS, baseline_run="r"
        )
        assert verdict.deltas == () and verdict.passed
    mixed = [{"tput_per_gpu": v} for v in (100.0, float("nan"), -5.0, 100.0)]
    verdict = compare(
        "k", {"tput_per_gpu": 50.0}, mixed[-1], LIMITS, baseline_run="r", history=mixed
    )
    assert verdict.deltas[0].runs == 2 and not verdict.passed


def test_a_measured_value_that_is_not_finite_never_passes() -> None:
    verdict = compare(
        "k", {"tput_per_gpu": float("nan")}, {"tput_per_gpu": 100.0}, LIMITS, baseline_run="r"
    )
    assert not verdict.passed
