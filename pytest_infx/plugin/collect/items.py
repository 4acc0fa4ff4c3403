"""The test functions behind recipe items.

They are deliberately thin: fixtures give each item its point, its server and its results sink,
and the benchmark modules do the work, so that every stage can be tested without pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.plugin.run.kinds.base import Runnable


def recipe_point(infx_runnable: Runnable) -> None:
    """One point of any kind but SPEED-Bench's (an AgentX or fixed-seq-len point, a point of a
    kind another package provides): its kind measures it against the point's server, or
    stands in for it with its stored result."""
    infx_runnable.run()


def speedbench_cell(infx_speedbench: Runnable) -> None:
    """One SPEED-Bench cell: measure AL against the point's server and check what was served."""
    infx_speedbench.run()
