from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_infx.recipes import cache
from pytest_infx.recipes.loader import Tree, read_tree
from pytest_infx.recipes.points import expand

from .helpers import speedbench, write


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    return []


def _load(root: Path, reads: list[Path]) -> Tree:
    def read(folder: Path) -> Tree:
        reads.append(folder)
        return read_tree(folder)

    return cache.cached_tree(root, root.parent / "cache", read)


def test_an_unchanged_tree_is_read_once_and_gives_the_same_points(
    tmp_path: Path, counted: list[Path]
) -> None:
    root = tmp_path / "recipes"
    write(root / "a.yaml", speedbench("a-b300", draft_lengths=(1, 2)))
    first = _load(root, counted)
    second = _load(root, counted)
    assert counted == [root]
    assert [p.fingerprint for s in first.sources for p in expand(s)] == [
        p.fingerprint for s in second.sources for p in expand(s)
    ]


def test_any_edit_to_a_recipe_or_base_file_misses_the_cache(
    tmp_path: Path, counted: list[Path]
) -> None:
    root = tmp_path / "recipes"
    recipe = root / "a.yaml"
    write(recipe, speedbench("a-b300", draft_lengths=(1, 2)))
    _load(root, counted)
    write(recipe, speedbench("a-b300", draft_lengths=(1, 2, 3)))
    stat = recipe.stat()
    os.utime(recipe, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    tree = _load(root, counted)
    assert len(counted) == 2
    assert len(expand(tree.sources[0])) == 6
    write(root / "_base" / "b.yaml", "model: {}\n")
    _load(root, counted)
    assert len(counted) == 3


def test_a_tree_with_errors_is_never_cached(tmp_path: Path, counted: list[Path]) -> None:
    root = tmp_path / "recipes"
    write(root / "a.yaml", "key: a\nunknown-field: 1\n")
    assert _load(root, counted).errors
    assert _load(root, counted).errors
    assert len(counted) == 2


def test_the_cache_can_be_turned_off(
    tmp_path: Path, counted: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.DISABLE_VAR, "0")
    root = tmp_path / "recipes"
    write(root / "a.yaml", speedbench("a-b300", draft_lengths=(1,)))
    _load(root, counted)
    _load(root, counted)
    assert len(counted) == 2
