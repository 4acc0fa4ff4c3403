"""Checks that run for every selected point before any server starts.

A point that fails here fails on its own, with the reason, and never costs a server start; the
other points go on. The checks are cheap and deterministic, so every xdist worker computes the
same answers.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.engines.base import PlanError
from pytest_infx.files.contained import OutsideFolderError, inside
from pytest_infx.prepare.plan import server_plan
from pytest_infx.prepare.precision import PrecisionCheck
from pytest_infx.recipes.points import Point

if TYPE_CHECKING:
    from pytest_infx.engines.conformance import Report
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.envs.toolenv import Progress
    from pytest_infx.recipes.loader import RecipeSource
    from pytest_infx.recipes.schema import Speedbench
    from pytest_infx.recipes.source import LinedDict
from pytest_infx.speedbench.dataset import Dataset, DatasetError, default_dataset_path, load_dataset


@dataclass(frozen=True)
class GoldenTree:
    """The golden curves and registered names as the run started. xdist workers, and a Slurm
    job that replaces a dead one, judge golden names from this view the controller took, not
    from the folder as it is when they collect: by then another worker may have recorded a
    curve under ``--snapshot-update``, which would make a new name look like a typo of it."""

    names: frozenset[str]
    registered: frozenset[str] | None

    def to_wire(self) -> dict[str, list[str] | None]:
        """Plain lists, the only shape execnet carries to a worker."""
        registered = sorted(self.registered) if self.registered is not None else None
        return {"names": sorted(self.names), "registered": registered}

    @classmethod
    def from_wire(cls, data: object) -> GoldenTree | None:
        if not isinstance(data, dict):
            return None
        registered = data.get("registered")
        return cls(
            frozenset(data.get("names") or ()),
            frozenset(registered) if registered is not None else None,
        )


def golden_tree(golden_root: Path) -> GoldenTree:
    from pytest_infx.golden.io import GoldenFileError
    from pytest_infx.golden.store import GoldenStore

    store = GoldenStore(golden_root)
    try:
        registered: frozenset[str] | None = frozenset(e.curve for e in store.registry())
    except GoldenFileError:
        registered = None
    return GoldenTree(frozenset(store.names()), registered)


@dataclass
class Datasets:
    """Loaded datasets by (path, category), so 14 cells read one file once."""

    base: Path
    golden: GoldenTree | None = None
    _cache: dict[tuple[Path, str, int | None], Dataset | DatasetError] = field(default_factory=dict)
    golden_checked: dict[tuple[Path, str], str | None] = field(default_factory=dict)
    golden_cells: dict[tuple[Path, str], frozenset[tuple[str, int]] | None] = field(
        default_factory=dict
    )

    def path_of(self, bench: Speedbench, source: str = "the recipe") -> Path:
        """The recipe's dataset ``path``, which must stay inside the dataset folder (the rootdir
        or ``--infx-dataset-dir``) after symbolic links; DatasetError names ``source``."""
        if bench.dataset.path is None:
            return default_dataset_path()
        try:
            return inside(
                self.base, bench.dataset.path, source=source, field="speedbench.dataset.path"
            )
        except OutsideFolderError as exc:
            raise DatasetError(str(exc)) from None

    def get(self, bench: Speedbench, source: str = "the recipe") -> Dataset:
        """The prompts of a SPEED-Bench block (a cell's ``bench``) of the recipe ``source``."""
        ref = bench.dataset
        key = (self.path_of(bench, source), ref.category, ref.expected_rows)
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
    cell = point.cell
    if cell is None:
        return None
    bench = cell.bench
    key = (golden_root, bench.golden)
    if cache.golden is None:
        cache.golden = golden_tree(golden_root)
    tree = cache.golden
    if key not in cache.golden_checked:
        cache.golden_checked[key] = _golden_name_problem(point, bench.golden, golden_root, tree)
    found = cache.golden_checked[key]
    if found is None and recording is False and bench.golden not in tree.names:
        return (
            f"{_golden_line(point)}: speedbench.golden: no golden curve {bench.golden!r} in"
            f" {golden_root}; record it with --snapshot-update or name an existing curve"
        )
    return found


def golden_cell_problem(point: Point, golden_root: Path, cache: Datasets) -> str | None:
    """A cell the point needs that its curve lacks (a curve cut short, ``thinking_on: {1: 1.6}``
    for a recipe of both modes and three draft lengths): without ``--snapshot-update``, which
    records it, the cell could only fail after its server started and measured it."""
    cell = point.cell
    if cell is None or cache.golden is None or cell.bench.golden not in cache.golden.names:
        return None
    key = (golden_root, cell.bench.golden)
    if key not in cache.golden_cells:
        from pytest_infx.golden.io import GoldenFileError, load_curve
        from pytest_infx.golden.store import GoldenStore

        try:
            curve = load_curve(GoldenStore(golden_root).path(cell.bench.golden))
        except (GoldenFileError, OSError):
            cache.golden_cells[key] = None
        else:
            cache.golden_cells[key] = frozenset((mode, k) for mode, k, _ in curve.cells())
    cells = cache.golden_cells[key]
    if cells is None or (cell.thinking, cell.draft_length) in cells:
        return None
    have = ", ".join(f"{mode} k={k}" for mode, k in sorted(cells)) or "none"
    return (
        f"{_golden_line(point)}: speedbench.golden: curve {cell.bench.golden!r} has no cell "
        f"{cell.thinking} k={cell.draft_length} (it has {have}); record it with "
        "--snapshot-update, or leave that draft length or mode out of the recipe"
    )


def _golden_name_problem(
    point: Point, name: str, golden_root: Path, tree: GoldenTree
) -> str | None:
    from pytest_infx.golden.store import REGISTRY_FILE

    if name in tree.names:
        from pytest_infx.golden.io import GoldenFileError, load_curve
        from pytest_infx.golden.store import GoldenStore

        try:
            load_curve(GoldenStore(golden_root).path(name, source=str(point.path), field="golden"))
        except (GoldenFileError, OSError, OutsideFolderError) as exc:
            return (
                f"{_golden_line(point)}: speedbench.golden: the golden file cannot be used: {exc}"
            )
        return None
    near = difflib.get_close_matches(name, sorted(tree.names), n=3, cutoff=NEAR_CUTOFF)
    if not near:
        return None
    if tree.registered is not None and name in tree.registered:
        return None
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
    engines: EngineRegistry | None = None,
) -> list[str]:
    """Every problem of ``point`` that is known before a server starts; ``recording`` is
    whether ``--snapshot-update`` was given, ``None`` when the caller does not say."""
    from pytest_infx.golden.lookup import GoldenLookupError
    from pytest_infx.golden.store import GoldenNotFoundError
    from pytest_infx.prepare.plan import synthetic_for
    from pytest_infx.recipes.rules import check_point

    problems = [str(p) for p in check_point(point)]
    golden = golden_name_problem(point, golden_root, datasets, recording)
    if golden is not None:
        problems.append(golden)
    elif recording is False:
        missing = golden_cell_problem(point, golden_root, datasets)
        if missing is not None:
            problems.append(missing)
    try:
        synthetic_for(point, golden_root, engines)
    except (GoldenNotFoundError, GoldenLookupError, ValueError) as exc:
        problems.append(f"{point.id}: synthetic acceptance needs its golden curve: {exc}")
    try:
        server_plan(point, engines=engines)
    except PlanError as exc:
        problems.append(str(exc))
    cell = point.cell
    if cell is not None:
        try:
            datasets.get(cell.bench, str(point.path))
        except DatasetError as exc:
            problems.append(str(exc))
    if precision is not None:
        problems += precision.preflight(point)
    return problems


