"""SPEED-Bench cell files read back per recipe, and the recipe's measured curve in golden format.

Downstream tools (dashboards, the golden-curve PR reviewer) read these files, so their shape is a
contract, the one the README's SPEED-Bench cells section lists; every write is atomic, and the
per-recipe matrix is rebuilt from the cell files under a lock, so xdist workers finishing cells
of one recipe at once never lose a cell.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_infx.files.atomic import atomic_write_text
from pytest_infx.files.folderlock import folder_lock
from pytest_infx.golden.curve import Curve, Provenance
from pytest_infx.golden.io import dump_curve
from pytest_infx.results.layout import Layout

if TYPE_CHECKING:
    from pytest_infx.recipes.points import Point

SPEEDBENCH = "speedbench"


def read_cells(layout: Layout, recipe_key: str) -> list[dict[str, Any]]:
    cells = []
    for path in layout.cell_files(recipe_key):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not _cell_shaped(data):
            continue
        if data.get("recipe") == recipe_key and data.get("kind", SPEEDBENCH) == SPEEDBENCH:
            cells.append(data)
    return cells


def _cell_shaped(data: object) -> bool:
    """Whether a cell file holds what the matrix reads: another cell's file may be half written
    by hand or truncated (``[]``), and must not fail the cell that rebuilds the matrix."""
    if not isinstance(data, dict):
        return False
    point, al = data.get("point"), data.get("al")
    return (
        isinstance(point, dict)
        and isinstance(point.get("thinking"), str)
        and isinstance(point.get("draft_length"), int)
        and not isinstance(point.get("draft_length"), bool)
        and (al is None or (isinstance(al, int | float) and not isinstance(al, bool)))
    )


def model_key(point: Point) -> str:
    """InferenceX's top-level key: the lowercased basename of the served model."""
    return posixpath.basename(point.recipe.model.hub_id.rstrip("/")).lower()


def source_description() -> str:
    server, repo, run = (
        os.environ.get(v) for v in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if server and repo and run:
        return f"{server}/{repo}/actions/runs/{run}"
    return "pytest-infx run (local)"


def provenance(point: Point, dataset: Mapping[str, Any], engine: Mapping[str, Any]) -> Provenance:
    bench = point.recipe.speedbench
    assert bench is not None
    sampling = {k: v for k, v in bench.sampling.model_dump().items() if v is not None}
    sampling["output_len"] = bench.output_len
    spec = bench.speculative
    return Provenance(
        source=source_description(),
        dataset=f"{dataset.get('name')}/{dataset.get('category')}",
        dataset_sha256=dataset.get("sha256"),
        dataset_n=dataset.get("n"),
        sampling=sampling,
        chat_template_kwargs={m: dict(k) for m, k in sorted(bench.thinking_modes.items())},
        model=point.recipe.model.hub_id,
        image=engine.get("image") or None,
        engine=f"{engine.get('name')} {engine.get('version') or ''}".strip(),
        tp=point.tp,
        method=spec.method,
        draft_model=spec.draft_subfolder or spec.draft,
    )


def measured_curve(point: Point, cells: Iterable[Mapping[str, Any]], header: Provenance) -> Curve:
    bench = point.recipe.speedbench
    assert bench is not None
    modes: dict[str, dict[int, float | None]] = {}
    for cell in cells:
        coords = cell["point"]
        modes.setdefault(coords["thinking"], {})[int(coords["draft_length"])] = cell.get("al")
    return Curve(name=bench.golden, model_key=model_key(point), modes=modes, header=header)


def write_matrix(layout: Layout, point: Point, header: Provenance) -> Path | None:
    """Rebuild the recipe's measured matrix from its cell files, under a kernel lock on the
    results folder (a lock file would be left among the results)."""
    path = layout.matrix(point.recipe_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(path.parent):
        cells = read_cells(layout, point.recipe_key)
        if not cells:
            return None
        atomic_write_text(path, dump_curve(measured_curve(point, cells, header)))
    return path
