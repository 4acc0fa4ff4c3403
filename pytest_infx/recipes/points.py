"""Expand recipes into points: one benchmark cell, one pytest item.

SPEED-Bench points are draft length x thinking mode; agentic points are TP x concurrency. Each
point carries the recipe as it applies to that point (overrides merged) and a fingerprint of
everything that affects its result, so that changed-key detection and caching never depend on
formatting, comments or on the other points of the recipe.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from pytest_infx.recipes.blocks import KINDS_FIELD, BlockKind, PointSpec
from pytest_infx.recipes.checks import recipe_errors
from pytest_infx.recipes.errors import RecipeError, RecipeErrors
from pytest_infx.recipes.extends import deep_merge
from pytest_infx.recipes.loader import Override, RecipeSource
from pytest_infx.recipes.owned import EngineRules
from pytest_infx.recipes.schema import Agentic, FixedSeqLen, Recipe, Speedbench, ThinkingMode
from pytest_infx.recipes.source import LinedDict
from pytest_infx.recipes.validation import validation_errors

Kind = str
"""A point's kind: a built-in one, or the name of a kind another package provides."""
FINGERPRINT_VERSION = 2


@dataclass(frozen=True)
class Cell:
    """A SPEED-Bench point's block of its recipe with the draft length and thinking mode that
    pick its cell: the recipe's types leave all three optional, a cell has them all."""

    bench: Speedbench
    draft_length: int
    thinking: ThinkingMode


_Block = TypeVar("_Block", Cell, Agentic, FixedSeqLen)


@dataclass(frozen=True)
class Point:
    """One benchmark cell: where it comes from, its coordinates, and its effective recipe."""

    recipe_key: str
    kind: Kind
    name: str
    runner: str
    tp: int
    concurrency: int
    draft_length: int | None
    thinking: ThinkingMode | None
    recipe: Recipe = field(repr=False, compare=False)
    path: Path = field(compare=False)
    line: int = field(compare=False)
    fingerprint: str = ""
    variant: str | None = None
    isl: int | None = None
    osl: int | None = None

    @property
    def id(self) -> str:
        return f"{self.recipe_key}[{self.name}]"

    @property
    def block(self) -> Cell | Agentic | FixedSeqLen | dict[str, Any]:
        """The settings of the point's kind: a SPEED-Bench cell, or the AgentX block (even
        where the recipe has a ``speedbench`` block too), or the block under ``kinds`` of a
        kind another package provides. Expansion has checked that it exists; a point whose
        recipe was replaced since may lack it."""
        block = _block_of(self.recipe, self.kind, self.draft_length, self.thinking)
        if block is None:
            raise ValueError(f"{self.id}: its recipe has no {self.kind} block")
        return block

    def block_as(self, kind: type[_Block], what: str) -> _Block:
        """The point's settings when they are ``kind``'s: a point of another kind handed to a
        kind's code is a programming error, which names both kinds."""
        block = self.block
        if not isinstance(block, kind):
            raise TypeError(f"{self.id} is a {self.kind} point, not {what}")
        return block

    @property
    def cell(self) -> Cell | None:
        """The SPEED-Bench settings of a SPEED-Bench point; None for an AgentX point."""
        block = self.block
        return block if isinstance(block, Cell) else None

    @property
    def agentic(self) -> Agentic | None:
        """The AgentX settings of an AgentX point; None for a SPEED-Bench point."""
        block = self.block
        return block if isinstance(block, Agentic) else None

    @property
    def fixed_seq_len(self) -> FixedSeqLen | None:
        """The fixed-seq-len settings of a fixed-seq-len point; None for the other kinds."""
        block = self.block
        return block if isinstance(block, FixedSeqLen) else None

    def coordinates(self) -> dict[str, object]:
        coords: dict[str, object] = {
            "kind": self.kind,
            "tp": self.tp,
            "concurrency": self.concurrency,
        }
        if self.draft_length is not None:
            coords["draft-length"] = self.draft_length
        if self.thinking is not None:
            coords["thinking"] = self.thinking
        if self.variant is not None:
            coords["variant"] = self.variant
        if self.isl is not None:
            coords["isl"] = self.isl
        if self.osl is not None:
            coords["osl"] = self.osl
        return coords


