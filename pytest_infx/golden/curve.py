"""The golden acceptance-length curve as a plain value.

A curve is what one SPEED-Bench sweep measured for one (model, method[, variant]): per thinking
mode, draft length k -> acceptance length (AL), ``None`` where the cell failed (``N/A`` on disk).
The provenance travels with the values so a reviewer can tell where a number came from without
leaving the file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

Mode = Literal["thinking_on", "thinking_off"]
MODES: Final[tuple[Mode, ...]] = ("thinking_on", "thinking_off")
CURVE_NAME_RE: Final = re.compile(r"[a-z0-9_.-]+")
MAX_TOLERANCE: Final = 1.0
"""An AL tolerance of a whole accepted token per step passes any curve a working server gives:
the gate would be off; a recipe and a golden file's header are held to it alike."""
Scalar = str | int | float


class CurveError(ValueError):
    """A curve value that breaks the golden-format rules (raised by the model itself)."""


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """Where a curve came from; serialised as InferenceX-style ``# key: value`` header lines.

    ``source`` is the URL of the GitHub Actions run when there is one (written on line 1 as
    ``# Source GitHub Actions run: <url>``, as InferenceX expects), otherwise a description.
    ``notes`` keeps free comment lines (InferenceX's prose lines) so re-writing a file loses
    nothing a human wrote.
    """

    source: str = ""
    notes: tuple[str, ...] = ()
    dataset: str | None = None
    dataset_sha256: str | None = None
    dataset_n: int | None = None
    sampling: Mapping[str, Scalar] = field(default_factory=dict)
    chat_template_kwargs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    model: str | None = None
    image: str | None = None
    engine: str | None = None
    tp: int | None = None
    method: str | None = None
    draft_model: str | None = None
    speculative: Mapping[str, str] = field(default_factory=dict)
    tolerance: float | None = None
    reference: bool = False

    @property
    def source_is_run(self) -> bool:
        return self.source.startswith(("http://", "https://"))


@dataclass(frozen=True, kw_only=True)
class Curve:
    """One golden (or measured) AL curve.

    Validation lives here as well as in the file loader so that a curve built in code (a measured
    one, say) obeys the same rules as one read from disk.
    """

    name: str
    model_key: str
    modes: Mapping[str, Mapping[int, float | None]]
    header: Provenance = field(default_factory=Provenance)

    def __post_init__(self) -> None:
        if not CURVE_NAME_RE.fullmatch(self.name):
            raise CurveError(
                f"curve name {self.name!r} must match [a-z0-9_.-]+ (lowercase, digits, _ . -)"
            )
        if not self.model_key:
            raise CurveError(f"curve {self.name}: the model key is empty")
        for mode, cells in self.modes.items():
            if mode not in MODES:
                raise CurveError(
                    f"curve {self.name}: unknown mode {mode!r}; use thinking_on or thinking_off"
                )
            for k, al in cells.items():
                problem = cell_problem(k, al)
                if problem:
                    raise CurveError(f"curve {self.name}: {mode} k={k}: {problem}")

    def cells(self) -> Iterator[tuple[Mode, int, float | None]]:
        """Every cell in canonical order (thinking_on first, k ascending)."""
        for mode in MODES:
            for k in sorted(self.modes.get(mode, {})):
                yield mode, k, self.modes[mode][k]

    def has(self, mode: str, k: int) -> bool:
        return k in self.modes.get(mode, {})

    def al(self, mode: str, k: int) -> float | None:
        return self.modes[mode][k]


def cell_problem(k: object, al: object) -> str | None:
    """Why (k, AL) is not a valid golden cell, or None; shared by the model and the loader."""
    if isinstance(k, bool) or not isinstance(k, int):
        return f"draft length {k!r} is not an integer"
    if k < 1:
        return f"draft length {k} must be at least 1"
    if al is None:
        return None
    if isinstance(al, bool) or not isinstance(al, int | float):
        return f"AL {al!r} is not a number (use a number with two decimals, or N/A)"
    if not math.isfinite(al):
        return f"AL {al} is not finite"
    if not 1.0 <= al <= k + 1:
        return f"AL {al} is outside [1, {k + 1}] (AL counts the bonus token, so 1 <= AL <= k+1)"
    return None


def mode_of(thinking: bool) -> Mode:
    return "thinking_on" if thinking else "thinking_off"
