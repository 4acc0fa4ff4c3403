"""Cell-by-cell comparison of a measured curve with its golden curve, with tolerance.

The allowance per cell is an absolute AL tolerance plus ``z`` standard errors of the measured cell
when the caller knows them: a noisy cell (few requests, long tail) gets more room than a tight one,
instead of one global threshold that is either too loose or flaky. Only the cells that break the
allowance (or exist on one side only) are reported, so a failure reads as a short list.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from pytest_infx.golden.curve import MODES, Curve, Provenance
from pytest_infx.golden.io import format_al

DEFAULT_TOLERANCE: Final = 0.05
DEFAULT_Z: Final = 2.0
_SLACK: Final = 1e-9
StdErr = Mapping[tuple[str, int], float]


@dataclass(frozen=True, kw_only=True)
class CompareOptions:
    """How strict a comparison is; ``tolerance=None`` defers to the golden header, then 0.05."""

    tolerance: float | None = None
    stderr: StdErr = field(default_factory=dict)
    z: float = DEFAULT_Z
    partial: bool = False

    def __post_init__(self) -> None:
        if self.tolerance is not None and not (
            math.isfinite(self.tolerance) and self.tolerance >= 0
        ):
            raise ValueError(f"tolerance {self.tolerance} must be a non-negative number")
        if not (math.isfinite(self.z) and self.z >= 0):
            raise ValueError(f"z {self.z} must be a non-negative number")
        for key, value in self.stderr.items():
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"stderr {value} of {key} must be a non-negative number")

    def resolved_tolerance(self, golden: Curve | None) -> float:
        if self.tolerance is not None:
            return self.tolerance
        if golden is not None and golden.header.tolerance is not None:
            return golden.header.tolerance
        return DEFAULT_TOLERANCE

    def allowed(self, tolerance: float, mode: str, k: int) -> float:
        return tolerance + self.z * self.stderr.get((mode, k), 0.0)


@dataclass(frozen=True, kw_only=True)
class CellDrift:
    """A cell present on both sides whose difference exceeds its allowance."""

    mode: str
    k: int
    golden: float | None
    measured: float | None
    delta: float | None
    allowed: float

    @property
    def message(self) -> str:
        delta = "n/a" if self.delta is None else f"{self.delta:+.2f}"
        return (
            f"k={self.k} {self.mode}: golden {format_al(self.golden)}, measured "
            f"{format_al(self.measured)}, delta {delta}, allowed {self.allowed:.2f}"
        )


@dataclass(frozen=True, kw_only=True)
class MissingCell:
    """A cell on one side only; ``side`` says which side has it."""

    mode: str
    k: int
    side: Literal["golden", "measured"]

    @property
    def message(self) -> str:
        if self.side == "golden":
            return f"k={self.k} {self.mode} is in the golden curve but was not measured"
        return f"k={self.k} {self.mode} was measured but not in the golden curve"


@dataclass(frozen=True, kw_only=True)
class Comparison:
    curve: str
    tolerance: float
    checked: int
    drifted: tuple[CellDrift, ...] = ()
    missing: tuple[MissingCell, ...] = ()
    largest_delta: float | None = None
    largest_at: tuple[str, int] | None = None
    model_keys: tuple[str, str] | None = None

    @property
    def ok(self) -> bool:
        return not self.drifted and not self.missing and self.model_keys is None

    def lines(self) -> list[str]:
        """One line per problem, model key first, then cells in canonical order."""
        lines: list[str] = []
        if self.model_keys is not None:
            golden, measured = self.model_keys
            lines.append(f"model key: golden {golden!r}, measured {measured!r}")
        problems: list[tuple[int, int, int, str]] = [
            (MODES.index(d.mode), d.k, 0, d.message) for d in self.drifted
        ]
        problems.extend((MODES.index(m.mode), m.k, 1, m.message) for m in self.missing)
        lines.extend(message for *_, message in sorted(problems))
        return lines


def compare_curves(
    golden: Curve, measured: Curve, options: CompareOptions | None = None
) -> Comparison:
    """Compare every cell; with ``options.partial`` golden cells that were not measured are fine."""
    opts = options or CompareOptions()
    tolerance = opts.resolved_tolerance(golden)
    drifted: list[CellDrift] = []
    missing: list[MissingCell] = []
    checked = 0
    largest: tuple[float, tuple[str, int]] | None = None
    for mode, k, measured_al in measured.cells():
        if not golden.has(mode, k):
            missing.append(MissingCell(mode=mode, k=k, side="measured"))
            continue
        checked += 1
        golden_al = golden.al(mode, k)
        allowed = opts.allowed(tolerance, mode, k)
        delta: float | None = None
        if golden_al is None or measured_al is None:
            bad = (golden_al is None) != (measured_al is None)
        else:
            delta = measured_al - golden_al
            if largest is None or abs(delta) > abs(largest[0]):
                largest = (delta, (mode, k))
            bad = abs(delta) > allowed + _SLACK
        if bad:
            drifted.append(
                CellDrift(
                    mode=mode,
                    k=k,
                    golden=golden_al,
                    measured=measured_al,
                    delta=delta,
                    allowed=allowed,
                )
            )
    if not opts.partial:
        missing.extend(
            MissingCell(mode=mode, k=k, side="golden")
            for mode, k, _ in golden.cells()
            if not measured.has(mode, k)
        )
    return Comparison(
        curve=golden.name,
        tolerance=tolerance,
        checked=checked,
        drifted=tuple(drifted),
        missing=tuple(missing),
        largest_delta=None if largest is None else largest[0],
        largest_at=None if largest is None else largest[1],
        model_keys=None
        if golden.model_key == measured.model_key
        else (golden.model_key, measured.model_key),
    )


def updated_curve(golden: Curve | None, measured: Curve, options: CompareOptions) -> Curve:
    """The curve ``--snapshot-update`` writes.

    In-tolerance cells keep their golden value so a re-record touches only the cells that really
    moved; with ``partial`` the golden cells that were not measured stay (parallel workers each
    record their own cells into one file).
    """
    if golden is None:
        return measured
    comparison = compare_curves(golden, measured, options)
    moved = {(d.mode, d.k) for d in comparison.drifted}
    modes: dict[str, dict[int, float | None]] = {}
    if options.partial:
        for mode, k, al in golden.cells():
            modes.setdefault(mode, {})[k] = al
    for mode, k, al in measured.cells():
        keep = golden.has(mode, k) and (mode, k) not in moved
        modes.setdefault(mode, {})[k] = golden.al(mode, k) if keep else al
    return Curve(
        name=measured.name,
        model_key=measured.model_key,
        modes=modes,
        header=_merged_header(golden.header, measured.header),
    )


def _merged_header(golden: Provenance, measured: Provenance) -> Provenance:
    if measured == Provenance():
        return golden
    return dataclasses.replace(
        measured,
        tolerance=measured.tolerance if measured.tolerance is not None else golden.tolerance,
        reference=measured.reference or golden.reference,
    )
