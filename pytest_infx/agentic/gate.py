"""Pass or fail an AgentX point on its request accounting.

The rule is InferenceX's ``validate_agentic_result.py``: a point fails when the failed-request
ratio exceeds the threshold (default 0.10, exactly 0.10 passes) or when no request completed.
The comparison is done in exact fractions, so 10 of 100 at 0.10 passes however floats round.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from pytest_infx.agentic.results import AgenticResult

DEFAULT_FAILED_REQUEST_THRESHOLD = 0.10


@dataclass(frozen=True, kw_only=True)
class GateVerdict:
    passed: bool
    reasons: tuple[str, ...]
    threshold: float

    @property
    def message(self) -> str:
        return "; ".join(self.reasons)


def parse_threshold(value: str | float | None, *, source: str) -> float:
    """A threshold from an option, ini value or environment; ``source`` names it in errors."""
    if value is None or value == "":
        return DEFAULT_FAILED_REQUEST_THRESHOLD
    try:
        number = float(value)
    except ValueError:
        raise ValueError(
            f"{source}: {value!r} is not a number; give a failed-request ratio such as 0.10"
        ) from None
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{source}: {value!r} must lie between 0 and 1 (a ratio, not a percent)")
    return number


def check_requests(
    result: AgenticResult, *, threshold: float = DEFAULT_FAILED_REQUEST_THRESHOLD
) -> GateVerdict:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie between 0 and 1, got {threshold}")
    reasons: list[str] = []
    if result.completed == 0:
        reasons.append(
            f"no request completed ({result.total} finished, {result.failed} failed)"
            + _first_error(result)
        )
    elif Fraction(result.failed, result.total) > Fraction(str(threshold)):
        reasons.append(
            f"{result.failed} of {result.total} requests failed "
            f"({_percent(result.failed / result.total)} > {_percent(threshold)} threshold)"
            + _first_error(result)
        )
    return GateVerdict(passed=not reasons, reasons=tuple(reasons), threshold=threshold)


def _percent(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"


def _first_error(result: AgenticResult) -> str:
    if not result.errors:
        return ""
    top = max(result.errors, key=lambda kind: kind.count)
    code = f"{top.code} " if top.code is not None else ""
    message = top.message if len(top.message) <= 160 else top.message[:157] + "..."
    return f"; top error ({top.count}x): {code}{top.kind}: {message}"
