"""Recipe rules that need no GPU, no engine and no network.

The same checks run twice: in ``pytest -m lint`` over the whole tree, so review catches them, and
per point in the SPEED-Bench preflight, before any server starts, so a bad recipe costs a second
instead of an hour of GPU time measuring the wrong thing (a draft length the method rejects,
chat-template kwargs that leave thinking off, an image tag that moved). Each check returns
:class:`Problem` values that name the file, the line and the recipe field, and say what to do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_infx.images import pinned
from pytest_infx.recipes.errors import Location
from pytest_infx.recipes.extends import deep_merge
from pytest_infx.recipes.loader import Override, RecipeSource
from pytest_infx.recipes.points import Point, matches
from pytest_infx.recipes.schema import AgenticSpeculative, Recipe, Speculative
from pytest_infx.recipes.source import LinedDict, LinedList

CPU_RUNNER: Final = "cpu"
AL_LITERAL_NAMES: Final[tuple[str, ...]] = (
    "synthetic_acceptance_rates",
    "spec-decode-acceptance-rate",
    "SYNTHETIC_ACCEPTANCE_LENGTH",
)
"""Acceptance-length settings no engine adapter writes but an author might; the adapters' own
knobs come with the call (``knobs``)."""

GoldenCells = Mapping[str, frozenset[int]]
"""A golden curve as the rules need it: thinking mode -> draft lengths that have an AL."""
GoldenLookup = Callable[[str], GoldenCells | None]
"""Curve name -> its cells, or ``None`` when no such curve is committed."""


@dataclass(frozen=True)
class Problem:
    """One broken rule. ``check`` is the rule's short name (``thinking``, ``draft-length``, ...);
    ``field`` is the dotted recipe path as written in YAML; ``hint`` says what to do."""

    check: str
    path: Path
    line: int | None
    field: str
    message: str
    hint: str = ""

    def location(self) -> str:
        return str(self.path) if self.line is None else f"{self.path}:{self.line}"

    def __str__(self) -> str:
        text = f"{self.location()}: {self.field}: {self.message}"
        return f"{text}; {self.hint}" if self.hint else text


@dataclass(frozen=True)
class ThinkingSwitch:
    """How a model family's chat template is told to think: ``{key: on}`` / ``{key: off}``."""

    family: str
    key: str
    on: Any
    off: Any

    def kwargs(self, *, on: bool) -> str:
        return json.dumps({self.key: self.on if on else self.off})


ENABLE_THINKING: Final = ("enable_thinking", True, False)
_FAMILIES: Final[tuple[tuple[tuple[str, ...], ThinkingSwitch], ...]] = (
    (("mimo",), ThinkingSwitch("mimo", *ENABLE_THINKING)),
    (("qwen3",), ThinkingSwitch("qwen3", *ENABLE_THINKING)),
    (("glm",), ThinkingSwitch("glm", *ENABLE_THINKING)),
    (("smollm2",), ThinkingSwitch("smollm2", *ENABLE_THINKING)),
    (
        ("dsv3.1", "dsv31", "deepseek-v3.1", "dsv4", "deepseek-v4"),
        ThinkingSwitch("deepseek", "thinking", True, False),
    ),
    (("kimi",), ThinkingSwitch("kimi", "thinking", True, False)),
    (
        ("minimaxm3", "minimax-m3"),
        ThinkingSwitch("minimax-m3", "thinking_mode", "enabled", "disabled"),
    ),
)
KNOWN_SWITCHES: Final[tuple[ThinkingSwitch, ...]] = (
    ThinkingSwitch("any", *ENABLE_THINKING),
    ThinkingSwitch("any", "thinking", True, False),
    ThinkingSwitch("any", "thinking_mode", "enabled", "disabled"),
)


def thinking_switch(recipe: Recipe) -> ThinkingSwitch | None:
    """The family's switch, from the model prefix or the hub id's basename; ``None`` when the
    family is unknown (then any known switch counts)."""
    model = recipe.model
    names = (model.prefix.lower(), model.hub_id.rsplit("/", 1)[-1].lower())
    for prefixes, switch in _FAMILIES:
        if any(name.startswith(prefixes) for name in names):
            return switch
    return None


def _same(value: Any, expected: Any) -> bool:
    return type(value) is type(expected) and value == expected


