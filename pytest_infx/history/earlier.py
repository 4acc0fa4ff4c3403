"""Each point's latest passing result from the runs before this one, so a sweep's
throughput-interactivity chart can draw what it measured over what the key measured before
(InferenceX's charts compare runs the same way).

A point is found by its item id: the same recipe point, whatever changed in its recipe since;
a row that failed, or that lacks either figure, is no earlier result to draw.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.history.store import Store

THROUGHPUT = "output_tput_per_gpu"
INTERACTIVITY = "median_intvty"


@dataclass(frozen=True, slots=True)
class Earlier:
    """One point's figures from an earlier run, in the chart's units (tokens/s per GPU, tokens/s
    per user)."""

    throughput_per_gpu: float
    interactivity: float
    run: str
    started: datetime


BATCH = 500
"""Items asked for in one query, below any database's limit on bound values."""


def earlier_points(
    store: Store, items: Iterable[str], *, this_run: str | None
) -> dict[str, Earlier]:
    """The latest passing result of each of ``items`` from a run other than ``this_run``."""
    wanted = list(dict.fromkeys(items))
    found: dict[str, Earlier] = {}
    for start in range(0, len(wanted), BATCH):
        for row in store.passing(items=wanted[start : start + BATCH]):
            throughput = row.metrics.get(THROUGHPUT)
            interactivity = row.metrics.get(INTERACTIVITY)
            if row.run_id == this_run or throughput is None or interactivity is None:
                continue
            if math.isfinite(throughput) and math.isfinite(interactivity):
                found[row.item] = Earlier(throughput, interactivity, row.run_label, row.started)
    return found
