from __future__ import annotations

import pytest

from pytest_infx.baseline_tolerance import (
    DEFAULT_TOLERANCES,
    METRICS,
    TABLE_METRICS,
    MetricTolerance,
    merged,
    metric,
    parse_tolerance,
    tolerances,
)


def test_a_tolerance_reads_its_metric_and_fraction() -> None:
    assert parse_tolerance("tput_per_gpu: -5%", source="s") == MetricTolerance("tput_per_gpu", 0.05)
    assert parse_tolerance(" median_ttft:+12.5 % ", source="s") == MetricTolerance(
        "median_ttft", 0.125
    )
    assert parse_tolerance("p99.9_e2el: +10%", source="s").metric == "p99.9_e2el"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tput_per_gpu -5%", "is not a tolerance; write METRIC: -N%"),
        ("tput_per_gpu: -5", "is not a tolerance"),
        ("speed: -5%", "'speed' is not a metric the history keeps; known:"),
        (
            "tput_per_gpu: +5%",
            "tput_per_gpu hurts when it falls, so its tolerance is written tput_per_gpu: -5%",
        ),
        ("median_ttft: -10%", "median_ttft hurts when it rises"),
        ("tput_per_gpu: -100%", "tput_per_gpu cannot fall by 100% or more, so the gate would"),
        ("output_tput_per_gpu: -200%", "cannot fall by 200% or more"),
        (f"median_ttft: +{'9' * 400}%", "% is not a finite tolerance"),
    ],
)
def test_a_bad_tolerance_says_where_and_how_to_write_it(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="ini x: ") as caught:
        parse_tolerance(text, source="ini x")
    assert message in str(caught.value)


def test_later_layers_replace_earlier_ones_metric_by_metric() -> None:
    defaults = tolerances(DEFAULT_TOLERANCES, source="d")
    ini = tolerances(["tput_per_gpu: -2%", "", "tput_per_gpu: -3%"], source="ini")
    found = {t.metric: t.fraction for t in merged(defaults, ini)}
    assert found["tput_per_gpu"] == 0.03
    assert found["median_ttft"] == 0.10


def test_every_table_column_is_a_metric_and_latency_shows_in_ms() -> None:
    assert set(TABLE_METRICS) <= set(METRICS)
    assert metric("median_ttft").shown(0.25) == 250.0
    assert not metric("median_ttft").higher_is_better
    with pytest.raises(KeyError, match="'nope' is not a metric"):
        metric("nope")
