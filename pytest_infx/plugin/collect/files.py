"""Recipe files as pytest collectors, points as pytest items.

Items are real ``pytest.Function`` objects (so fixtures, ``-k``, syrupy and junit all work) whose
name is the item id ``<recipe key>[<point>]`` that reports and result files are named by.
Collection works from the catalog (ids, runners, fingerprints, server keys) and never validates
a recipe when the tree is unchanged; an item's full point, with its recipe, is looked up when
something needs it (preflight, the plan, the fixtures), and must still have the fingerprint it
was collected with.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import pytest_infx.plugin.markers as markers
import pytest_infx.plugin.options as options
from pytest_infx.compat.pytest import fixture_manager, marker_matcher
from pytest_infx.engines import extensions
from pytest_infx.plugin.kinds import item_kinds, provided
from pytest_infx.plugin.options import settings
from pytest_infx.plugin.run.kinds import ADAPTERS
from pytest_infx.plugin.stash import REF
from pytest_infx.plugin.state import RunState
from pytest_infx.prepare.catalog import Catalog, PointRef, cached_catalog, server_labels
from pytest_infx.recipes.cache import cached_tree
from pytest_infx.recipes.layout import RECIPE_SUFFIXES, is_recipe

if TYPE_CHECKING:
    from pytest_infx.recipes.loader import Tree
    from pytest_infx.recipes.points import Point


class RecipeChangedError(RuntimeError):
    """A recipe file changed between collection and the run of one of its items."""


def _cache_folder(config: pytest.Config) -> Path | None:
    cache = getattr(config, "cache", None)
    return cache.mkdir("infx-recipes") if cache is not None else None


def tree(config: pytest.Config) -> Tree:
    state = RunState.of(config)
    found = state.tree
    if found is None:
        found = cached_tree(settings(config).recipes, _cache_folder(config))
        state.tree = found
    return found


def catalog(config: pytest.Config) -> Catalog:
    state = RunState.of(config)
    found = state.catalog
    if found is None:
        found = cached_catalog(
            settings(config).recipes,
            _cache_folder(config),
            lambda: tree(config),
            lambda: options.engines(config),
            _providers(config),
            provided(config).blocks,
        )
        state.catalog = found
    return found


def _providers(config: pytest.Config) -> str:
    """Who provides engines and kinds to this run: a catalog made with others is kept apart."""
    engines = extensions.identity(options.engine_hooks(config))
    kinds = provided(config).identity
    return f"{engines}-{kinds}" if kinds else engines


def server_label(config: pytest.Config, ref: PointRef) -> str:
    """The label of the item's server (see :func:`pytest_infx.prepare.catalog.server_labels`)."""
    state = RunState.of(config)
    labels = state.server_labels
    if labels is None:
        labels = state.server_labels = server_labels(catalog(config))
    return labels[ref.server]


_MARK_NAME = re.compile(r"[\w:+\-.\[\]\\/]+")
"""A name in a ``-m`` expression, as pytest's expression scanner reads one."""
MAX_OTHER_MARKS = 10
"""Deciding tries every combination of the other names: 1,024 at most, well under a
millisecond."""


def widen_to_recipes(config: pytest.Config) -> None:
    """``pytest -m speedbench`` runs the recipes even where ``testpaths`` names only the
    repository's tests (a repository keeps its benchmarks out of its test command that way, so
    that the tests write nothing into the checkout): when the paths come from ``testpaths`` and
    the ``-m`` expression selects recipe items but no unmarked test, the recipe folder is
    collected too. Every xdist worker decides the same from the same command line."""
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return
    markexpr = markers.markexpr(config)
    if not markexpr or not _selects_recipes_only(markexpr, frozenset(item_kinds(config))):
        return
    recipes = settings(config).recipes
    root = config.rootpath
    if not recipes.is_dir() or any(recipes.is_relative_to(root / arg) for arg in config.args):
        return
    config.args.append(str(recipes))


