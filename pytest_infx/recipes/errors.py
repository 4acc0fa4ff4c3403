"""Errors raised for bad recipe input.

Every error names the file, the line and the field, and says what to do, because a recipe author
should never have to read a traceback from deep inside the loader to find a typo.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """``column`` (1-based) is given where the line alone does not show the place, such as a
    tab or a byte that is not UTF-8."""

    path: Path
    line: int
    column: int | None = None

    def __str__(self) -> str:
        if self.column is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"


class RecipeError(Exception):
    """A recipe file is invalid; ``str()`` is the complete, user-facing message."""

    def __init__(self, location: Location | None, field: str | None, problem: str, hint: str = ""):
        self.location = location
        self.field = field
        self.problem = problem
        self.hint = hint
        where = str(location) if location else "<recipes>"
        what = f"{field}: {problem}" if field else problem
        text = f"{where}: {what}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


class RecipeErrors(Exception):
    """Several independent recipe errors, reported together so one run shows them all."""

    def __init__(self, errors: list[RecipeError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))
