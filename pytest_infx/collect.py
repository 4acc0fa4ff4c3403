"""Recipe files as pytest collectors, points as pytest items.

Items are real ``pytest.Function`` objects (so fixtures, ``-k``, syrupy and junit all work) whose
name is the DESIGN item id ``<recipe key>[<point>]``. The recipe tree is read once per session:
``extends`` and duplicate-key checks need every file, and a 2,000-point tree must collect fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_infx import items as item_functions
from pytest_infx.options import settings
from pytest_infx.recipes.cache import cached_tree
from pytest_infx.recipes.errors import RecipeErrors
from pytest_infx.recipes.loader import RECIPE_SUFFIXES, RecipeSource, Tree
from pytest_infx.recipes.points import Point, expand

POINT = pytest.StashKey[Point]()
TREE = pytest.StashKey[Tree]()
BY_PATH = pytest.StashKey[dict[Path, "RecipeSource"]]()

_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "speedbench": item_functions.speedbench_cell,
    "agentic": item_functions.agentic_point,
}


def tree(config: pytest.Config) -> Tree:
    found = config.stash.get(TREE, None)
    if found is None:
        cache = getattr(config, "cache", None)
        folder = cache.mkdir("infx-recipes") if cache is not None else None
        found = cached_tree(settings(config).recipes, folder)
        config.stash[TREE] = found
    return found


def sources_by_path(config: pytest.Config) -> dict[Path, RecipeSource]:
    """Each file's recipe, looked up once per file instead of scanning the tree per file."""
    found = config.stash.get(BY_PATH, None)
    if found is None:
        found = config.stash[BY_PATH] = {s.path: s for s in tree(config).sources}
    return found


def is_recipe_file(config: pytest.Config, path: Path) -> bool:
    if path.suffix not in RECIPE_SUFFIXES:
        return False
    root = settings(config).recipes
    try:
        relative = path.relative_to(root)
    except ValueError:
        return False
    return not any(part.startswith(("_", ".")) for part in relative.parts)


class RecipeFile(pytest.File):
    """One recipe file; its items are the points of its recipe."""

    def collect(self) -> Iterator[pytest.Item]:
        loaded = tree(self.config)
        errors = loaded.errors.get(self.path)
        if errors:
            raise self.CollectError("\n".join(str(e) for e in errors))
        source = sources_by_path(self.config).get(self.path)
        if source is None:
            return
        try:
            points = expand(source)
        except RecipeErrors as exc:
            raise self.CollectError(str(exc)) from None
        fixtureinfo: dict[str, Any] = {}
        manager = self.session._fixturemanager
        for point in points:
            function = _FUNCTIONS[point.kind]
            info = fixtureinfo.get(point.kind)
            if info is None:
                info = manager.getfixtureinfo(node=self, func=function, cls=None)  # type: ignore[arg-type]
                fixtureinfo[point.kind] = info
            item = pytest.Function.from_parent(
                self,
                name=point.id,
                callobj=function,
                fixtureinfo=info,
                originalname=point.recipe_key,
            )
            item.stash[POINT] = point
            item.add_marker(point.kind)
            yield item


def point_of(item: pytest.Item) -> Point | None:
    return item.stash.get(POINT, None)