@functools.lru_cache(maxsize=8)
def recipe_marks_only(markexpr: str, kinds: frozenset[str] = frozenset(ADAPTERS)) -> frozenset[str]:
    """The recipe markers ``-m markexpr`` names when every item it can select carries one of
    them, as pytest decides it for every combination of the other names it holds; empty when
    it can select some other item, or when it is too wide or too rich to decide cheaply
    (marker keyword arguments), so that collection stays as it was."""
    matches = marker_matcher(markexpr)
    if matches is None or "=" in markexpr:
        return frozenset()
    names = set(_MARK_NAME.findall(markexpr)) - {"and", "or", "not"}
    named = frozenset(names & kinds)
    others = sorted(names - named)
    if not named or len(others) > MAX_OTHER_MARKS:
        return frozenset()
    for size in range(len(others) + 1):
        if any(matches(chosen) for chosen in itertools.combinations(others, size)):
            return frozenset()
    return named


def _selects_recipes_only(markexpr: str, kinds: frozenset[str]) -> bool:
    matches = marker_matcher(markexpr)
    return matches is not None and not matches(()) and any(matches((kind,)) for kind in kinds)


def in_recipe_folder(config: pytest.Config, path: Path) -> bool:
    """Whether ``path`` lies in a recipe folder that is a proper subfolder of the rootdir (one
    that holds the whole repository holds the host's tests too)."""
    recipes = settings(config).recipes
    root = config.rootpath
    return path.is_relative_to(recipes) and not root.is_relative_to(recipes)


def is_recipe_file(config: pytest.Config, path: Path) -> bool:
    if path.suffix not in RECIPE_SUFFIXES:
        return False
    try:
        relative = path.relative_to(settings(config).recipes)
    except ValueError:
        return False
    return is_recipe(relative)


class RecipeFile(pytest.File):
    """One recipe file; its items are the points of its recipe."""

    def collect(self) -> Iterator[pytest.Item]:
        found = catalog(self.config)
        error = found.errors.get(self.path)
        if error:
            raise self.CollectError(error)
        fixtureinfo: dict[str, Any] = {}
        manager = fixture_manager(self.session)
        kinds = item_kinds(self.config)
        for ref in found.points.get(self.path, ()):
            kind = kinds[ref.kind]
            function = kind.function
            info = fixtureinfo.get(ref.kind)
            if info is None:
                info = manager.getfixtureinfo(node=self, func=function, cls=None)
                fixtureinfo[ref.kind] = info
            item = pytest.Function.from_parent(
                self, name=ref.id, callobj=function, fixtureinfo=info
            )
            # set after the item is made: pytest 9.2 builds a node id from ``originalname`` and a
            # callspec, and a recipe point has no callspec, so its id would lose the point
            item.originalname = ref.recipe_key
            item.stash[REF] = ref
            item.add_marker(kind.name)
            yield item


def ref_of(item: pytest.Item) -> PointRef | None:
    return item.stash.get(REF, None)


def point_of(item: pytest.Item) -> Point | None:
    """The item's full point, from the tree as it is now; only the item's own file is
    expanded, so a run of ten cells does not expand the whole tree."""
    ref = item.stash.get(REF, None)
    if ref is None:
        return None
    found = _points(item.config, item.path).get(ref.id)
    if found is None or found.fingerprint != ref.fingerprint:
        raise RecipeChangedError(
            f"{ref.id}: its recipe changed after collection; run pytest again to collect it anew"
        )
    return found


def _points(config: pytest.Config, path: Path) -> dict[str, Point]:
    """The points of one recipe file by id, expanded on first use."""
    state = RunState.of(config)
    by_file = state.points
    found = by_file.get(path)
    if found is None:
        from pytest_infx.recipes.errors import RecipeErrors
        from pytest_infx.recipes.points import expand

        sources = state.sources
        if sources is None:
            sources = state.sources = {s.path: s for s in tree(config).sources}
        source = sources.get(path)
        try:
            blocks = provided(config).blocks
            found = {p.id: p for p in expand(source, kinds=blocks)} if source is not None else {}
        except RecipeErrors:
            found = {}
        by_file[path] = found
    return found
