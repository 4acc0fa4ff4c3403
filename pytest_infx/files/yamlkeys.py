"""The one duplicate-key check for the YAML files pytest-infx reads.

YAML loaders keep the last of two equal keys without a word, so a recipe, a golden curve or a
changelog entry that repeats a key silently loses the first value. Every reader composes nodes
(for line numbers) and asks this module which key repeats, so all of them agree on what counts
as the same key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from yaml.nodes import MappingNode, Node, ScalarNode


def written_key(node: Node) -> Hashable:
    """A key as written: its resolved tag and text; a collection key is never equal to another."""
    if isinstance(node, ScalarNode):
        return (node.tag, node.value)
    return id(node)


def repeated_key(
    node: MappingNode, key: Callable[[Node], Hashable] = written_key
) -> tuple[Node, Node] | None:
    """``(first, repeat)``: the first key node that repeats an earlier key of ``node``, and that
    earlier one; ``None`` when every key is unique. ``key`` says when two keys are the same."""
    seen: dict[Hashable, Node] = {}
    for key_node, _ in node.value:
        marker = key(key_node)
        first = seen.get(marker)
        if first is not None:
            return first, key_node
        seen[marker] = key_node
    return None
