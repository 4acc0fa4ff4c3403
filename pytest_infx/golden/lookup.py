"""Golden AL lookup.

Throughput runs (AgentX) do not measure acceptance; they force the engine to accept at the golden
rate so the numbers reflect the real draft quality. Every AL literal therefore comes from a
committed curve; each engine's knob (with its own units and off-by-one) is its adapter's.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_infx.golden.curve import MODES, Mode, mode_of
from pytest_infx.golden.store import GoldenStore


class GoldenLookupError(LookupError):
    """A curve, mode or cell that cannot give an AL; the message says which and what exists."""


def golden_al(store: GoldenStore, curve: str, k: int, thinking: bool | None) -> float:
    """The golden AL of one cell; ``thinking=None`` is allowed only for a single-mode curve."""
    return golden_cell(store, curve, k, thinking)[1]


def golden_cell(
    store: GoldenStore, curve: str, k: int, thinking: bool | None
) -> tuple[Mode, float]:
    """Like :func:`golden_al`, also saying which mode answered (useful when thinking is None)."""
    found = store.get(curve)
    if thinking is None:
        if len(found.modes) != 1:
            raise GoldenLookupError(
                f"golden curve {curve} has modes {', '.join(_modes(found.modes))}; "
                "say which one (thinking on or off)"
            )
        mode = _modes(found.modes)[0]
    else:
        mode = mode_of(thinking)
    cells = found.modes.get(mode)
    if cells is None:
        raise GoldenLookupError(
            f"golden curve {curve} has no {mode} values (it has {', '.join(_modes(found.modes))})"
        )
    if k not in cells:
        known = ", ".join(str(key) for key in sorted(cells))
        raise GoldenLookupError(
            f"golden curve {curve} has no k={k} under {mode} (draft lengths: {known})"
        )
    al = cells[k]
    if al is None:
        raise GoldenLookupError(
            f"golden curve {curve} {mode} k={k} is N/A (that cell failed when it was measured); "
            "measure it again or pick another draft length"
        )
    return mode, al


def golden_modes(store: GoldenStore, curve: str) -> tuple[Mode, ...]:
    """The modes a curve has values for, thinking on first."""
    return tuple(_modes(store.get(curve).modes))


def _modes(modes: Mapping[str, object]) -> list[Mode]:
    return [mode for mode in MODES if mode in modes]