def _switched_on(kwargs: Mapping[str, Any], switch: ThinkingSwitch | None) -> bool:
    if switch is not None:
        return _same(kwargs.get(switch.key), switch.on)
    for known in KNOWN_SWITCHES:
        value = kwargs.get(known.key)
        if (isinstance(known.on, bool) and bool(value) and value != "false") or _same(
            value, known.on
        ):
            return True
    return False


def locate(raw: LinedDict | None, *fields: str | int) -> Location | None:
    """Where the deepest of ``fields`` is written in ``raw``: the recipe file, the base file it
    extends or an override (``None`` without ``raw``)."""
    if raw is None:
        return None
    node: Any = raw
    location: Location = raw.location
    for part in fields:
        if isinstance(node, LinedDict) and isinstance(part, str) and part in node:
            location = node.where(part)
            node = node[part]
        elif isinstance(node, LinedList) and isinstance(part, int) and 0 <= part < len(node):
            location = node.where(part)
            node = node[part]
        else:
            break
    return location


def _dotted(*fields: str | int) -> str:
    text = ""
    for part in fields:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class _Reporter:
    """Builds problems for one recipe file, falling back to ``line`` when ``raw`` is absent."""

    def __init__(self, path: Path, raw: LinedDict | None, line: int | None) -> None:
        self.path = path
        self.raw = raw
        self.line = line
        self.found: list[Problem] = []

    def add(self, check: str, fields: tuple[str | int, ...], message: str, hint: str) -> None:
        where = locate(self.raw, *fields)
        path, line = (self.path, self.line) if where is None else (where.path, where.line)
        self.found.append(Problem(check, path, line, _dotted(*fields), message, hint))


def draft_length_problem(spec: Speculative, k: int) -> tuple[str, str] | None:
    """``(what is wrong, what to do)`` when ``k`` is not a valid draft length for the method."""
    if k < 1:
        return f"draft length {k} must be at least 1", "use draft lengths of 1 or more"
    if spec.method.lower().startswith("dflash"):
        if spec.block_size is None:
            return (
                f"draft length {k} cannot be checked: DFlash drafts 1 to block_size-1 tokens"
                " and the recipe does not record the block size",
                "add speculative.block-size (the drafter's block_size, e.g. 8)",
            )
        top = spec.block_size - 1
        if k > top:
            return (
                f"draft length {k} is not valid for {spec.method} with block size"
                f" {spec.block_size}: it drafts 1 to {top} tokens",
                f"use draft lengths 1 to {top}",
            )
    return None


def _cell_problems(report: _Reporter, recipe: Recipe, k: int | None, mode: str | None) -> None:
    bench = recipe.speedbench
    if bench is None:
        return
    if k is not None:
        problem = draft_length_problem(bench.speculative, k)
        if problem is not None:
            index = bench.draft_lengths.index(k) if k in bench.draft_lengths else None
            fields: tuple[str | int, ...] = ("speedbench", "draft-lengths")
            report.add("draft-length", fields if index is None else (*fields, index), *problem)
    if mode is None or mode not in bench.thinking_modes:
        return
    kwargs = bench.thinking_modes[mode]
    switch = thinking_switch(recipe)
    on = _switched_on(kwargs, switch)
    if on == (mode == "thinking_on"):
        return
    shown = json.dumps(kwargs)
    family = f"{switch.family} models" if switch else f"model {recipe.model.hub_id}"
    fields = ("speedbench", "thinking-modes", mode)
    if mode == "thinking_on" and not on:
        if switch is None:
            choices = ", ".join(known.kwargs(on=True) for known in KNOWN_SWITCHES)
            report.add(
                "thinking",
                fields,
                f"{shown} does not turn thinking on for {family} (family unknown, so any known"
                " switch counts)",
                f"use one of {choices}",
            )
        else:
            report.add(
                "thinking",
                fields,
                f"{shown} does not turn thinking on for {family}",
                f"use {switch.kwargs(on=True)}",
            )
    elif mode == "thinking_off" and on:
        fix = switch.kwargs(on=False) if switch else '{"enable_thinking": false}'
        report.add("thinking", fields, f"{shown} turns thinking on for {family}", f"use {fix}")


