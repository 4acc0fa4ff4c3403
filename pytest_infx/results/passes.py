"""A point measured in several passes (``repeats``): which pass stands for it and the median of
each figure, the same rule for every kind so that one gate judges them alike."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence


def median_index(passes: Sequence[Mapping[str, float]], by: str) -> int:
    """The pass whose ``by`` figure is the median (the lower middle of an even count), whose
    files stand for the point; a pass without the figure sorts first, as if it measured 0."""
    order = sorted(range(len(passes)), key=lambda i: passes[i].get(by, 0.0))
    return order[(len(order) - 1) // 2]


def median_figures(passes: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each figure's median over the passes that have it."""
    names = dict.fromkeys(name for each in passes for name in each)
    return {
        name: statistics.median(each[name] for each in passes if name in each) for name in names
    }
