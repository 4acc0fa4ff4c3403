"""Checks that run for every selected point before any server starts.

A point that fails here fails on its own, with the reason, and never costs a server start; the
other points go on. The checks are cheap and deterministic, so every xdist worker computes the
same answers.
"""

from __future__ import annotations

import difflib
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
    golden_checked: dict[tuple[Path, str], str | None] = field(default_factory=dict)

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


NEAR_CUTOFF = 0.8
"""How alike (difflib's ratio) a missing curve's name and an existing one must be for the
missing one to count as a typo of it rather than a new curve."""


def golden_name_problem(
    point: Point, golden_root: Path, cache: Datasets, recording: bool | None = None
) -> str | None:
    """A SPEED-Bench recipe's ``golden:`` that names no curve but is close to the name of one.

    ``--snapshot-update`` records a curve that does not exist yet, so a typo would record a new,
    misnamed curve and leave the real one untouched. A missing name within difflib's
    :data:`NEAR_CUTOFF` of an existing curve is therefore an error before any server starts,
    with or without ``--snapshot-update``. A new curve whose name is that close on purpose is
    listed first in the golden registry (``golden/README.md``); a name close to no curve is new
    by construction and is recorded. ``recording`` is whether ``--snapshot-update`` was given
    (``None``: not known): without it, any missing curve fails here rather than after the run.
    """
    bench = point.recipe.speedbench
    if point.kind != "speedbench" or bench is None:
        return None
    key = (golden_root, bench.golden)
    if key not in cache.golden_checked:
        cache.golden_checked[key] = _golden_name_problem(point, bench.golden, golden_root)
    found = cache.golden_checked[key]
    if (
        found is None
        and recording is False
        and not (golden_root / f"{bench.golden}.yaml").is_file()
    ):
        return (
            f"{_golden_line(point)}: speedbench.golden: no golden curve {bench.golden!r} in"
            f" {golden_root}; record it with --snapshot-update or name an existing curve"
        )
    return found


def _golden_name_problem(point: Point, name: str, golden_root: Path) -> str | None:
    from pytest_infx.golden.io import GoldenFileError
    from pytest_infx.golden.store import REGISTRY_FILE, GoldenStore

    store = GoldenStore(golden_root)
    if store.path(name).is_file():
        from pytest_infx.golden.io import load_curve

        try:
            load_curve(store.path(name))
        except GoldenFileError as exc:
            return (
                f"{_golden_line(point)}: speedbench.golden: the golden file cannot be used: {exc}"
            )
        return None
    near = difflib.get_close_matches(name, store.names(), n=3, cutoff=NEAR_CUTOFF)
    if not near:
        return None
    try:
        if name in {entry.curve for entry in store.registry()}:
            return None
    except GoldenFileError:
        pass
    shown = ", ".join(repr(n) for n in near)
    return (
        f"{_golden_line(point)}: speedbench.golden: no golden curve {name!r} in {golden_root},"
        f" and the name is close to {shown}: a typo would record a new, misnamed curve;"
        f" name the existing curve, or, to start a new curve with this name on purpose, add its"
        f" row to {golden_root / REGISTRY_FILE} first, then record it with --snapshot-update"
    )


def _golden_line(point: Point) -> str:
    """``file:line`` of the ``golden:`` key, read again only on this error path."""
    from pytest_infx.recipes.errors import RecipeError, RecipeErrors
    from pytest_infx.recipes.loader import load_file
    from pytest_infx.recipes.rules import locate

    try:
        where = locate(load_file(point.path).raw, "speedbench", "golden")
    except (RecipeError, RecipeErrors):
        where = None
    return str(where) if where is not None else f"{point.path}:{point.line}"


def preflight(
    point: Point,
    datasets: Datasets,
    golden_root: Path,
    precision: PrecisionCheck | None = None,
    recording: bool | None = None,
) -> list[str]:
    """Every problem of ``point`` that is known before a server starts; ``recording`` is
    whether ``--snapshot-update`` was given, ``None`` when the caller does not say."""
    from pytest_infx.golden.lookup import GoldenLookupError
    from pytest_infx.golden.store import GoldenNotFoundError
    from pytest_infx.recipes.rules import check_point
    from pytest_infx.serving import synthetic_for

    problems = [str(p) for p in check_point(point)]
    golden = golden_name_problem(point, golden_root, datasets, recording)
    if golden is not None:
        problems.append(golden)
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
