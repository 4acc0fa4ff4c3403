"""Golden AL lookup and the per-engine settings that force a synthetic acceptance length.

Throughput runs (AgentX) do not measure acceptance; they force the engine to accept at the golden
rate so the numbers reflect the real draft quality. Every AL literal therefore comes from a
committed curve, and each engine's knob (with its own units and off-by-one) is spelled once, here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from pytest_infx.golden.curve import MODES, Mode, mode_of
from pytest_infx.golden.store import GoldenStore

Engine = Literal["vllm", "sglang", "trtllm", "atom"]
ENGINES: Final[tuple[Engine, ...]] = ("vllm", "sglang", "trtllm", "atom")
TRTLLM_ENV: Final = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"


class GoldenLookupError(LookupError):
    """A curve, mode or cell that cannot give an AL; the message says which and what exists."""


@dataclass(frozen=True, kw_only=True)
class SyntheticSetting:
    """What to add to an engine launch: ``--speculative-config`` keys, env vars, extra argv."""

    engine: Engine
    al: float
    k: int
    spec_config: Mapping[str, object] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


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


def synthetic_setting(engine: str, al: float, k: int) -> SyntheticSetting:
    """The engine-specific way to force acceptance length ``al`` with ``k`` draft tokens."""
    if k < 1:
        raise ValueError(f"draft length k={k} must be at least 1")
    if not 1.0 <= al <= k + 1:
        raise ValueError(
            f"synthetic acceptance length {al} must lie in [1, {k + 1}] for k={k} "
            "(AL counts the bonus token); check the golden curve and the draft length"
        )
    if engine == "vllm":
        return SyntheticSetting(
            engine="vllm",
            al=al,
            k=k,
            spec_config={"rejection_sample_method": "synthetic", "synthetic_acceptance_length": al},
        )
    if engine == "sglang":
        return SyntheticSetting(
            engine="sglang",
            al=al,
            k=k,
            env={
                "SGLANG_SIMULATE_ACC_LEN": _number(al),
                "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
            },
        )
    if engine == "trtllm":
        accepted = round(al - 1, 6)
        notes: tuple[str, ...] = ()
        if accepted != int(accepted):
            notes = (
                f"{TRTLLM_ENV} counts draft tokens only, hence AL-1; the two-model path int()s "
                "it, so a fractional value there warns and falls back to 0 (no forcing); only "
                "the one-model path honours the fraction",
            )
        return SyntheticSetting(
            engine="trtllm", al=al, k=k, env={TRTLLM_ENV: _number(accepted)}, notes=notes
        )
    if engine == "atom":
        return SyntheticSetting(
            engine="atom", al=al, k=k, argv=("--spec-decode-acceptance-length", _number(al))
        )
    raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")


def _number(value: float) -> str:
    rounded = round(value, 6)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def _modes(modes: Mapping[str, object]) -> list[Mode]:
    return [mode for mode in MODES if mode in modes]
