from __future__ import annotations

import yaml
from yaml.nodes import MappingNode

from pytest_infx.files.yamlkeys import repeated_key


def _mapping(text: str) -> MappingNode:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    assert isinstance(node, MappingNode)
    return node


def test_the_first_repeated_key_is_found_with_the_one_it_repeats() -> None:
    found = repeated_key(_mapping("a: 1\nb: 2\na: 3\nb: 4\n"))
    assert found is not None
    first, repeat = found
    assert (first.start_mark.line, repeat.start_mark.line) == (0, 2)


def test_keys_that_resolve_differently_are_different_keys() -> None:
    assert repeated_key(_mapping("1: int\n'1': str\ntrue: yes\n'true': text\n")) is None
    assert repeated_key(_mapping("a: 1\nb: 2\n")) is None
