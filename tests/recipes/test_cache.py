from __future__ import annotations

import os
from pathlib import Path

import pytest
from core.helpers import changed, dump, speedbench, write

from pytest_infx.recipes import cache
from pytest_infx.recipes.loader import Tree, read_tree
from pytest_infx.recipes.points import expand


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


def _edit(path: Path, text: str) -> None:
    write(path, text)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def test_a_second_read_parses_only_files_whose_content_or_bases_changed(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    whole = speedbench("a-b300", draft_lengths=(1,))
    base = {k: v for k, v in whole.items() if k in ("model", "engine")}
    write(root / "_base" / "top.yaml", dump(base))
    write(root / "_base" / "mid.yaml", "extends: top.yaml\nrunner: b300\n")
    body = {k: v for k, v in whole.items() if k not in ("model", "engine", "runner")}
    write(root / "chained.yaml", dump({"extends": "_base/mid.yaml", **body, "key": "chained"}))
    write(root / "plain.yaml", speedbench("plain", draft_lengths=(1,)))
    write(root / "other.yaml", speedbench("other", draft_lengths=(1,)))
    first = read_tree(root)
    assert not first.errors

    def by_key(tree: Tree) -> dict[str, object]:
        return {s.recipe.key: s for s in tree.sources}

    _edit(root / "plain.yaml", dump(changed(speedbench("plain"), "tp", 8)))
    second = read_tree(root, first)
    old, new = by_key(first), by_key(second)
    assert new["other"] is old["other"] and new["chained"] is old["chained"]
    assert new["plain"] is not old["plain"]
    assert second.sources[[s.recipe.key for s in second.sources].index("plain")].recipe.tp == 8

    _edit(root / "_base" / "top.yaml", dump(changed(base, "engine.port", 9000)))
    third = read_tree(root, second)
    assert by_key(third)["chained"] is not new["chained"]
    assert by_key(third)["other"] is new["other"]
    assert next(s for s in third.sources if s.recipe.key == "chained").recipe.engine.port == 9000

    (root / "other.yaml").unlink()
    write(root / "broken.yaml", "key: broken\nunknown-field: 1\n")
    fourth = read_tree(root, third)
    assert sorted(by_key(fourth)) == ["chained", "plain"]
    assert list(fourth.errors) == [root / "broken.yaml"]


def test_the_cache_reads_an_edited_tree_incrementally(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    write(root / "a.yaml", speedbench("a-b300", draft_lengths=(1,)))
    write(root / "b.yaml", speedbench("b-b300", draft_lengths=(1,)))
    folder = tmp_path / "cache"
    first = cache.cached_tree(root, folder)
    _edit(root / "b.yaml", dump(changed(speedbench("b-b300", draft_lengths=(1,)), "tp", 2)))
    second = cache.cached_tree(root, folder)
    assert [s.recipe.tp for s in second.sources] == [4, 2]
    assert second.sources[0].raw == first.sources[0].raw
    assert cache.cached_tree(root, folder).sources[1].recipe.tp == 2


def _same_size_and_time(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` keeping its size and modification time, as a checkout with fixed
    modification times does."""
    assert len(new.encode()) == len(old.encode())
    stat = path.stat()
    path.write_text(new, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_an_edit_that_keeps_size_and_modification_time_misses_the_cache(
    tmp_path: Path, counted: list[Path]
) -> None:
    root = tmp_path / "recipes"
    text = dump(speedbench("a-b300", draft_lengths=(1, 2)))
    write(root / "a.yaml", text)
    assert len(expand(_load(root, counted).sources[0])) == 4
    edited = text.replace("- 2\n", "- 3\n")
    _same_size_and_time(root / "a.yaml", text, edited)
    tree = _load(root, counted)
    assert len(counted) == 2
    assert [p.draft_length for p in expand(tree.sources[0])] == [1, 1, 3, 3]


def test_an_incremental_read_sees_an_edit_that_keeps_size_and_time(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    text = dump(speedbench("a-b300", draft_lengths=(1,)))
    write(root / "a.yaml", text)
    first = read_tree(root)
    _same_size_and_time(root / "a.yaml", text, text.replace("tp: 4", "tp: 8"))
    assert read_tree(root, first).sources[0].recipe.tp == 8
