"""What collection needs of each recipe file, small enough to load without the recipe schema.

Making 3,000 items needs, per point, only its id, kind, runner, fingerprint and the key of the
server it would share; validating recipes (pydantic) and planning servers (the engine adapters)
cost more than making the items. The catalog holds just that, per file, and is cached with the
tree it came from, so an unchanged tree collects without importing the schema, the YAML loader
or the adapters. The full point (with its recipe) is looked up only when an item runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.recipes.cache import cached
from pytest_infx.recipes.labels import server_label

if TYPE_CHECKING:
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.recipes.blocks import BlockKind
    from pytest_infx.recipes.loader import Stamp, Tree


@dataclass(frozen=True, slots=True)
class PointRef:
    """One point as collection sees it; ``server`` groups points that share a server."""

    recipe_key: str
    name: str
    kind: str
    runner: str
    fingerprint: str
    server: str

    @property
    def id(self) -> str:
        return f"{self.recipe_key}[{self.name}]"


@dataclass(frozen=True)
class Catalog:
    """Per recipe file: its points, or the text of its errors."""

    points: dict[Path, tuple[PointRef, ...]]
    errors: dict[Path, str]
    stamps: dict[Path, Stamp] = field(default_factory=dict, compare=False, repr=False)


def build(
    tree: Tree,
    engines: EngineRegistry,
    stale: Catalog | None = None,
    kinds: Mapping[str, BlockKind] | None = None,
) -> Catalog:
    """The catalog of ``tree``; a file whose stamp (its and its bases' sizes and times) is the
    one ``stale`` was built from keeps its points without being expanded again.

    A server is what the effective recipe (one object per set of matching overrides), the kind,
    the TP, the draft length and, for an agentic point, the concurrency (its admission) make of
    it; thinking is the client's, so thinking modes reuse a plan already made.
    """
    from pytest_infx.prepare.plan import server_key
    from pytest_infx.recipes.errors import RecipeErrors
    from pytest_infx.recipes.points import expand

    errors = {path: "\n".join(str(e) for e in errs) for path, errs in tree.errors.items()}
    rules = engines.engine_rules()
    points: dict[Path, tuple[PointRef, ...]] = {}
    for source in tree.sources:
        stamp = tree.stamps.get(source.path)
        if (
            stale is not None
            and stamp is not None
            and stale.stamps.get(source.path) == stamp
            and source.path in stale.points
        ):
            points[source.path] = stale.points[source.path]
            continue
        refs = []
        servers: dict[tuple[int, str, int, int | None, int | None], str] = {}
        try:
            for p in expand(source, rules, kinds):
                conc = p.concurrency if p.kind == "agentic" else None
                shared = (id(p.recipe), p.kind, p.tp, p.draft_length, conc)
                server = servers.get(shared)
                if server is None:
                    server = servers[shared] = server_key(p, engines)
                refs.append(PointRef(p.recipe_key, p.name, p.kind, p.runner, p.fingerprint, server))
        except RecipeErrors as exc:
            errors[source.path] = str(exc)
            continue
        except (ArithmeticError, ValueError, TypeError, RecursionError) as exc:
            errors[source.path] = (
                f"{source.path}: a value of this recipe cannot be used"
                f" ({type(exc).__name__}: {exc})\n  hint: check the numbers and sizes in this file"
            )
            continue
        points[source.path] = tuple(refs)
    stamps = {path: tree.stamps[path] for path in points if path in tree.stamps}
    return Catalog(points, errors, stamps)


THINKING_SUFFIXES = ("-thinking_on", "-thinking_off")


def server_labels(catalog: Catalog) -> dict[str, str]:
    """Each server key's label, from which its one name is made (the plan, progress lines, log
    files and messages use it; :func:`pytest_infx.launch.spec.server_name`): the recipe key and
    point of its first user in the catalog's order, without the thinking mode, which the client
    sets. Taken over the whole catalog, so a name does not depend on which points a run
    selects, and a server that two recipes share has one name."""
    labels: dict[str, str] = {}
    for path in sorted(catalog.points):
        for ref in catalog.points[path]:
            if ref.server not in labels:
                point = ref.name
                for suffix in THINKING_SUFFIXES:
                    point = point.removesuffix(suffix)
                labels[ref.server] = server_label(ref.recipe_key, point)
    return labels


def cached_catalog(
    root: Path,
    folder: Path | None,
    tree: Callable[[], Tree],
    engines: Callable[[], EngineRegistry],
    providers: str = "",
    kinds: Mapping[str, BlockKind] | None = None,
) -> Catalog:
    """The catalog of ``root``; ``tree`` reads the tree and ``engines`` builds the registry
    only when the cache misses. Server keys come from the engine adapters, so a catalog made
    with other providers (``providers``, their identity) is kept apart."""
    name = f"catalog-{providers}" if providers else "catalog"
    return cached(
        root,
        folder,
        name,
        Catalog,
        lambda stale: build(tree(), engines(), stale, kinds),
        lambda c: not c.errors,
    )
