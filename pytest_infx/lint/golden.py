"""Golden registry rules: every curve file loads, is registered in ``golden/README.md``, is named
after its model and method, carries its source run on line 1, and is used by a recipe (or is
marked ``reference: true``).

A curve that nobody registered, whose run nobody can find, or that no recipe reads is a number
that can no longer be checked; these rules keep the folder as auditable as InferenceX's
reviewer checklist asks, without a reviewer.
"""

from __future__ import annotations

import re
from functools import cached_property

from pytest_infx.files.textio import NotUtf8Error, read_utf8
from pytest_infx.golden.curve import CURVE_NAME_RE, Curve
from pytest_infx.golden.io import RUN_PREFIX, SOURCE_PREFIX, GoldenFileError
from pytest_infx.golden.store import REGISTRY_FILE, CurveListing, GoldenStore
from pytest_infx.lint.context import Facts, LintContext
from pytest_infx.lint.curves import golden_files, load_curves
from pytest_infx.lint.findings import Finding, Reporter, rule
from pytest_infx.lint.recipes import golden_refs, variants

_RUN_URL = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/actions/runs/(\d+)")
_MODEL_KEY = re.compile(r"[a-z0-9_.-]+")
_REFERENCE = re.compile(r"^#\s*reference:\s*true\s*$", re.MULTILINE)
_ROW_HINT = "| Model | Method | [{name}.yaml]({name}.yaml) | [<run id>](<run url>) |"


def _compute_texts(ctx: LintContext) -> dict[str, str]:
    texts: dict[str, str] = {}
    for name, path in golden_files(ctx).items():
        try:
            texts[name] = read_utf8(path)
        except (OSError, NotUtf8Error):
            continue
    return texts


def _texts(ctx: LintContext) -> dict[str, str]:
    """The text of each golden file that can be read; one that cannot (not UTF-8) is left
    out, so golden-format alone reports it, with its line and column."""
    return ctx.facts(_GoldenFacts).texts


def _compute_registry(ctx: LintContext) -> tuple[tuple[CurveListing, ...], GoldenFileError | None]:
    assert ctx.golden_dir is not None
    try:
        return GoldenStore(ctx.golden_dir).registry(), None
    except GoldenFileError as exc:
        return (), exc


def registry(ctx: LintContext) -> tuple[tuple[CurveListing, ...], GoldenFileError | None]:
    return ctx.facts(_GoldenFacts).registry


def _readme(ctx: LintContext) -> str:
    assert ctx.golden_dir is not None
    return ctx.relpath(ctx.golden_dir / REGISTRY_FILE)


def _no_golden(ctx: LintContext) -> str | None:
    if ctx.golden_dir is None or not ctx.golden_dir.is_dir():
        return f"no golden folder ({ctx.golden_dir or 'golden/'}) in {ctx.root}"
    return None


def _no_golden_or_recipes(ctx: LintContext) -> str | None:
    missing = _no_golden(ctx)
    if missing is None and (ctx.recipes_dir is None or not ctx.recipes_dir.is_dir()):
        return f"no recipe folder in {ctx.root}, so no curve can be used"
    return missing