def _block_of(
    recipe: Recipe, kind: Kind, draft_length: int | None, thinking: ThinkingMode | None
) -> Cell | Agentic | FixedSeqLen | dict[str, Any] | None:
    if kind == "agentic":
        return recipe.agentic
    if kind == "fixed_seq_len":
        return recipe.fixed_seq_len
    if kind != "speedbench":
        return recipe.kinds.get(kind)
    bench = recipe.speedbench
    if bench is None or draft_length is None or thinking is None:
        return None
    return Cell(bench, draft_length, thinking)


def _normalise_thinking(value: object) -> object:
    if value is True or value == "on":
        return "thinking_on"
    if value is False or value == "off":
        return "thinking_off"
    return value


def matches(when: Mapping[str, tuple[object, ...]], coords: Mapping[str, object]) -> bool:
    """Whether an override's ``when`` selects a point with these coordinates."""
    for name, values in when.items():
        have = coords.get(name)
        accepted = tuple(_normalise_thinking(v) for v in values) if name == "thinking" else values
        if have not in accepted:
            return False
    return True


class _Effective:
    """Validated recipes per set of matching overrides (most points share one), and the
    serialised fingerprint material per server-relevant slice of them, so that a recipe of
    sixteen points dumps its configuration twice, not sixteen times."""

    def __init__(
        self,
        source: RecipeSource,
        rules: EngineRules | None = None,
        kinds: Mapping[str, BlockKind] | None = None,
    ):
        self.source = source
        self.rules = rules
        self.kinds = kinds or {}
        self._cache: dict[tuple[int, ...], tuple[Recipe, dict[str, object]]] = {
            (): (source.recipe, source.recipe.model_dump(mode="json", by_alias=True))
        }
        self._materials: dict[
            tuple[tuple[int, ...], Kind, int, ThinkingMode | None, str | None], str
        ] = {}
        self.used: set[int] = set()

    def matching(self, coords: dict[str, object]) -> tuple[int, ...]:
        found = tuple(o.index for o in self.source.overrides if matches(o.when, coords))
        self.used.update(found)
        return found

    def for_overrides(self, matched: tuple[int, ...]) -> tuple[Recipe, dict[str, object]]:
        cached = self._cache.get(matched)
        if cached is not None:
            return cached
        raw = self.source.raw
        for override in self.source.overrides:
            if override.index in matched:
                raw = deep_merge(raw, override.fields)
        try:
            recipe = Recipe.model_validate(raw)
        except ValidationError as exc:
            raise RecipeErrors(validation_errors(raw, exc)) from None
        if recipe.key != self.source.recipe.key:
            raise AssertionError("overrides cannot change the key")
        errors = recipe_errors(raw, recipe, self.rules)
        if errors:
            raise RecipeErrors(errors)
        cached = (recipe, recipe.model_dump(mode="json", by_alias=True))
        self._cache[matched] = cached
        return cached

    def material(
        self,
        matched: tuple[int, ...],
        kind: Kind,
        tp: int,
        thinking: ThinkingMode | None,
        variant: str | None = None,
    ) -> str:
        key = (matched, kind, tp, thinking, variant)
        found = self._materials.get(key)
        if found is None:
            dumped = self.for_overrides(matched)[1]
            own = self.kinds.get(kind)
            found = json.dumps(
                _material(kind, tp, dumped, thinking, own),
                sort_keys=True,
                separators=(",", ":"),
            )
            self._materials[key] = found
        return found


_BLOCKS_AND_PROSE = (
    "speedbench",
    "agentic",
    "fixed-seq-len",
    KINDS_FIELD,
    "docs",
    "tolerance",
    "differences",
)


def _material(
    kind: Kind,
    tp: int,
    dumped: dict[str, Any],
    thinking: ThinkingMode | None,
    own: BlockKind | None = None,
) -> dict[str, object]:
    """What affects a point's result: not gating settings, and not the other points (an agentic
    server is sized for its own point's concurrency, which the coordinates carry)."""
    material = {k: v for k, v in dumped.items() if k not in _BLOCKS_AND_PROSE}
    if own is not None:
        material[KINDS_FIELD] = {kind: dict(own.material(dumped[KINDS_FIELD][kind]))}
    elif kind == "speedbench":
        bench = dict(dumped["speedbench"])
        modes = bench.pop("thinking-modes")
        for name in ("draft-lengths", "golden", "tolerance"):
            bench.pop(name)
        bench.pop("repeats", None)
        bench["chat-template-kwargs"] = modes[thinking] if thinking else None
        material["speedbench"] = bench
    elif kind == "agentic":
        bench = dict(dumped["agentic"])
        bench.pop("points")
        bench.pop("failed-request-threshold")
        bench.pop("repeats", None)
        if not bench.get("chat-template"):
            # The default leaves the fingerprints of points made before the setting unchanged.
            bench.pop("chat-template", None)
        material["agentic"] = bench
    else:
        bench = dict(dumped["fixed-seq-len"])
        bench.pop("points")
        bench.pop("request-timeout")
        if bench.get("connections") == "per-request":
            # The default leaves the fingerprints of points made before the setting unchanged.
            bench.pop("connections")
        bench.pop("repeats", None)
        if bench.get("prompt-workers") == FixedSeqLen.model_fields["prompt_workers"].default:
            # The default leaves the fingerprints of points made before the setting unchanged.
            bench.pop("prompt-workers")
        if not bench.get("chat-template"):
            # The default leaves the fingerprints of points made before the setting unchanged.
            bench.pop("chat-template", None)
        material["fixed-seq-len"] = bench
    material["tp"] = tp
    return material


