from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from core.helpers import agentic, speedbench, write

import pytest_infx.plugin.collect.files as collect
from pytest_infx.engines.registry import installed
from pytest_infx.prepare.catalog import build
from pytest_infx.prepare.plan import server_key
from pytest_infx.recipes.loader import read_tree
from pytest_infx.recipes.points import expand

CACHED_INI = """
[pytest]
infx = true
filterwarnings = ignore:Module already imported:pytest.PytestAssertRewriteWarning
"""

PROBE = """
import json, sys

def pytest_collection_finish(session):
    with open("probe.jsonl", "a") as out:
        out.write(json.dumps({
            "schema": "pytest_infx.recipes.schema" in sys.modules,
            "pydantic": "pydantic" in sys.modules,
            "items": [item.nodeid for item in session.items],
        }) + "\\n")
"""


def test_the_catalog_holds_what_expansion_and_planning_give(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    write(root / "a.yaml", speedbench("a-b300", draft_lengths=(1, 2)))
    write(root / "b.yaml", agentic("b-b200-agentic", runner="b200"))
    tree = read_tree(root)
    catalog = build(tree, installed())
    assert catalog.errors == {}
    for source in tree.sources:
        expected = [(p.id, p.kind, p.runner, p.fingerprint, server_key(p)) for p in expand(source)]
        refs = catalog.points[source.path]
        assert [(r.id, r.kind, r.runner, r.fingerprint, r.server) for r in refs] == expected
    servers = {r.name: r.server for r in catalog.points[root / "a.yaml"]}
    assert servers["k1-thinking_off"] == servers["k1-thinking_on"] != servers["k2-thinking_off"]
    agentic_servers = [r.server for r in catalog.points[root / "b.yaml"]]
    assert len(set(agentic_servers)) == len(agentic_servers) == 8


def test_a_file_that_fails_keeps_its_error_text_and_the_others_their_points(
    tmp_path: Path,
) -> None:
    root = tmp_path / "recipes"
    write(root / "a.yaml", speedbench("a-b300", draft_lengths=(1,)))
    write(root / "bad.yaml", "key: bad\nunknown-field: 1\n")
    catalog = build(read_tree(root), installed())
    assert list(catalog.points) == [root / "a.yaml"]
    assert "unknown-field" in catalog.errors[root / "bad.yaml"]
    assert "bad.yaml:2" in catalog.errors[root / "bad.yaml"]


def test_an_unchanged_tree_collects_without_validating_a_recipe(pytester: pytest.Pytester) -> None:
    pytester.makeini(CACHED_INI)
    pytester.makeconftest(PROBE)
    write(pytester.path / "recipes" / "a.yaml", speedbench("a-b300", draft_lengths=(1, 3)))
    for _ in range(2):
        result = pytester.runpytest_subprocess("--collect-only", "-q", "--gpu", "b300")
        assert result.ret == 0, result.stdout.str()
    first, second = (
        json.loads(line) for line in (pytester.path / "probe.jsonl").read_text().splitlines()
    )
    assert first["schema"] and first["pydantic"]
    assert not second["schema"] and not second["pydantic"]
    assert second["items"] == first["items"]
    assert len(first["items"]) == 4


def test_a_recipe_edited_after_collection_is_not_run_with_the_old_point(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(CACHED_INI)
    recipe = write(pytester.path / "recipes" / "a.yaml", speedbench("a-b300", draft_lengths=(1,)))
    pytester.inline_genitems("--gpu", "b300")
    items, _ = pytester.inline_genitems("--gpu", "b300")
    assert [item.name for item in items] == ["a-b300[k1-thinking_off]", "a-b300[k1-thinking_on]"]
    write(recipe, speedbench("a-b300", draft_lengths=(1,), tp=8))
    with pytest.raises(
        collect.RecipeChangedError, match=r"a-b300\[k1-thinking_off\]: its recipe changed"
    ):
        collect.point_of(items[0])


def test_a_rebuilt_catalog_expands_only_edited_files(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    write(root / "a.yaml", speedbench("a-b300", draft_lengths=(1,)))
    write(root / "b.yaml", speedbench("b-b300", draft_lengths=(1,)))
    first_tree = read_tree(root)
    first = build(first_tree, installed())
    write(root / "b.yaml", speedbench("b-b300", draft_lengths=(1, 2)))
    stat = (root / "b.yaml").stat()
    os.utime(root / "b.yaml", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    second = build(read_tree(root, first_tree), installed(), first)
    assert second.points[root / "a.yaml"] is first.points[root / "a.yaml"]
    assert [r.name for r in second.points[root / "b.yaml"]] == [
        "k1-thinking_off",
        "k1-thinking_on",
        "k2-thinking_off",
        "k2-thinking_on",
    ]


def test_a_value_that_breaks_planning_is_an_error_of_its_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_infx.prepare import plan

    write(tmp_path / "a.yaml", agentic("a-b200"))
    write(tmp_path / "b.yaml", speedbench("b-b300"))
    real = plan.server_key

    def overflowing(point: object, engines: object = None) -> str:
        if getattr(point, "recipe_key", "") == "a-b200":
            raise OverflowError("cannot convert float infinity to integer")
        return real(point, engines)  # type: ignore[arg-type]

    monkeypatch.setattr(plan, "server_key", overflowing)
    catalog = build(read_tree(tmp_path), installed())
    assert list(catalog.errors) == [tmp_path / "a.yaml"]
    assert (
        "a value of this recipe cannot be used (OverflowError"
        in catalog.errors[tmp_path / "a.yaml"]
    )
    assert list(catalog.points) == [tmp_path / "b.yaml"]
