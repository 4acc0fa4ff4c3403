"""The recipe blocks of kinds that other packages provide: a recipe's ``kinds`` mapping holds
one block per such kind, by the kind's name, and the kind reads its own block.

The built-in kinds' blocks are typed fields of the recipe (``speedbench``, ``agentic``,
``fixed-seq-len``). A kind from another package cannot add a field to that schema, so its block
arrives as plain YAML values and the kind says what points it makes and what of it changes a
result; expansion turns a kind's refusal into an error at the block's line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_infx.recipes.schema import Recipe

KINDS_FIELD = "kinds"
"""The recipe field that holds the blocks of the kinds other packages provide."""


@dataclass(frozen=True)
class PointSpec:
    """One point a kind's block makes: its name in the item id, its TP and concurrency, and
    its variant where one block holds several arms."""

    name: str
    tp: int
    concurrency: int
    variant: str | None = None


class BlockKind(Protocol):
    """A kind, as a recipe sees it: what its block means."""

    @property
    def name(self) -> str:
        """The kind's name: the key of its block under ``kinds`` and the ``kind`` of its
        points."""
        ...

    def points(self, block: Mapping[str, Any], recipe: Recipe) -> Sequence[PointSpec]:
        """The points of one recipe's block; a ``ValueError`` says what is wrong with it."""
        ...

    def material(self, block: Mapping[str, Any]) -> Mapping[str, Any]:
        """What of the block changes a point's result (its fingerprint): not what only judges
        a result, such as a threshold, nor what only picks points."""
        ...
