from __future__ import annotations

from pytest_infx.history.gate import DRIFT_STEPS, Verdict, compare, drift
from pytest_infx.tolerance import Tolerance

LIMITS = (Tolerance("tput_per_gpu", 0.05), Tolerance("median_ttft", 0.10))


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
    limit = Tolerance("tput_per_gpu", 0.05)
    assert drift(limit, [100.0, 97.0, 99.0, 96.0], {"tput_per_gpu": 93.0}) is None
    short = [100.0, 96.0][: DRIFT_STEPS - 1]
    assert drift(limit, short, {"tput_per_gpu": 92.0}) is None
    assert drift(limit, [100.0, 99.0, 98.0], {"tput_per_gpu": 97.0}) is None


def test_a_verdict_crosses_the_wire_whole() -> None:
    history = [{"tput_per_gpu": v} for v in (100.0, 97.0, 94.1, 91.3)]
    verdict = compare(
        "k", {"tput_per_gpu": 88.0}, history[-1], LIMITS, baseline_run="r", history=history
    )
    assert Verdict.from_wire(verdict.to_wire()) == verdict
