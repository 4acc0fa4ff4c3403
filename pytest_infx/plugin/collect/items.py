"""The test functions behind recipe items.

They are deliberately thin: fixtures give each item its point, its server and its results sink,
and the benchmark modules do the work, so that every stage can be tested without pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_infx.plugin.run.kinds.base import Runnable


def recipe_point(infx_runnable: Runnable) -> None:
    """One point of a kind another package provides: its kind measures it against the point's
    server, or stands in for it with its stored result."""
    infx_runnable.run()


def speedbench_cell(infx_speedbench: Runnable) -> None:
    """One SPEED-Bench cell: measure AL against the point's server and check what was served."""
    infx_speedbench.run()


def agentic_point(infx_agentic: Runnable) -> None:
    """One AgentX point: replay agentic traces through aiperf and gate on request errors."""
    infx_agentic.run()


def fixed_seq_len_point(infx_fixed_seq_len: Runnable) -> None:
    """One fixed-seq-len point: random prompts at a set input and output length, measured and
    written as InferenceX's benchmark_serving.py and process_result.py do."""
    infx_fixed_seq_len.run()
