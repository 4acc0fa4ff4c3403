"""Recipe rules: loading, pinned images, draft lengths, thinking kwargs, attention TP,
agentic golden curves and hand-written AL literals.

The checks themselves live in :mod:`pytest_infx.recipes.rules`, shared with the SPEED-Bench
preflight; this module runs them over the tree once and splits the problems by rule. A recipe
with overrides is checked per *variant* (the points that share one effective recipe), so a field
an override sets is judged, and located, where the override writes it. The schema and the
checks are imported only when the stored problems do not match the tree and the golden folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.files.textio import read_input
from pytest_infx.lint.context import Facts, LintContext
from pytest_infx.lint.curves import load_curves
from pytest_infx.lint.findings import Check, Finding, rule
from pytest_infx.recipes.layout import RECIPE_SUFFIXES

if TYPE_CHECKING:
    from pytest_infx.recipes.errors import RecipeError
    from pytest_infx.recipes.loader import RecipeSource
    from pytest_infx.recipes.owned import EngineRules
    from pytest_infx.recipes.rules import GoldenCells, Problem
    from pytest_infx.recipes.schema import Recipe
    from pytest_infx.recipes.source import LinedDict

_GOLDEN_REF = re.compile(r"""^[ \t-]*golden:[ \t]*["']?([A-Za-z0-9_.-]+)""", re.MULTILINE)
Cell = tuple[int, str]


@dataclass(frozen=True)
class Variant:
    """Points of one recipe that share an effective recipe; ``cells`` are its SPEED-Bench
    (draft length, thinking mode) pairs."""

    source: RecipeSource
    recipe: Recipe
    raw: LinedDict
    cells: tuple[Cell, ...]


def _all_cells(recipe: Recipe) -> tuple[Cell, ...]:
    bench = recipe.speedbench
    if bench is None:
        return ()
    return tuple(
        (k, mode) for k in sorted(set(bench.draft_lengths)) for mode in bench.thinking_modes
    )


def _coordinates(recipe: Recipe) -> list[tuple[dict[str, object], Cell | None]]:
    """Every point's coordinates, as ``expand`` matches overrides against them."""
    coords: list[tuple[dict[str, object], Cell | None]] = []
    bench = recipe.speedbench
    if bench is not None:
        for k, mode in _all_cells(recipe):
            point = {"kind": "speedbench", "tp": recipe.tp, "concurrency": bench.concurrency}
            coords.append(({**point, "draft-length": k, "thinking": mode}, (k, mode)))
    if recipe.agentic is not None:
        arms = {(p.tp, c, p.variant or "") for p in recipe.agentic.points for c in p.concurrency}
        for tp, c, arm in sorted(arms):
            where: dict[str, object] = {"kind": "agentic", "tp": tp, "concurrency": c}
            if arm:
                where["variant"] = arm
            coords.append((where, None))
    if recipe.fixed_seq_len is not None:
        for p in recipe.fixed_seq_len.points:
            for c in p.concurrency:
                fixed: dict[str, object] = {"kind": "fixed_seq_len", "tp": p.tp, "concurrency": c}
                fixed.update({"isl": p.isl, "osl": p.osl})
                if p.variant:
                    fixed["variant"] = p.variant
                coords.append((fixed, None))
    return coords


def _variants(source: RecipeSource, errors: list[RecipeError], rules: EngineRules) -> list[Variant]:
    """The effective recipes of a file's points, grouped by the overrides that apply; cheaper
    than ``expand`` because nothing is fingerprinted. The file's engine and engine args are
    checked against the adapters' ``rules`` here, the tree having been read without them."""
    from pydantic import ValidationError

    from pytest_infx.recipes.checks import recipe_errors
    from pytest_infx.recipes.extends import deep_merge
    from pytest_infx.recipes.points import unmatched_override
    from pytest_infx.recipes.rules import matching_overrides
    from pytest_infx.recipes.schema import Recipe
    from pytest_infx.recipes.validation import validation_errors

    own = recipe_errors(source.raw, source.recipe, rules)
    errors.extend(own)
    if own:
        return []
    if not source.overrides:
        return [Variant(source, source.recipe, source.raw, _all_cells(source.recipe))]
    groups: dict[tuple[int, ...], list[Cell]] = {}
    seen: list[dict[str, object]] = []
    for coords, cell in _coordinates(source.recipe):
        seen.append(coords)
        matched = tuple(o.index for o in matching_overrides(source.overrides, coords))
        cells = groups.setdefault(matched, [])
        if cell is not None:
            cells.append(cell)
    used = {index for matched in groups for index in matched}
    errors.extend(unmatched_override(o, seen) for o in source.overrides if o.index not in used)
    found: list[Variant] = []
    for matched, cells in groups.items():
        raw = source.raw
        for override in source.overrides:
            if override.index in matched:
                raw = deep_merge(raw, override.fields)
        if not matched:
            found.append(Variant(source, source.recipe, raw, tuple(cells)))
            continue
        try:
            recipe = Recipe.model_validate(raw)
        except ValidationError as exc:
            errors.extend(validation_errors(raw, exc))
            continue
        errors.extend(recipe_errors(raw, recipe, rules))
        found.append(Variant(source, recipe, raw, tuple(cells)))
    return found


