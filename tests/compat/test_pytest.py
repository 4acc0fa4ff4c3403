from __future__ import annotations

import pytest

from pytest_infx.compat.pytest import append_to_node_id, fixture_manager, marker_matcher


@pytest.mark.parametrize(
    ("expression", "marks", "selected"),
    [
        ("speedbench", {"speedbench"}, True),
        ("speedbench", set(), False),
        ("not engine", set(), True),
        ("not engine", {"engine"}, False),
        ("speedbench and not lint", {"speedbench", "lint"}, False),
        ("(agentic or speedbench) and gpu", {"agentic", "gpu"}, True),
    ],
)
def test_a_marker_expression_selects_as_pytest_selects(
    expression: str, marks: set[str], selected: bool
) -> None:
    matches = marker_matcher(expression)
    assert matches is not None
    assert matches(marks) is selected


def test_an_expression_pytest_cannot_parse_has_no_matcher() -> None:
    assert marker_matcher("speedbench and") is None
    assert marker_matcher("(lint") is None


def test_the_fixture_manager_gives_fixture_closures(request: pytest.FixtureRequest) -> None:
    manager = fixture_manager(request.session)
    info = manager.getfixtureinfo(node=request.node, func=lambda tmp_path: None, cls=None)
    assert "tmp_path" in info.names_closure


def test_a_suffix_appended_to_a_node_id_is_the_items_id(request: pytest.FixtureRequest) -> None:
    module = request.node.parent
    item = pytest.Function.from_parent(module, name="point[k1]", callobj=lambda: None)
    before = item.nodeid
    assert before == f"{module.nodeid}::point[k1]"
    append_to_node_id(item, "@infx-group")
    assert item.nodeid == f"{before}@infx-group"
    append_to_node_id(item, "@infx-group")
    assert item.nodeid == f"{before}@infx-group"
    assert item.nodeid.split("::")[0] == before.split("::")[0]