def engine_check(
    recipes: Path,
    golden_root: Path,
    *,
    runner: str | None = None,
    install: bool = True,
    cache_dir: Path | None = None,
    engines: EngineRegistry | None = None,
    progress: Progress | None = None,
) -> Report:
    """Every point of the recipe tree (of ``runner``, if given), its launch argv parsed by its
    engine's own parser; see :mod:`pytest_infx.engines.conformance`."""
    from pytest_infx.engines.registry import installed
    from pytest_infx.recipes.loader import load_tree
    from pytest_infx.recipes.points import expand_all

    engines = engines or installed()
    rules = engines.engine_rules()
    sources = {source.path: source for source in load_tree(recipes, rules)}
    every = expand_all(sources.values(), rules)
    points = [p for p in every if runner is None or p.runner == runner]
    return engine_points_check(
        points,
        golden_root,
        sources,
        install=install,
        cache_dir=cache_dir,
        progress=progress,
        engines=engines,
    )


def engine_points_check(
    points: Iterable[Point],
    golden_root: Path,
    sources: Mapping[Path, RecipeSource],
    *,
    install: bool,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
    engines: EngineRegistry | None = None,
) -> Report:
    """The argv check of ``points``, each located in its recipe through ``sources``."""
    from pytest_infx.engines import conformance
    from pytest_infx.recipes.rules import point_raw

    def raw_of(point: Point) -> LinedDict | None:
        source = sources.get(point.path)
        return point_raw(source, point) if source is not None else None

    return conformance.check(
        points,
        lambda point: server_plan(point, golden_root, engines),
        raw_of=raw_of,
        install=install,
        progress=progress,
        cache_dir=cache_dir,
        engines=engines,
    )


def engine_problems(
    points: Sequence[Point],
    golden_root: Path,
    sources: Mapping[Path, RecipeSource],
    *,
    mode: str,
    progress: Progress | None = None,
    engines: EngineRegistry | None = None,
) -> tuple[dict[str, list[str]], list[str]]:
    """Preflight problems by point id from the argv check, and one line per parser that ran:
    ``auto`` checks with the parser environments that are installed, ``always`` installs the
    missing ones first."""
    from pytest_infx.engines.conformance import ParserCheckError, summary
    from pytest_infx.envs.toolenv import InstallError

    if mode == "off" or not points:
        return {}, []
    try:
        report = engine_points_check(
            points,
            golden_root,
            sources,
            install=mode == "always",
            progress=progress,
            engines=engines,
        )
    except (ParserCheckError, InstallError) as exc:
        return {point.id: [f"engine argv check: {exc}"] for point in points}, []
    found: dict[str, list[str]] = {}
    for rejection in report.rejected:
        for point_id in rejection.point_ids:
            found.setdefault(point_id, []).append(str(rejection))
    return found, [f"engine argv check: {line}" for line in summary(report)]
