"""SPEED-Bench cell files read back per recipe, and the recipe's measured curve in golden format.

Downstream tools (dashboards, the golden-curve PR reviewer) read these files, so their shape is a
contract, the one the README's SPEED-Bench cells section lists; every write is atomic, and the
per-recipe matrix is rebuilt from the cell files under a lock, so xdist workers finishing cells
of one recipe at once never lose a cell.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.files.atomic import atomic_write_text
from pytest_infx.files.folderlock import folder_lock
from pytest_infx.golden.curve import Curve, Provenance
from pytest_infx.golden.io import dump_curve
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import (
    CellRecord,
    DatasetInfo,
    EngineInfo,
    RecordError,
    read_record,
)
from pytest_infx.settings import environment

if TYPE_CHECKING:
    from pytest_infx.recipes.points import Point


def read_cells(layout: Layout, recipe_key: str) -> list[CellRecord]:
    """The recipe's cell records; a file that is not one (another cell's file half written by
    hand, or truncated to ``[]``) is skipped, so it cannot fail the cell that rebuilds the
    matrix."""
    cells = []
    for path in layout.cell_files(recipe_key):
        try:
            record = read_record(path)
        except (OSError, RecordError):
            continue
        if isinstance(record, CellRecord) and record.recipe == recipe_key:
            cells.append(record)
    return cells


def model_key(point: Point) -> str:
    """InferenceX's top-level key: the lowercased basename of the served model."""
    return posixpath.basename(point.recipe.model.hub_id.rstrip("/")).lower()


def source_description() -> str:
    github = environment().github
    server, repo, run = (
        github.get(v) for v in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if server and repo and run:
        return f"{server}/{repo}/actions/runs/{run}"
    return "pytest-infx run (local)"


def provenance(point: Point, dataset: DatasetInfo, engine: EngineInfo) -> Provenance:
    bench = point.recipe.speedbench
    assert bench is not None
    sampling = {k: v for k, v in bench.sampling.model_dump().items() if v is not None}
    sampling["output_len"] = bench.output_len
    spec = bench.speculative
    return Provenance(
        source=source_description(),
        dataset=f"{dataset.name}/{dataset.category}",
        dataset_sha256=dataset.sha256,
        dataset_n=dataset.n,
        sampling=sampling,
        chat_template_kwargs={m: dict(k) for m, k in sorted(bench.thinking_modes.items())},
        model=point.recipe.model.hub_id,
        image=engine.image or None,
        engine=f"{engine.name} {engine.version or ''}".strip(),
        tp=point.tp,
        method=spec.method,
        draft_model=spec.draft_subfolder or spec.draft,
    )


def measured_curve(point: Point, cells: Iterable[CellRecord], header: Provenance) -> Curve:
    bench = point.recipe.speedbench
    assert bench is not None
    modes: dict[str, dict[int, float | None]] = {}
    for cell in cells:
        modes.setdefault(cell.point.thinking, {})[cell.point.draft_length] = cell.al
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
