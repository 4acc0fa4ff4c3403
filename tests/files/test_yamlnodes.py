from __future__ import annotations

import pytest
from yaml.nodes import MappingNode, ScalarNode

from pytest_infx.files.yamlnodes import MAX_DEPTH, YamlFault, compose, nesting


def test_a_document_is_composed_into_nodes_with_their_lines() -> None:
    node = compose("a: 1\nb:\n  - !!python/object:os.system x\n")
    assert isinstance(node, MappingNode)
    key, value = node.value[1]
    assert isinstance(key, ScalarNode) and key.start_mark.line + 1 == 2
    assert value.value[0].tag == "tag:yaml.org,2002:python/object:os.system"
    assert compose("") is None and compose("# only a comment\n") is None


@pytest.mark.parametrize(
    ("text", "line", "column", "tab"),
    [
        ("a: 1\nb: [1, 2\n", 3, 1, False),
        ("a:\n\t- 1\n", 2, 1, True),
        ("a: 1\n b: 2\n", 2, 3, False),
    ],
)
def test_a_syntax_error_says_where(text: str, line: int, column: int, tab: bool) -> None:
    with pytest.raises(YamlFault) as caught:
        compose(text)
    fault = caught.value
    assert (fault.line, fault.column, fault.tab, fault.too_deep) == (line, column, tab, False)
    assert str(fault).startswith(f"line {line}: ")


def test_two_documents_are_one_fault() -> None:
    with pytest.raises(YamlFault) as caught:
        compose("a: 1\n---\nb: 2\n")
    assert caught.value.problem == "but found another document" and caught.value.line == 2
    assert caught.value.context == "expected a single document in the stream"


@pytest.mark.parametrize("depth", [999, 20_000, 100_000])
def test_nesting_past_the_parser_is_one_fault_not_a_recursion_error(depth: int) -> None:
    text = "[" * depth + "]" * depth
    if depth < 1_000:
        assert compose(text) is not None
        return
    with pytest.raises(YamlFault) as caught:
        compose(text)
    assert caught.value.too_deep and caught.value.problem == "the YAML nests too deep to read"


@pytest.mark.parametrize(
    "text",
    ["a: " + "[" * 100_000, "a: " + "{b: " * 20_000, "a:\n" + " " * 10_001 + "b: 1\n"],
    ids=["flow", "flow-mapping", "indent"],
)
def test_depth_is_measured_before_libyaml_sees_the_text(text: str) -> None:
    """Older libyaml builds recurse without a limit and crash the process; the guard stops the
    text first, on any PyYAML."""
    assert nesting(text) > MAX_DEPTH
    with pytest.raises(YamlFault) as caught:
        compose(text)
    assert caught.value.too_deep and caught.value.line is None


def test_a_wide_document_is_not_deep() -> None:
    text = "".join(f"k{i}: [1, {{a: [2]}}]\n" for i in range(5_000))
    assert nesting(text) == 3
    assert isinstance(compose(text), MappingNode)


@pytest.mark.parametrize("byte", ["\x00", "\x1b", "\x07"])
def test_a_control_character_is_a_fault_at_its_line_and_column(byte: str) -> None:
    with pytest.raises(YamlFault) as caught:
        compose(f"a: 1\nb: x{byte}y\n")
    assert (caught.value.line, caught.value.column) == (2, 5)
    assert caught.value.problem.startswith(f"the character U+{ord(byte):04X} is not allowed")