def _model_key_line(text: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number
    return None


@rule(
    "golden-format",
    "Every golden file loads: one model key, thinking_on/thinking_off, 1 <= AL <= k+1.",
    skip_reason=_no_golden,
)
def check_format(ctx: LintContext) -> list[Finding]:
    found: list[Finding] = []
    for name, loaded in load_curves(ctx).items():
        if isinstance(loaded, GoldenFileError):
            report = Reporter("golden-format", ctx.relpath(golden_files(ctx)[name]))
            found.append(
                report(
                    f"{loaded.reason}.",
                    "Fix the file; it must keep InferenceX's golden layout.",
                    loaded.line,
                )
            )
    return found


@rule(
    "golden-registry",
    "Every golden file is listed in golden/README.md, and every listed file exists.",
    skip_reason=_no_golden,
)
def check_registry(ctx: LintContext) -> list[Finding]:
    readme = _readme(ctx)
    at_readme = Reporter("golden-registry", readme)
    entries, error = registry(ctx)
    if error is not None:
        return [
            at_readme(
                f"{error.reason}.",
                "The registry is a table | Model | Method | Golden YAML | Source run |.",
                error.line,
            )
        ]
    files = golden_files(ctx)
    found: list[Finding] = []
    listed: dict[str, CurveListing] = {}
    for entry in entries:
        if entry.curve in listed:
            found.append(
                at_readme(
                    f"{entry.curve}.yaml is listed twice"
                    f" (first on line {listed[entry.curve].line}).",
                    "Keep one row per curve.",
                    entry.line,
                )
            )
            continue
        listed[entry.curve] = entry
        if entry.curve not in files:
            found.append(
                at_readme(
                    f"the row links {entry.yaml_link}, but there is no such golden file.",
                    "Remove the row, or commit the curve it names.",
                    entry.line,
                )
            )
    for name, path in files.items():
        if name not in listed:
            found.append(
                Reporter("golden-registry", ctx.relpath(path))(
                    f"golden curve {name} is not listed in {readme}.",
                    f"Add a row: {_ROW_HINT.format(name=name)}",
                )
            )
    return found


@rule(
    "golden-names",
    "A golden file's stem is a valid curve name ([a-z0-9_.-]+, starting with the model prefix of"
    " the recipes that use it) and its model key is the lowercased served model name.",
    skip_reason=_no_golden,
)
def check_names(ctx: LintContext) -> list[Finding]:
    found: list[Finding] = []
    texts = _texts(ctx)
    users = _users(ctx)
    for name, path in golden_files(ctx).items():
        report = Reporter("golden-names", ctx.relpath(path))
        if not CURVE_NAME_RE.fullmatch(name):
            found.append(
                report(
                    f"curve name {name!r} (the file stem) must match [a-z0-9_.-]+.",
                    "Rename the file to <model-prefix>_<method>[_<variant>].yaml in lowercase.",
                )
            )
            continue
        curve = load_curves(ctx).get(name)
        if not isinstance(curve, Curve):
            continue
        line = _model_key_line(texts.get(name, ""))
        key = curve.model_key
        if not _MODEL_KEY.fullmatch(key):
            found.append(
                report(
                    f"model key {key!r} is not a lowercased model name.",
                    f"Use the lowercased basename of the served model path"
                    f" ({key.rsplit('/', 1)[-1].lower()!r}).",
                    line,
                )
            )
            continue
        prefixes: set[str] = set()
        for recipe_rel, prefix, served, measures in users.get(name, ()):
            if not name.startswith((f"{prefix}_", f"{prefix}-")):
                if prefix in prefixes:
                    continue
                prefixes.add(prefix)
                found.append(
                    report(
                        f"curve {name} is used by {recipe_rel}, whose model prefix is {prefix!r},"
                        " but its name does not start with it.",
                        f"Name it {prefix}_<method>[_<variant>].yaml (and update the recipes).",
                    )
                )
            elif measures and key not in served:
                found.append(
                    report(
                        f"model key {key!r} is not the model {recipe_rel} serves"
                        f" ({' or '.join(repr(s) for s in sorted(served))}).",
                        "The model key is the lowercased basename of the served model path;"
                        " check that the curve was measured on this model.",
                        line,
                    )
                )
    return found


def _compute_users(ctx: LintContext) -> dict[str, list[tuple[str, str, frozenset[str], bool]]]:
    return ctx.stored("golden.users", ctx.tree_signature, lambda: _read_users(ctx))


def _users(ctx: LintContext) -> dict[str, list[tuple[str, str, frozenset[str], bool]]]:
    """Curve name -> (recipe file, model prefix, accepted model keys, whether it measures the
    curve) of the recipes using it.

    Only a SPEED-Bench recipe measures a curve; an AgentX recipe reads it for synthetic
    acceptance and may serve another precision of the model (InferenceX serves NVFP4 with the
    acceptance measured on FP8), so its served name does not have to be the curve's model key.
    """
    return ctx.facts(_GoldenFacts).users


def _read_users(ctx: LintContext) -> dict[str, list[tuple[str, str, frozenset[str], bool]]]:
    tree = ctx.tree()
    users: dict[str, list[tuple[str, str, frozenset[str], bool]]] = {}
    seen: set[tuple[str, str, bool]] = set()
    for source in tree.sources if tree is not None else ():
        recipe = source.recipe
        names: list[tuple[str, bool]] = []
        if recipe.speedbench is not None:
            names.append((recipe.speedbench.golden, True))
        if recipe.agentic is not None and recipe.agentic.speculative is not None:
            names.append((recipe.agentic.speculative.golden, False))
        model = recipe.model
        served = frozenset(
            {model.served_name.lower(), model.hub_id.rsplit("/", 1)[-1].lower()}
            | ({model.path.rstrip("/").rsplit("/", 1)[-1].lower()} if model.path else set())
        )
        for name, measures in names:
            if (name, model.prefix, measures) not in seen:
                seen.add((name, model.prefix, measures))
                users.setdefault(name, []).append(
                    (ctx.relpath(source.path), model.prefix, served, measures)
                )
    return users


@rule(
    "golden-header",
    "A golden file's line 1 is its source: '# Source GitHub Actions run: <run URL>' (matching"
    " the README row) or '# Source: <where it was measured>'.",
    skip_reason=_no_golden,
)
def check_header(ctx: LintContext) -> list[Finding]:
    found: list[Finding] = []
    rows = {entry.curve: entry for entry in registry(ctx)[0]}
    for name, text in _texts(ctx).items():
        report = Reporter("golden-header", ctx.relpath(golden_files(ctx)[name]))
        first = text.split("\n", 1)[0].strip()
        body = first[1:].strip() if first.startswith("#") else ""
        if body.startswith(RUN_PREFIX):
            url = body.removeprefix(RUN_PREFIX).strip()
            match = _RUN_URL.fullmatch(url)
            if match is None:
                found.append(
                    report(
                        f"source run {url!r} is not a GitHub Actions run URL.",
                        "Write https://github.com/<org>/<repo>/actions/runs/<id>.",
                        1,
                    )
                )
                continue
            row = rows.get(name)
            if row is not None and row.source_url and row.source_url != url:
                found.append(
                    report(
                        f"source run {url} differs from the README row's {row.source_url}"
                        f" ({_readme(ctx)}:{row.line}).",
                        "Both must name the run that measured these values.",
                        1,
                    )
                )
        elif not (body.startswith(SOURCE_PREFIX) and body.removeprefix(SOURCE_PREFIX).strip()):
            found.append(
                report(
                    "line 1 is not the source-run line.",
                    f"Start the file with '# {RUN_PREFIX} https://github.com/<org>/<repo>/actions"
                    f"/runs/<id>' (or '# {SOURCE_PREFIX} <where it was measured>').",
                    1,
                )
            )
    return found


@rule(
    "golden-orphans",
    "Every golden file is used by a recipe, unless its header says 'reference: true'.",
    skip_reason=_no_golden_or_recipes,
)
def check_orphans(ctx: LintContext) -> list[Finding]:
    refs = golden_refs(ctx)
    found: list[Finding] = []
    for name, path in golden_files(ctx).items():
        if name in refs:
            continue
        loaded = load_curves(ctx).get(name)
        if isinstance(loaded, Curve):
            if loaded.header.reference:
                continue
        elif name not in _texts(ctx) or _REFERENCE.search(_texts(ctx)[name]):
            continue
        found.append(
            Reporter("golden-orphans", ctx.relpath(path))(
                f"no recipe uses golden curve {name} and it is not marked as reference.",
                "Point a recipe's golden: at it, add '# reference: true' to its header if it is"
                " kept for comparison, or remove it and its README row.",
            )
        )
    return found


@rule(
    "golden-cells",
    "A SPEED-Bench recipe's golden curve has every cell the recipe measures (each draft length"
    " under each thinking mode), so no cell is found missing only after its server ran.",
    skip_reason=_no_golden_or_recipes,
)
def check_cells(ctx: LintContext) -> list[Finding]:
    from pytest_infx.recipes.rules import locate

    found: list[Finding] = []
    seen: set[tuple[str, str, int]] = set()
    curves = load_curves(ctx)
    for variant in variants(ctx)[0]:
        bench = variant.recipe.speedbench
        curve = curves.get(bench.golden) if bench is not None else None
        if bench is None or not isinstance(curve, Curve):
            continue
        missing = [(mode, k) for k, mode in variant.cells if not curve.has(mode, k)]
        missing = [cell for cell in missing if (bench.golden, *cell) not in seen]
        if not missing:
            continue
        seen.update((bench.golden, *cell) for cell in missing)
        where = locate(variant.raw, "speedbench", "golden")
        have = ", ".join(f"{mode} k={k}" for mode, k, _ in curve.cells()) or "none"
        found.append(
            Reporter("golden-cells", ctx.relpath(where.path if where else variant.source.path))(
                f"golden curve {bench.golden} has no cell "
                + ", ".join(f"{mode} k={k}" for mode, k in missing)
                + f" that {variant.recipe.key} measures (it has {have}).",
                "Record the missing cells with --snapshot-update, or leave those draft lengths"
                " or modes out of the recipe.",
                where.line if where else None,
            )
        )
    return found


class _GoldenFacts(Facts):
    """What the golden rules share: the files' texts, the registry and the recipes using each
    curve."""

    @cached_property
    def texts(self) -> dict[str, str]:
        return _compute_texts(self.ctx)

    @cached_property
    def registry(self) -> tuple[tuple[CurveListing, ...], GoldenFileError | None]:
        return _compute_registry(self.ctx)

    @cached_property
    def users(self) -> dict[str, list[tuple[str, str, frozenset[str], bool]]]:
        return _compute_users(self.ctx)
