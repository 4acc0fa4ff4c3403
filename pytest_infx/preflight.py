"""Checks that run for every selected point before any server starts.

A point that fails here fails on its own, with the reason, and never costs a server start; the
other points go on. The checks are cheap and deterministic, so every xdist worker computes the
same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pytest_infx.engines.base import PlanError
from pytest_infx.plan import server_plan
from pytest_infx.precision import PrecisionCheck
from pytest_infx.recipes.points import Point
from pytest_infx.speedbench.dataset import Dataset, DatasetError, default_dataset_path, load_dataset


@dataclass
class Datasets:
    """Loaded datasets by (path, category), so 14 cells read one file once."""

    base: Path
    _cache: dict[tuple[Path, str, int | None], Dataset | DatasetError] = field(default_factory=dict)

    def path_of(self, point: Point) -> Path:
        bench = point.recipe.speedbench
        assert bench is not None
        if bench.dataset.path is None:
            return default_dataset_path()
        return self.base / bench.dataset.path

    def get(self, point: Point) -> Dataset:
        bench = point.recipe.speedbench
        assert bench is not None
        ref = bench.dataset
        key = (self.path_of(point), ref.category, ref.expected_rows)
        found = self._cache.get(key)
        if found is None:
            try:
                found = load_dataset(key[0], category=ref.category, expected_rows=ref.expected_rows)
            except DatasetError as exc:
                found = exc
            self._cache[key] = found
        if isinstance(found, DatasetError):
            raise found
        rows = found.rows[: ref.num_prompts] if ref.num_prompts else found.rows
        return Dataset(found.name, found.path, found.category, found.sha256, rows)


def preflight(
    point: Point, datasets: Datasets, golden_root: Path, precision: PrecisionCheck | None = None
) -> list[str]:
    from pytest_infx.golden.lookup import GoldenLookupError
    from pytest_infx.golden.store import GoldenNotFoundError
    from pytest_infx.recipes.rules import check_point
    from pytest_infx.serving import synthetic_for

    problems = [str(p) for p in check_point(point)]
    try:
        synthetic_for(point, golden_root)
    except (GoldenNotFoundError, GoldenLookupError, ValueError) as exc:
        problems.append(f"{point.id}: synthetic acceptance needs its golden curve: {exc}")
    try:
        server_plan(point)
    except PlanError as exc:
        problems.append(str(exc))
    if point.kind == "speedbench":
        try:
            datasets.get(point)
        except DatasetError as exc:
            problems.append(str(exc))
    if precision is not None:
        problems += precision.preflight(point)
    return problems