def check_cell(
    recipe: Recipe,
    *,
    draft_length: int | None,
    thinking: str | None,
    path: Path,
    raw: LinedDict | None = None,
    line: int | None = None,
) -> list[Problem]:
    """The checks of one SPEED-Bench cell: the draft length is valid for the method, and the
    cell's chat-template kwargs turn thinking on (``thinking_on``) or leave it off."""
    report = _Reporter(path, raw, line)
    _cell_problems(report, recipe, draft_length, thinking)
    return report.found


def check_point(point: Point, *, raw: LinedDict | None = None) -> list[Problem]:
    """Per-point preflight: run it for every point before any server starts. ``raw`` (the
    point's line-tracked recipe) makes problems name the field's line instead of the recipe's."""
    if point.kind == "speedbench":
        return check_cell(
            point.recipe,
            draft_length=point.draft_length,
            thinking=point.thinking,
            path=point.path,
            raw=raw,
            line=point.line,
        )
    report = _Reporter(point.path, raw, point.line)
    _agentic_draft(report, point.recipe)
    return report.found


def _forced(recipe: Recipe) -> list[tuple[str, AgenticSpeculative]]:
    """The speculative blocks of a recipe's throughput kinds (AgentX, fixed-seq-len), by the
    block they are in: each forces its golden curve's AL on its servers."""
    found: list[tuple[str, AgenticSpeculative]] = []
    for name, block in (("agentic", recipe.agentic), ("fixed-seq-len", recipe.fixed_seq_len)):
        if block is not None and block.speculative is not None:
            found.append((name, block.speculative))
    return found


def _run_of(block: str) -> str:
    return f"an {block} run" if block[0] in "aeiou" else f"a {block} run"


def _agentic_draft(report: _Reporter, recipe: Recipe) -> None:
    for name, spec in _forced(recipe):
        problem = draft_length_problem(spec, spec.draft_length)
        if problem is not None:
            report.add("draft-length", (name, "speculative", "draft-length"), *problem)


def _image(report: _Reporter, recipe: Recipe) -> None:
    image = recipe.engine.image
    if recipe.runner == CPU_RUNNER or image is None or pinned(image):
        return
    if recipe.engine.image_unpinned is not None:
        return
    report.add(
        "image-digest",
        ("engine", "image"),
        f"image {image!r} of a {recipe.runner} recipe is not pinned by digest",
        "append @sha256:<digest> (a tag can move to a different build under the same name), or,"
        " where no digest was ever published, say why in engine.image-unpinned",
    )


def _divisors(n: int) -> str:
    return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)


AttentionTp = Callable[[Recipe, int], int | None]
"""The engine adapter's answer: the TP attention is sharded over at a TP, None when the engine
replicates KV heads (then any TP fits)."""


def _attention_tp(report: _Reporter, recipe: Recipe, attention_tp: AttentionTp) -> None:
    uses: list[tuple[int, tuple[str | int, ...]]] = []
    if recipe.speedbench is not None:
        uses.append((recipe.tp, ("tp",)))
    if recipe.agentic is not None:
        uses.extend(
            (p.tp, ("agentic", "points", i, "tp")) for i, p in enumerate(recipe.agentic.points)
        )
    if recipe.fixed_seq_len is not None:
        uses.extend(
            (p.tp, ("fixed-seq-len", "points", i, "tp"))
            for i, p in enumerate(recipe.fixed_seq_len.points)
        )
    sharded = [(tp, attention_tp(recipe, tp), fields) for tp, fields in uses]
    sharded = [(tp, a, fields) for tp, a, fields in sharded if a is not None and a > 1]
    if not sharded:
        return
    engine = recipe.engine.name
    heads = recipe.model.kv_heads
    if heads is None:
        report.add(
            "attention-tp",
            ("model",),
            f"{engine} shards attention over TP, which must divide the model's KV heads, but"
            " the recipe does not record them",
            "add model.kv-heads (num_key_value_heads in the model's config.json)",
        )
        return
    for tp, attention, fields in sharded:
        assert attention is not None
        # A multiple of the heads also loads: each head is replicated on TP / heads ranks.
        if heads % attention and attention % heads:
            what = f"attention TP {attention} (TP {tp} / DP {tp // attention})"
            what = what if attention != tp else f"TP {tp}"
            report.add(
                "attention-tp",
                fields,
                f"{engine} {what} neither divides the model's {heads} KV heads nor is a multiple"
                " of them",
                f"use an attention TP in {_divisors(heads)} or a multiple of {heads}",
            )


