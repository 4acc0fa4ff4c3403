from __future__ import annotations

from pathlib import Path

import pytest
from core.helpers import speedbench, write

from pytest_infx.plugin.collect.groups import group_suffix

WORKER = """
import pytest
from pytest_infx.plugin.collect.groups import ServerGroupIds


def pytest_configure(config):
    # what an xdist worker under --dist loadgroup has: the option set and the plugin registered
    config.option.loadgroup = {loadgroup}
    config.pluginmanager.register(ServerGroupIds(), "test-server-groups")
"""
OWN_TEST = """
import pytest


@pytest.mark.xdist_group("own")
def test_own():
    pass
"""


def test_the_suffix_joins_the_group_names_as_xdist_does(request: pytest.FixtureRequest) -> None:
    item = pytest.Function.from_parent(request.node.parent, name="point", callobj=lambda: None)
    assert group_suffix(item) is None
    item.add_marker(pytest.mark.xdist_group("infx-b"))
    item.add_marker(pytest.mark.xdist_group(name="a"))
    item.add_marker(pytest.mark.xdist_group())
    assert group_suffix(item) == "@a_default_infx-b"


def _ids(pytester: pytest.Pytester, loadgroup: bool) -> list[str]:
    pytester.makeconftest(WORKER.format(loadgroup=loadgroup))
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b300", "tests", "recipes")
    assert result.ret == 0, result.stdout.str()
    return [line for line in result.outlines if "::" in line]


def test_under_loadgroup_each_recipe_item_id_ends_with_its_server_group(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=(1, 2)))
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_own.py").write_text(OWN_TEST)
    ids = _ids(pytester, loadgroup=True)
    assert "tests/test_own.py::test_own" in ids
    points = [node_id for node_id in ids if node_id.startswith("recipes/")]
    assert len(points) == 4, ids
    by_k: dict[str, set[str]] = {}
    for node_id in points:
        point, group = node_id.split("]@", 1)
        by_k.setdefault(point.split("[k", 1)[1][0], set()).add(group)
    assert sorted(by_k) == ["1", "2"] and all(len(found) == 1 for found in by_k.values()), by_k
    (one,), (two,) = by_k.values()
    assert one != two and one.startswith("infx-") and two.startswith("infx-"), by_k


def test_without_loadgroup_no_id_changes(recipes: Path, pytester: pytest.Pytester) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=(1,)))
    (pytester.path / "tests").mkdir()
    ids = _ids(pytester, loadgroup=False)
    assert ids == [
        "recipes/a.yaml::a-b300[k1-thinking_off]",
        "recipes/a.yaml::a-b300[k1-thinking_on]",
    ]