def _fingerprint(kind: Kind, coords: dict[str, object], material: str) -> str:
    head = json.dumps(
        {"v": FINGERPRINT_VERSION, "kind": kind, "point": coords},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(f"{head}\n{material}".encode()).hexdigest()[:16]


def _point(
    source: RecipeSource,
    eff: _Effective,
    name: str,
    tp: int,
    concurrency: int,
    cell: tuple[int, ThinkingMode] | None,
    variant: str | None = None,
    lengths: tuple[int, int] | None = None,
    provided: str | None = None,
) -> Point:
    """One point; ``cell`` (draft length, thinking mode) makes it a SPEED-Bench cell,
    ``lengths`` (input, output) a fixed-seq-len point, ``provided`` a point of that kind from
    another package, none of them an AgentX point."""
    kind: Kind = provided or (
        "speedbench" if cell is not None else "fixed_seq_len" if lengths is not None else "agentic"
    )
    draft_length, thinking = (None, None) if cell is None else cell
    isl, osl = (None, None) if lengths is None else lengths
    coords: dict[str, object] = {"tp": tp, "concurrency": concurrency}
    if draft_length is not None:
        coords["draft-length"] = draft_length
    if thinking is not None:
        coords["thinking"] = thinking
    if variant is not None:
        coords["variant"] = variant
    if lengths is not None:
        coords["isl"], coords["osl"] = lengths
    matched = eff.matching({**coords, "kind": kind})
    recipe = eff.for_overrides(matched)[0]
    block = _block_of(recipe, kind, draft_length, thinking)
    if block is None:
        raise RecipeErrors([_removed_block(source, matched, kind)])
    if isinstance(block, Cell):
        tp = recipe.tp
        concurrency = block.bench.concurrency
        coords["tp"] = tp
        coords["concurrency"] = concurrency
    return Point(
        recipe_key=recipe.key,
        kind=kind,
        name=name,
        runner=recipe.runner,
        tp=tp,
        concurrency=concurrency,
        draft_length=draft_length,
        thinking=thinking,
        recipe=recipe,
        path=source.path,
        line=source.location.line,
        fingerprint=_fingerprint(kind, coords, eff.material(matched, kind, tp, thinking, variant)),
        variant=variant,
        isl=isl,
        osl=osl,
    )


def _removed_block(source: RecipeSource, matched: tuple[int, ...], kind: Kind) -> RecipeError:
    """The error for an override that empties the block a point of ``kind`` is made from."""
    found = [o for o in source.overrides if o.index in matched and kind in o.fields]
    where = found[-1] if found else None
    return RecipeError(
        where.fields.where(kind) if where is not None else source.location,
        f"overrides[{where.index}].{kind}" if where is not None else kind,
        f"removes the {kind} block that the point's settings come from",
        f"override fields inside {kind} (or drop the {kind} block from the recipe instead)",
    )


def expand(
    source: RecipeSource,
    rules: EngineRules | None = None,
    kinds: Mapping[str, BlockKind] | None = None,
) -> list[Point]:
    """The points of one recipe, in a stable numeric order; with the engines' ``rules``, its
    engine and engine args are checked against them (the overridden ones too). ``kinds`` are
    the kinds other packages provide, which read the recipe's blocks under ``kinds``: a block
    of a kind not among them is an error. Without ``kinds`` (a command that reads the built-in
    kinds only: ``infx recipes``, lint's changed keys) those blocks make no points."""
    recipe = source.recipe
    if rules is not None:
        errors = recipe_errors(source.raw, recipe, rules)
        if errors:
            raise RecipeErrors(errors)
    eff = _Effective(source, rules, kinds)
    points: list[Point] = []
    if recipe.speedbench is not None:
        bench = recipe.speedbench
        for k in sorted(set(bench.draft_lengths)):
            for mode in sorted(bench.thinking_modes, key=lambda m: m != "thinking_off"):
                points.append(
                    _point(source, eff, f"k{k}-{mode}", recipe.tp, bench.concurrency, (k, mode))
                )
    if recipe.agentic is not None:
        arms = sorted(
            {(p.tp, c, p.variant or "") for p in recipe.agentic.points for c in p.concurrency}
        )
        for tp, conc, arm in arms:
            name = f"tp{tp}-c{conc}-{arm}" if arm else f"tp{tp}-c{conc}"
            variant = arm or None
            points.append(_point(source, eff, name, tp, conc, None, variant))
    if recipe.fixed_seq_len is not None:
        sweep = sorted(
            {
                (p.tp, p.isl, p.osl, c, p.variant or "")
                for p in recipe.fixed_seq_len.points
                for c in p.concurrency
            }
        )
        for tp, isl, osl, conc, arm in sweep:
            name = f"tp{tp}-isl{isl}-osl{osl}-c{conc}" + (f"-{arm}" if arm else "")
            lengths = (isl, osl)
            points.append(_point(source, eff, name, tp, conc, None, arm or None, lengths))
    provided = recipe.kinds.items() if kinds is not None else ()
    for name, block in provided:
        for spec in _provided_points(source, eff.kinds, name, block):
            points.append(
                _point(
                    source,
                    eff,
                    spec.name,
                    spec.tp,
                    spec.concurrency,
                    None,
                    spec.variant,
                    provided=name,
                )
            )
    dead = [o for o in source.overrides if o.index not in eff.used]
    if dead:
        coordinates = [p.coordinates() for p in points]
        raise RecipeErrors([unmatched_override(o, coordinates) for o in dead])
    return points


def _provided_points(
    source: RecipeSource, kinds: Mapping[str, BlockKind], name: str, block: Mapping[str, Any]
) -> Sequence[PointSpec]:
    """The points a provided kind makes of its block; an error at the block's line where the
    kind is not installed or refuses its block."""
    blocks = source.raw.get(KINDS_FIELD)
    where = blocks.where(name) if isinstance(blocks, LinedDict) else source.location
    field = f"{KINDS_FIELD}.{name}"
    kind = kinds.get(name)
    if kind is None:
        known = ", ".join(sorted(kinds)) or "none"
        raise RecipeErrors(
            [
                RecipeError(
                    where,
                    field,
                    f"no installed package provides the kind {name!r} (provided kinds: {known})",
                    "install the package that provides it, or list it in a pytest_infx_kinds hook",
                )
            ]
        )
    try:
        return kind.points(block, source.recipe)
    except ValueError as exc:
        raise RecipeErrors([RecipeError(where, field, str(exc))]) from None


def _order(value: Any) -> tuple[bool, Any]:
    return (isinstance(value, str), value)


def unmatched_override(
    override: Override, coordinates: Iterable[Mapping[str, object]]
) -> RecipeError:
    """The error for an override that matches none of the points' ``coordinates``: it changes
    nothing, which is never what its author meant (a typo in a coordinate, or a point removed
    since), so it says what the points have instead."""
    exist: dict[str, list[object]] = {}
    for coords in coordinates:
        for name, value in coords.items():
            values = exist.setdefault(name, [])
            if value not in values:
                values.append(value)
    wanted = ", ".join(f"{name}: {list(values)}" for name, values in override.when.items())
    have = "; ".join(
        f"{name}: {', '.join(str(v) for v in sorted(exist[name], key=_order))}"
        for name in override.when
        if name in exist
    )
    return RecipeError(
        override.location,
        f"overrides[{override.index}].when",
        f"matches no point of this recipe (when {{{wanted}}})",
        f"the points have {have or 'none of these coordinates'}; fix the values or remove"
        " the override",
    )


def expand_all(
    sources: Iterable[RecipeSource],
    rules: EngineRules | None = None,
    kinds: Mapping[str, BlockKind] | None = None,
) -> list[Point]:
    problems: list[RecipeError] = []
    points: list[Point] = []
    for source in sources:
        try:
            points.extend(expand(source, rules, kinds))
        except RecipeErrors as exc:
            problems.extend(exc.errors)
    if problems:
        raise RecipeErrors(problems)
    return points
