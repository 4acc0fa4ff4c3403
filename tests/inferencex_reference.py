"""InferenceX's reference data at 843c6254f (its master configs, ``sweep.json`` and
``commands.jsonl``), which the tests that prove the recipes mirror its matrix read.

It is not part of the repository: ``INFX_INFERENCEX_REFERENCE`` names it, else
``../shared/inferencex/843c6254f`` beside the repository when that exists; the tests that need
it are skipped with that reason otherwise, so a checkout without it still runs the rest.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
ENV = "INFX_INFERENCEX_REFERENCE"
DEFAULT = ROOT.parent / "shared" / "inferencex" / "843c6254f"


def reference() -> Path:
    """The reference folder, or a skip saying where it was looked for."""
    named = os.environ.get(ENV)
    folder = Path(named) if named else DEFAULT
    if not (folder / "sweep.json").is_file():
        where = f"{ENV}={named}" if named else f"{DEFAULT} (set {ENV} to name another)"
        pytest.skip(f"InferenceX reference data not found at {where}")
    return folder


@cache
def _sweep(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    return data


@cache
def _records(folder: Path) -> tuple[dict[str, Any], ...]:
    lines = (folder / "commands.jsonl").read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def sweep_points() -> list[dict[str, Any]]:
    """``sweep.json``'s points, in its order."""
    points: list[dict[str, Any]] = _sweep(reference())["points"]
    return points


def records() -> tuple[dict[str, Any], ...]:
    """``commands.jsonl``'s records: one per point (``index`` into ``sweep.json``) and one per
    SPEED-Bench collector."""
    return _records(reference())