def _agentic_golden(report: _Reporter, recipe: Recipe, golden: GoldenLookup) -> None:
    for name, spec in _forced(recipe):
        _forced_golden(report, name, spec, golden)


def _forced_golden(
    report: _Reporter, name: str, spec: AgenticSpeculative, golden: GoldenLookup
) -> None:
    cells = golden(spec.golden)
    if cells is None:
        report.add(
            "agentic-golden",
            (name, "speculative", "golden"),
            f"golden curve {spec.golden!r} does not exist; {_run_of(name)} with speculative"
            " decoding forces the golden AL and cannot launch without it",
            f"commit golden/{spec.golden}.yaml (pytest -m speedbench --snapshot-update records"
            " it) or name an existing curve",
        )
        return
    have = cells.get(spec.thinking, frozenset())
    if spec.draft_length not in have:
        known = ", ".join(str(k) for k in sorted(have)) or "none"
        report.add(
            "agentic-golden",
            (name, "speculative", "draft-length"),
            f"golden curve {spec.golden!r} has no {spec.thinking} AL for draft length"
            f" {spec.draft_length} (it has: {known})",
            "pick a draft length the curve covers, or measure that cell first",
        )


def check_recipe(
    recipe: Recipe,
    *,
    path: Path,
    raw: LinedDict | None = None,
    line: int | None = None,
    golden: GoldenLookup | None = None,
    attention_tp: AttentionTp | None = None,
) -> list[Problem]:
    """Whole-recipe checks: GPU images pinned by digest, the attention TP (given the engine
    adapters' ``attention_tp``) against the KV heads, the agentic draft length and (given
    ``golden``) its curve. SPEED-Bench cells are checked by :func:`check_cell`, per point,
    because overrides can change them per point."""
    report = _Reporter(path, raw, line)
    _image(report, recipe)
    if attention_tp is not None:
        _attention_tp(report, recipe, attention_tp)
    _agentic_draft(report, recipe)
    if golden is not None:
        _agentic_golden(report, recipe, golden)
    return report.found


def al_literal_pattern(knobs: Iterable[str] = ()) -> re.Pattern[str]:
    """The names of every acceptance-length setting: ``knobs`` (the engines' synthetic
    settings, their environment variables, config keys and flags) and :data:`AL_LITERAL_NAMES`."""
    names = sorted({*knobs, *AL_LITERAL_NAMES}, key=len, reverse=True)
    return re.compile("|".join(re.escape(name) for name in names))


def al_literal_problems(
    path: Path, text: str, pattern: re.Pattern[str] | None = None
) -> list[Problem]:
    """Hand-written acceptance-length settings in a recipe file's text (keys, engine args, env
    values): AL values come from golden files, injected at launch, never copied into recipes."""
    found: list[Problem] = []
    literal = pattern or al_literal_pattern()
    if literal.search(text) is None:
        return found
    stated = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line[:1] not in ("", " ", "-", "#"):
            stated = line.startswith("differences:")
        match = literal.search(line)
        # a stated difference names InferenceX's setting and ours; it sets nothing
        if match is None or stated or line.lstrip().startswith("#"):
            continue
        found.append(
            Problem(
                "al-literal",
                path,
                number,
                match.group(0),
                f"hand-written acceptance-length setting {line.strip()!r}",
                "remove it: the AL comes from the golden curve named by the recipe"
                " (agentic.speculative.golden), and the engine flag is set at launch",
            )
        )
    return found


def matching_overrides(overrides: Iterable[Override], coords: Mapping[str, Any]) -> list[Override]:
    """The overrides whose ``when`` matches a point's coordinates, in file order."""
    return [override for override in overrides if matches(override.when, coords)]


def point_raw(source: RecipeSource, point: Point) -> LinedDict:
    """The point's line-tracked recipe: the file's mapping with its matching overrides merged,
    so a field set by an override is located at the override's line."""
    raw = source.raw
    for override in matching_overrides(source.overrides, point.coordinates()):
        raw = deep_merge(raw, override.fields)
    return raw
