"""A kind from another package reads its own block under ``kinds``: its points join the
recipe's, its block's material makes their fingerprints, and the built-in points' fingerprints
do not move when such a block is added."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from core.helpers import line_of, speedbench, write

from pytest_infx.recipes.blocks import KINDS_FIELD, BlockKind, PointSpec
from pytest_infx.recipes.errors import RecipeErrors
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand
from pytest_infx.recipes.schema import Recipe


class Sizes:
    """A kind whose block lists sizes, one point each; ``label`` only names the report."""

    name = "sizes"

    def points(self, block: Mapping[str, Any], recipe: Recipe) -> Sequence[PointSpec]:
        sizes = block.get("sizes")
        if not isinstance(sizes, list) or not sizes:
            raise ValueError("'sizes' must be a non-empty list")
        return [PointSpec(f"s{size}", recipe.tp, 1, variant=None) for size in sorted(sizes)]

    def material(self, block: Mapping[str, Any]) -> Mapping[str, Any]:
        return {k: v for k, v in block.items() if k not in ("sizes", "label")}


KINDS: dict[str, BlockKind] = {"sizes": Sizes()}


def _expand(tmp_path: Path, block: Mapping[str, Any] | None, **kinds: BlockKind) -> list[Point]:
    data = speedbench("a-b300", draft_lengths=(1,), modes=["thinking_off"])
    if block is not None:
        data[KINDS_FIELD] = {"sizes": dict(block)}
    return expand(load_file(write(tmp_path / "r.yaml", data)), kinds=kinds or KINDS)


def test_a_provided_kind_s_points_follow_the_built_in_ones(tmp_path: Path) -> None:
    points = _expand(tmp_path, {"sizes": [8, 2], "seed": 1})
    assert [(p.id, p.kind) for p in points] == [
        ("a-b300[k1-thinking_off]", "speedbench"),
        ("a-b300[s2]", "sizes"),
        ("a-b300[s8]", "sizes"),
    ]
    assert points[1].block == {"sizes": [8, 2], "seed": 1}
    assert points[1].coordinates() == {"kind": "sizes", "tp": 4, "concurrency": 1}


def test_only_the_block_s_material_moves_its_fingerprints(tmp_path: Path) -> None:
    before = {p.id: p.fingerprint for p in _expand(tmp_path, {"sizes": [2], "seed": 1})}
    relabelled = {
        p.id: p.fingerprint for p in _expand(tmp_path, {"sizes": [2], "seed": 1, "label": "x"})
    }
    reseeded = {p.id: p.fingerprint for p in _expand(tmp_path, {"sizes": [2], "seed": 2})}
    assert relabelled == before
    assert reseeded["a-b300[s2]"] != before["a-b300[s2]"]
    assert reseeded["a-b300[k1-thinking_off]"] == before["a-b300[k1-thinking_off]"]


def test_a_provided_block_leaves_the_built_in_fingerprints_as_they_were(tmp_path: Path) -> None:
    alone = _expand(tmp_path, None)
    beside = _expand(tmp_path, {"sizes": [2]})
    assert alone[0].fingerprint == beside[0].fingerprint


def test_a_block_of_a_kind_nobody_provides_names_its_line(tmp_path: Path) -> None:
    data = speedbench("a-b300", draft_lengths=(1,))
    data[KINDS_FIELD] = {"evals": {"sizes": [1]}}
    path = write(tmp_path / "r.yaml", data)
    with pytest.raises(RecipeErrors) as caught:
        expand(load_file(path), kinds=KINDS)
    line = line_of(path.read_text(), "  evals:")
    assert str(caught.value).splitlines() == [
        f"{path}:{line}: kinds.evals: no installed package provides the kind 'evals'"
        " (provided kinds: sizes)",
        "  hint: install the package that provides it, or list it in a pytest_infx_kinds hook",
    ]


def test_a_block_its_kind_refuses_names_its_line(tmp_path: Path) -> None:
    data = speedbench("a-b300", draft_lengths=(1,))
    data[KINDS_FIELD] = {"sizes": {"sizes": []}}
    path = write(tmp_path / "r.yaml", data)
    with pytest.raises(RecipeErrors, match=r"r\.yaml:\d+: kinds\.sizes: 'sizes' must be a"):
        expand(load_file(path), kinds=KINDS)


def test_a_recipe_of_a_provided_kind_alone_is_a_recipe(tmp_path: Path) -> None:
    data = speedbench("a-b300")
    del data["speedbench"]
    data[KINDS_FIELD] = {"sizes": {"sizes": [4]}}
    points = expand(load_file(write(tmp_path / "r.yaml", data)), kinds=KINDS)
    assert [p.id for p in points] == ["a-b300[s4]"]


def test_a_reader_of_the_built_in_kinds_alone_leaves_the_blocks_out(tmp_path: Path) -> None:
    """``infx recipes`` and lint's changed keys pass no kinds: a block under ``kinds`` makes
    no point there, and is no error."""
    data = speedbench("a-b300", draft_lengths=(1,), modes=["thinking_off"])
    data[KINDS_FIELD] = {"evals": {"sizes": [1]}}
    points = expand(load_file(write(tmp_path / "r.yaml", data)))
    assert [p.kind for p in points] == ["speedbench"]


def test_an_override_picks_a_provided_kind_s_points_by_their_kind(tmp_path: Path) -> None:
    data = speedbench("a-b300", draft_lengths=(1,), modes=["thinking_off"])
    data[KINDS_FIELD] = {"sizes": {"sizes": [2, 4], "seed": 1}}
    before = {
        p.id: p.fingerprint
        for p in expand(load_file(write(tmp_path / "r.yaml", data)), kinds=KINDS)
    }
    data["overrides"] = [{"when": {"kind": "sizes", "tp": 4}, KINDS_FIELD: {"sizes": {"seed": 2}}}]
    points = expand(load_file(write(tmp_path / "r.yaml", data)), kinds=KINDS)
    after = {p.id: p.fingerprint for p in points}
    assert [p.block for p in points if p.kind == "sizes"] == [{"sizes": [2, 4], "seed": 2}] * 2
    assert after["a-b300[k1-thinking_off]"] == before["a-b300[k1-thinking_off]"]
    assert after["a-b300[s2]"] != before["a-b300[s2]"]
