"""The test functions behind recipe items.

They are deliberately thin: fixtures give each item its point, its server and its results sink,
and the benchmark modules do the work, so that every stage can be tested without pytest.
"""

from __future__ import annotations

from typing import Protocol


class Runnable(Protocol):
    """What a recipe item runs: a measurement against its point's server, or the stored result
    that stands for one."""

    def run(self) -> None: ...


def recipe_point(infx_runnable: Runnable) -> None:
    """One point of any kind but SPEED-Bench's (an AgentX or fixed-seq-len point, a point of a
    kind another package provides): its kind measures it against the point's server, or
    stands in for it with its stored result."""
    infx_runnable.run()


def speedbench_cell(infx_speedbench: Runnable) -> None:
    """One SPEED-Bench cell: measure AL against the point's server and check what was served."""
    infx_speedbench.run()
