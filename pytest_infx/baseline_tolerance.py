"""The figures a benchmark point is judged on against the results history's baseline, under
InferenceX's names and units, and the per-metric tolerances the baseline gate allows them
(not the golden AL tolerance, which is :mod:`pytest_infx.golden.compare`'s).

A leaf of the package: recipes validate their ``tolerance:`` block against it, and the
results history computes, stores and compares the figures it names.

InferenceX's processed results name throughput ``tput_per_gpu`` (input and output tokens per
second per GPU) and give latencies in seconds as ``median_ttft``, ``p99_e2el`` and so on, with
``intvty`` the inverse of TPOT. A tolerance is written as its reviewers read a delta:
``tput_per_gpu: -5%`` lets throughput per GPU fall by 5 % at most, ``median_ttft: +10%`` lets
the median TTFT rise by 10 % at most.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Metric:
    """How a figure is read: whether more is better, and the unit it is shown in (``scale``
    turns the stored value into that unit)."""

    name: str
    higher_is_better: bool
    unit: str
    scale: float = 1.0

    def shown(self, value: float) -> float:
        return value * self.scale


_THROUGHPUT = ("tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "output_tput")
LATENCIES = ("ttft", "tpot", "itl", "e2el")
_STATS = ("mean", "median", "p90", "p99", "p99.9")


def _catalog() -> dict[str, Metric]:
    found = {name: Metric(name, True, "tok/s/gpu") for name in _THROUGHPUT}
    found["output_tput"] = Metric("output_tput", True, "tok/s")
    for stat in _STATS:
        for latency in LATENCIES:
            name = f"{stat}_{latency}"
            found[name] = Metric(name, False, "ms", 1000.0)
        found[f"{stat}_intvty"] = Metric(f"{stat}_intvty", True, "tok/s/user")
    found["al"] = Metric("al", True, "tokens")
    found["gpu_power_w"] = Metric("gpu_power_w", False, "W")
    found["output_tokens_per_joule"] = Metric("output_tokens_per_joule", True, "tok/J")
    found["acceptance_rate"] = Metric("acceptance_rate", True, "")
    return found


METRICS: Final[Mapping[str, Metric]] = _catalog()

TABLE_METRICS: Final = (
    "tput_per_gpu",
    "output_tput_per_gpu",
    "median_ttft",
    "p90_ttft",
    "p99_ttft",
    "p99.9_ttft",
    "median_intvty",
    "p90_intvty",
    "p99_intvty",
    "p99.9_intvty",
    "median_e2el",
    "p90_e2el",
    "p99_e2el",
    "p99.9_e2el",
    "al",
)
"""The columns of InferenceX's comparison table (``compare_results.py``), in its order, and
the AL of a SPEED-Bench cell."""


def metric(name: str) -> Metric:
    """The metric called ``name``; a KeyError lists the known names."""
    try:
        return METRICS[name]
    except KeyError:
        known = ", ".join(sorted(METRICS))
        raise KeyError(f"{name!r} is not a metric the history keeps; known: {known}") from None


DEFAULT_TOLERANCES: Final = (
    "tput_per_gpu: -5%",
    "output_tput_per_gpu: -5%",
    "median_ttft: +10%",
    "median_tpot: +10%",
    "median_e2el: +10%",
)
_SPEC = re.compile(r"^\s*([A-Za-z0-9_.]+)\s*:\s*([+-])\s*(\d+(?:\.\d+)?)\s*%\s*$")


@dataclass(frozen=True)
class MetricTolerance:
    """How far ``metric`` may move, as a fraction of its baseline (0.05 for 5 %), in the
    direction that hurts it."""

    metric: str
    fraction: float

    @property
    def text(self) -> str:
        sign = "-" if METRICS[self.metric].higher_is_better else "+"
        return f"{self.metric}: {sign}{self.fraction * 100:g}%"


def parse_tolerance(text: str, *, source: str) -> MetricTolerance:
    """One ``metric: ±N%`` entry; ``source`` names where it was written in errors. The sign
    must be the harmful direction, so a mistyped ``tput_per_gpu: +5%`` is an error rather than
    a gate that never fires."""
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(
            f"{source}: {text.strip()!r} is not a tolerance; write METRIC: -N% for a figure "
            "where more is better (tput_per_gpu: -5%) or METRIC: +N% where less is better "
            "(median_ttft: +10%)"
        )
    name, sign, number = match.groups()
    try:
        found = metric(name)
    except KeyError as exc:
        raise ValueError(f"{source}: {exc.args[0]}") from None
    harmful = "-" if found.higher_is_better else "+"
    if sign != harmful:
        direction = "falls" if found.higher_is_better else "rises"
        raise ValueError(
            f"{source}: {text.strip()!r}: {name} hurts when it {direction}, so its tolerance "
            f"is written {name}: {harmful}{number}%"
        )
    fraction = float(number) / 100.0
    if found.higher_is_better and not fraction < 1.0:
        raise ValueError(
            f"{source}: {text.strip()!r}: {name} cannot fall by {number}% or more, so the gate "
            f"would never fire; give a fall below 100% ({name}: -5%)"
        )
    if not math.isfinite(fraction):
        raise ValueError(f"{source}: {text.strip()!r}: {number}% is not a finite tolerance")
    return MetricTolerance(name, fraction)


def tolerances(entries: Iterable[str], *, source: str) -> tuple[MetricTolerance, ...]:
    """The entries in order; a later entry for the same metric replaces an earlier one."""
    found: dict[str, MetricTolerance] = {}
    for entry in entries:
        if entry.strip():
            tolerance = parse_tolerance(entry, source=source)
            found[tolerance.metric] = tolerance
    return tuple(found.values())


def merged(*layers: Sequence[MetricTolerance]) -> tuple[MetricTolerance, ...]:
    """Later layers (ini, then the recipe) replace earlier ones metric by metric."""
    found: dict[str, MetricTolerance] = {}
    for layer in layers:
        for tolerance in layer:
            found[tolerance.metric] = tolerance
    return tuple(found.values())