def _compute_variants(ctx: LintContext) -> tuple[tuple[Variant, ...], tuple[RecipeError, ...]]:
    tree = ctx.tree()
    rules = ctx.engines().engine_rules()
    errors: list[RecipeError] = []
    found: list[Variant] = []
    for source in tree.sources if tree is not None else ():
        found.extend(_variants(source, errors, rules))
    return tuple(found), tuple(errors)


def variants(ctx: LintContext) -> tuple[tuple[Variant, ...], tuple[RecipeError, ...]]:
    """Every variant of every loaded recipe, and the errors of overrides that do not validate."""
    return ctx.facts(_RecipeFacts).variants


def _compute_recipe_texts(ctx: LintContext) -> dict[Path, str]:
    folder = ctx.recipes_dir
    if folder is None or not folder.is_dir():
        return {}
    texts: dict[Path, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix not in RECIPE_SUFFIXES or path.name.startswith("."):
            continue
        try:
            data = read_input(path)
        except OSError:
            continue
        # recipes-load names a byte that is not UTF-8; the text rules still see the rest.
        texts[path] = data.decode("utf-8", "replace")
    return texts


def recipe_texts(ctx: LintContext) -> dict[Path, str]:
    """Every YAML file under the recipe folder, bases included, as text."""
    return ctx.facts(_RecipeFacts).recipe_texts


def _compute_golden_refs(ctx: LintContext) -> dict[str, list[tuple[Path, int]]]:
    def scan() -> dict[str, list[tuple[Path, int]]]:
        refs: dict[str, list[tuple[Path, int]]] = {}
        for path, text in recipe_texts(ctx).items():
            for match in _GOLDEN_REF.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                refs.setdefault(match.group(1), []).append((path, line))
        return refs

    return ctx.stored("recipes.golden_refs", ctx.tree_signature, scan)


def golden_refs(ctx: LintContext) -> dict[str, list[tuple[Path, int]]]:
    """Curve name -> where recipe files name it, from the text, so a recipe that does not load,
    a base file or an override still counts as a reference."""
    return ctx.facts(_RecipeFacts).golden_refs


def golden_cells(ctx: LintContext, name: str) -> GoldenCells | None:
    """The cells of a committed curve (``None`` when its file is missing); a file that does
    not load has no cells, and ``golden-format`` says why."""
    if ctx.golden_dir is None or not (ctx.golden_dir / f"{name}.yaml").is_file():
        return None
    curve = load_curves(ctx).get(name)
    if curve is None or isinstance(curve, Exception):
        return {}
    return {
        mode: frozenset(k for k, al in cells.items() if al is not None)
        for mode, cells in curve.modes.items()
    }


Reported = tuple[str, int | None, str, str]


def _compute_problems(ctx: LintContext) -> dict[str, list[Reported]]:
    def compute() -> dict[str, list[Reported]]:
        from pytest_infx.recipes.rules import al_literal_problems, check_cell, check_recipe

        by_check: dict[str, list[Reported]] = {}
        seen: set[tuple[str, Path, int | None, str]] = set()

        def keep(problems: list[Problem]) -> None:
            for problem in problems:
                key = (problem.check, problem.path, problem.line, problem.message)
                if key not in seen:
                    seen.add(key)
                    by_check.setdefault(problem.check, []).append(
                        (
                            ctx.relpath(problem.path),
                            problem.line,
                            f"{problem.field}: {problem.message}{';' if problem.hint else '.'}",
                            problem.hint,
                        )
                    )

        def lookup(name: str) -> GoldenCells | None:
            return golden_cells(ctx, name)

        # the adapters answer for their engines; loaded only when recipes are linted
        from pytest_infx.recipes.rules import al_literal_pattern

        engines = ctx.engines()
        attention_tp = engines.attention_tp
        literal = al_literal_pattern(engines.synthetic_knobs())

        for variant in variants(ctx)[0]:
            path = variant.source.path
            keep(
                check_recipe(
                    variant.recipe,
                    path=path,
                    raw=variant.raw,
                    golden=lookup,
                    attention_tp=attention_tp,
                )
            )
            for k, mode in variant.cells:
                keep(
                    check_cell(
                        variant.recipe, draft_length=k, thinking=mode, path=path, raw=variant.raw
                    )
                )
        for path, text in recipe_texts(ctx).items():
            keep(al_literal_problems(path, text, literal))
        return by_check

    return ctx.stored(
        "recipes.problems", lambda: f"{ctx.tree_signature()}:{ctx.golden_signature()}", compute
    )


def _problems(ctx: LintContext) -> dict[str, list[Reported]]:
    """Per check, its problems as plain (file, line, message, hint) tuples: the stored form
    must load without the schema and the checks that made it."""
    return ctx.facts(_RecipeFacts).problems


def _findings(ctx: LintContext, rule_id: str, check: str) -> list[Finding]:
    return [
        Finding(rule_id, path, line, None, message, hint)
        for path, line, message, hint in _problems(ctx).get(check, [])
    ]


def _no_recipes(ctx: LintContext) -> str | None:
    if ctx.recipes_dir is None or not ctx.recipes_dir.is_dir():
        return f"no recipe folder ({ctx.recipes_dir or 'recipes/'}) in {ctx.root}"
    return None


def _problem_rule(rule_id: str, description: str, check: str) -> Check:
    """The rule ``rule_id`` whose findings are the problems the recipe checks filed under
    ``check`` (all of them are computed in one pass over the tree)."""

    def findings(ctx: LintContext) -> list[Finding]:
        return _findings(ctx, rule_id, check)

    return rule(rule_id, description, skip_reason=_no_recipes)(findings)


def _error_findings(ctx: LintContext, errors: Iterator[RecipeError]) -> list[Finding]:
    found: list[Finding] = []
    for error in errors:
        path = ctx.relpath(error.location.path) if error.location else ctx.relpath(ctx.root)
        line = error.location.line if error.location else None
        what = f"{error.field}: {error.problem}" if error.field else error.problem
        found.append(Finding("recipes-load", path, line, None, f"{what}.", error.hint))
    return found


@rule(
    "recipes-load",
    "Every recipe file loads: strict schema, valid extends and overrides, unique keys.",
    skip_reason=_no_recipes,
)
def _compute_check_load(ctx: LintContext) -> list[Finding]:
    def compute() -> list[Finding]:
        tree = ctx.tree()
        loaded = (e for errs in (tree.errors.values() if tree else ()) for e in errs)
        found = _error_findings(ctx, loaded)
        found.extend(_error_findings(ctx, iter(variants(ctx)[1])))
        return found

    return ctx.stored("recipes.load", ctx.tree_signature, compute)


def check_load(ctx: LintContext) -> list[Finding]:
    return ctx.facts(_RecipeFacts).check_load


check_image_digest = _problem_rule(
    "recipes-image-digest",
    "GPU recipes pin their engine image by digest (image@sha256:...).",
    "image-digest",
)

check_draft_length = _problem_rule(
    "recipes-draft-length",
    "Draft lengths are valid for the speculative method (DFlash: 1 to block_size-1).",
    "draft-length",
)

check_thinking = _problem_rule(
    "recipes-thinking",
    "thinking_on chat-template kwargs turn thinking on for the model family; thinking_off"
    " kwargs do not.",
    "thinking",
)

check_attention_tp = _problem_rule(
    "recipes-attention-tp",
    "An engine's attention TP divides the model's KV heads or is a multiple of them (recorded as"
    " model.kv-heads).",
    "attention-tp",
)

check_agentic_golden = _problem_rule(
    "recipes-agentic-golden",
    "An agentic or fixed-seq-len point with speculative decoding names a committed golden curve"
    " that covers its draft length.",
    "agentic-golden",
)

check_al_literals = _problem_rule(
    "recipes-al-literals",
    "No hand-written acceptance-length settings in recipes; ALs come from golden files.",
    "al-literal",
)


@rule(
    "recipes-golden-uncommitted",
    "A SPEED-Bench recipe names a committed golden curve (a warning: a recipe of a model with no "
    "measured curve names the one its first run records).",
    skip_reason=_no_recipes,
    severity="warning",
)
def check_golden_uncommitted(ctx: LintContext) -> list[Finding]:
    """One finding per recipe file and curve, at its ``golden:`` line, counting the cells that
    fail before their server starts until the curve is recorded."""
    cells: dict[tuple[Path, str], int] = {}
    for variant in variants(ctx)[0]:
        bench = variant.recipe.speedbench
        if bench is not None and golden_cells(ctx, bench.golden) is None:
            key = (variant.source.path, bench.golden)
            cells[key] = cells.get(key, 0) + len(variant.cells)
    refs = golden_refs(ctx)
    found: list[Finding] = []
    for (path, curve), count in sorted(cells.items()):
        lines = [line for where, line in refs.get(curve, []) if where == path]
        found.append(
            Finding(
                "recipes-golden-uncommitted",
                ctx.relpath(path),
                lines[0] if lines else None,
                None,
                f"speedbench.golden: no committed golden curve {curve!r}; its {count} cell(s) "
                "fail before their server starts unless the run records it;",
                "run them once with --snapshot-update on the hardware (with the SPEED-Bench "
                "dataset) and commit the curve, or name an existing one (infx golden list).",
            )
        )
    return found


class _RecipeFacts(Facts):
    """What the recipe rules share: the variants, the files' texts, the golden references and
    the findings computed for several rules at once."""

    @cached_property
    def variants(self) -> tuple[tuple[Variant, ...], tuple[RecipeError, ...]]:
        return _compute_variants(self.ctx)

    @cached_property
    def recipe_texts(self) -> dict[Path, str]:
        return _compute_recipe_texts(self.ctx)

    @cached_property
    def golden_refs(self) -> dict[str, list[tuple[Path, int]]]:
        return _compute_golden_refs(self.ctx)

    @cached_property
    def problems(self) -> dict[str, list[Reported]]:
        return _compute_problems(self.ctx)

    @cached_property
    def check_load(self) -> list[Finding]:
        return _compute_check_load(self.ctx)
