"""``infx compare-configs``: the AgentX and fixed-seq-len points of a recipe tree against a
checkout's master configs.

A team that keeps recipes beside InferenceX's ``configs/*-master.yaml`` must keep the two in step:
a concurrency added to a search space and not to the recipe is a point nobody measures. Points
are compared as (TP, concurrency, variant), and fixed-seq-len points also by their input and
output lengths, where the variant of a search-space entry is named from what serves that TP
differently (expert parallel size, DP attention, decode context parallel, the KV offload
backend), the way recipes name their ``agentic.points`` variants. A fixed-seq-len search space
gives its concurrencies as ``conc-list`` or as a ``conc-start``/``conc-end`` range, which
InferenceX's ``generate_sweep_configs.py`` expands by doubling from the start and ends with
``conc-end``.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from pytest_infx.engines.registry import installed
from pytest_infx.files.numbers import NumberError, count
from pytest_infx.lint.masters import master_files
from pytest_infx.recipes.errors import Location, RecipeError, RecipeErrors
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all
from pytest_infx.recipes.source import LinedDict, LinedList
from pytest_infx.settings import DEFAULT_RECIPES_DIR

T = TypeVar("T")

SCENARIOS = {"agentic-coding": "agentic", "fixed-seq-len": "fixed_seq_len"}
"""InferenceX's scenario names and the kinds of the recipe points that stand for them."""
CONC_STEP = 2
CONC_FIELDS = ("conc-list", "conc-start", "conc-end")
"""The concurrency fields of a search-space entry: another ``conc…`` field is a misspelling,
and an entry with none of them would silently give no point."""
_RUNNER = re.compile(r"(?:^|[:-])([a-z]+[0-9]+[a-z]*)(?:-|$)")


@dataclass(frozen=True, order=True)
class ConfigPoint:
    """One point: the key, TP, concurrency and variant (``""`` for none); a fixed-seq-len
    point's input and output lengths (0 for an AgentX point)."""

    key: str
    tp: int
    concurrency: int
    variant: str
    isl: int = 0
    osl: int = 0

    @property
    def name(self) -> str:
        suffix = f"-{self.variant}" if self.variant else ""
        if self.isl:
            return f"tp{self.tp}-isl{self.isl}-osl{self.osl}-c{self.concurrency}{suffix}"
        return f"tp{self.tp}-c{self.concurrency}{suffix}"

    @property
    def coordinates(self) -> tuple[int, int, str, int, int]:
        return (self.tp, self.concurrency, self.variant, self.isl, self.osl)


def variant_of(entry: Mapping[str, Any]) -> str:
    """The variant name of one search-space entry, as a recipe's ``agentic.points`` names it."""
    parts: list[str] = []
    ep = entry.get("ep")
    if isinstance(ep, int) and ep > 1:
        parts.append(f"ep{ep}")
    if entry.get("dp-attn") is True:
        parts.append("dpa")
    dcp = entry.get("dcp-size")
    if isinstance(dcp, int) and dcp > 1:
        parts.append(f"dcp{dcp}")
    offload = entry.get("kv-offloading", "none")
    if offload not in (None, "none"):
        backend = entry.get("kv-offload-backend")
        name = backend.get("name") if isinstance(backend, Mapping) else None
        parts.append(str(name or offload))
    return "-".join(parts)


def _runner(label: str) -> str:
    found = _RUNNER.search(label.split(":", 1)[-1])
    return found.group(1) if found else label


@dataclass(frozen=True)
class MasterSide:
    points: dict[str, list[ConfigPoint]]
    runners: dict[str, str]
    skipped: int


DEFAULT_MASTERS = "*-master.yaml"


def frameworks() -> tuple[str, ...]:
    """The InferenceX frameworks whose points a recipe can hold: those of the engines that
    have an adapter here."""
    return tuple(dict.fromkeys(installed().inferencex_frameworks().values()))


def master_points(
    path: Path, masters: str = DEFAULT_MASTERS, served: Iterable[str] | None = None
) -> MasterSide:
    """The single-node AgentX and fixed-seq-len points of the master configs named ``masters``
    (a glob) under ``path`` (a checkout root or its configs folder), by key, of the ``served``
    frameworks (default: :func:`frameworks`)."""
    wanted = frozenset(frameworks() if served is None else served)

    pattern = f"configs/{masters}" if (path / "configs").is_dir() else masters
    files = master_files(path, pattern)
    if not files:
        raise FileNotFoundError(f"{path}: no {pattern} here; give the checkout root")
    points: dict[str, list[ConfigPoint]] = {}
    runners: dict[str, str] = {}
    skipped = 0
    for key, parsed in _configs(files):
        config = _field(parsed, key, LinedDict, f"config key {key!r}", "a mapping")
        scenarios = config.get("scenarios")
        if scenarios is None:
            continue
        scenarios = _field(config, "scenarios", LinedDict, f"{key}.scenarios", "a mapping")
        named = {
            name: _field(scenarios, name, LinedList, f"{key}.scenarios.{name}", "a list")
            for name in SCENARIOS
            if scenarios.get(name)
        }
        if not named:
            continue
        if config.get("framework") not in wanted or config.get("multinode"):
            skipped += 1
            continue
        found: list[ConfigPoint] = []
        for scenario, groups in named.items():
            where = f"{key}.scenarios.{scenario}"
            for group in _items(groups, LinedDict, where, "a mapping"):
                found.extend(_group_points(key, group, fixed=scenario == "fixed-seq-len"))
        points[key] = found
        runners[key] = _runner(str(config.get("runner", "")))
    return MasterSide(points, runners, skipped)


def _group_points(key: str, group: LinedDict, *, fixed: bool) -> Iterator[ConfigPoint]:
    lengths = (
        (
            _field(group, "isl", int, f"{key} isl", "a whole number"),
            _field(group, "osl", int, f"{key} osl", "a whole number"),
        )
        if fixed
        else (0, 0)
    )
    space: list[Any] = _field(group, "search-space", list, f"{key} search-space", "a list", [])
    for entry in _items(space, LinedDict, f"{key} search-space", "a mapping"):
        variant = variant_of(entry)
        tp = _count_field(entry, "tp", f"{key} tp")
        for conc in _concurrencies(key, entry):
            yield ConfigPoint(key, tp, conc, variant, *lengths)


def _concurrencies(key: str, entry: LinedDict) -> list[int]:
    """A search-space entry's concurrencies: its ``conc-list``, or its ``conc-start`` doubled
    while below ``conc-end``, then ``conc-end``."""
    for name in entry:
        if str(name).startswith("conc") and name not in CONC_FIELDS:
            where = entry.where(name)
            raise _malformed(
                where.path, where.line or 1, f"{key} {name}", "one of " + ", ".join(CONC_FIELDS)
            )
    if not any(name in entry for name in CONC_FIELDS):
        where = entry.location
        raise _malformed(
            where.path, where.line or 1, f"{key} search-space entry", "given a conc-list or a range"
        )
    if "conc-list" in entry or "conc-start" not in entry:
        listed: list[Any] = _field(entry, "conc-list", list, f"{key} conc-list", "a list", [])
        items = _items(listed, int, f"{key} conc-list", "a whole number")
        return [
            _counted(conc, listed, index, f"{key} conc-list") for index, conc in enumerate(items)
        ]
    start = _field(entry, "conc-start", int, f"{key} conc-start", "a whole number")
    end = _field(entry, "conc-end", int, f"{key} conc-end", "a whole number")
    if start < 1 or end < start:
        where = entry.where("conc-end")
        raise _malformed(where.path, where.line or 1, f"{key} conc-end", f"at least {start}")
    found: list[int] = []
    conc = start
    while conc < end:
        found.append(conc)
        conc *= CONC_STEP
    return [*found, end]


def _configs(files: Iterable[Path]) -> Iterator[tuple[str, LinedDict]]:
    """Each top-level key of the master configs with the mapping that holds it, each file
    read once; a key two files define is the first file's."""
    from pytest_infx.recipes.source import load_yaml

    seen: set[str] = set()
    for file in files:
        parsed = load_yaml(file)
        if not isinstance(parsed, LinedDict):
            raise _malformed(file, 1, "the file", "a mapping of config keys")
        for key in parsed:
            if key not in seen:
                seen.add(key)
                yield key, parsed


def _malformed(path: Path, line: int, what: str, expected: str) -> RecipeError:
    return RecipeError(
        Location(path, line),
        None,
        f"{what} must be {expected}, as InferenceX's master configs write it",
        "fix the master config, or point compare-configs at an InferenceX checkout",
    )


def _field(
    mapping: LinedDict, name: str, kind: type[T], what: str, expected: str, default: T | None = None
) -> T:
    """``mapping[name]`` when it is a ``kind`` (``default`` when it is missing); else a
    RecipeError at its line."""
    if name not in mapping and default is not None:
        return default
    value = mapping.get(name)
    if _is(value, kind):
        return value
    where = mapping.where(name)
    raise _malformed(where.path, where.line or 1, what, expected)


def _count_field(mapping: LinedDict, name: str, what: str) -> int:
    """``mapping[name]`` as a count from 1 (a TP of 0 or -8 is no point); else a RecipeError at
    its line."""
    value = mapping.get(name)
    try:
        return count(value, name)
    except NumberError:
        where = mapping.where(name)
        raise _malformed(where.path, where.line or 1, what, "a whole number from 1") from None


def _counted(value: int, values: list[Any], index: int, what: str) -> int:
    """An item of a list of counts (a concurrency of -1 is no point); else a RecipeError at
    the item's line."""
    try:
        return count(value, what)
    except NumberError:
        assert isinstance(values, LinedList)
        where = values.where(index)
        raise _malformed(
            where.path, where.line or 1, f"each item of {what}", "a whole number from 1"
        ) from None


def _is(value: object, kind: type[T]) -> TypeGuard[T]:
    """Whether ``value`` is a ``kind``; a YAML boolean is no whole number."""
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _items(values: list[Any], kind: type[T], what: str, expected: str) -> Iterator[T]:
    """The items of a list, each a ``kind``; else a RecipeError at the item's line."""
    for index, value in enumerate(values):
        if not _is(value, kind):
            assert isinstance(values, LinedList)
            where = values.where(index)
            raise _malformed(where.path, where.line or 1, f"each item of {what}", expected)
        yield value


def recipe_points(points: Iterable[Point]) -> dict[str, list[ConfigPoint]]:
    """The AgentX and fixed-seq-len points of a recipe tree, by key, in the same terms as the
    master configs."""
    found: dict[str, list[ConfigPoint]] = {}
    kinds = set(SCENARIOS.values())
    for point in points:
        if point.kind not in kinds:
            continue
        found.setdefault(point.recipe_key, []).append(
            ConfigPoint(
                point.recipe_key,
                point.tp,
                point.concurrency,
                point.variant or "",
                point.isl or 0,
                point.osl or 0,
            )
        )
    return found


@dataclass(frozen=True)
class KeyDifference:
    key: str
    only_in_masters: tuple[str, ...]
    only_in_recipes: tuple[str, ...]
    runner: str | None

    def render(self) -> list[str]:
        lines = [f"{self.key}:"]
        if self.runner:
            lines.append(f"  runner: {self.runner}")
        if self.only_in_masters:
            lines.append(f"  only in the master configs: {', '.join(self.only_in_masters)}")
        if self.only_in_recipes:
            lines.append(f"  only in the recipes: {', '.join(self.only_in_recipes)}")
        return lines


def _order(names: Iterable[ConfigPoint]) -> tuple[str, ...]:
    return tuple(p.name for p in sorted(names))


@dataclass(frozen=True)
class ConfigComparison:
    differences: tuple[KeyDifference, ...]
    compared: tuple[str, ...]
    points: int
    local_keys: tuple[str, ...]
    skipped: int


def compare(
    masters: MasterSide, recipes: Mapping[str, list[ConfigPoint]], runners: Mapping[str, str]
) -> ConfigComparison:
    """Every master key against its recipe: points one side has and the other has not."""
    differences: list[KeyDifference] = []
    total = 0
    for key in sorted(masters.points):
        theirs = {p.coordinates: p for p in masters.points[key]}
        ours = {p.coordinates: p for p in recipes.get(key, ())}
        total += len(theirs.keys() & ours.keys())
        runner = None
        if key in runners and runners[key] != masters.runners.get(key):
            runner = f"recipe {runners[key]}, master configs {masters.runners.get(key)}"
        missing = [theirs[c] for c in theirs.keys() - ours.keys()]
        extra = [ours[c] for c in ours.keys() - theirs.keys()]
        if missing or extra or runner:
            differences.append(KeyDifference(key, _order(missing), _order(extra), runner))
    local = tuple(sorted(set(recipes) - set(masters.points)))
    return ConfigComparison(
        tuple(differences), tuple(sorted(masters.points)), total, local, masters.skipped
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare-configs",
        help="AgentX and fixed-seq-len points that a recipe tree and a checkout's master "
        "configs do not share",
    )
    parser.add_argument("path", type=Path, help="checkout root, or its configs folder")
    parser.add_argument("--recipes", default=DEFAULT_RECIPES_DIR, type=Path, help="recipe folder")
    parser.add_argument(
        "--masters",
        default=DEFAULT_MASTERS,
        help=f"master-config files to compare, a glob (default {DEFAULT_MASTERS})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        masters = master_points(args.path, args.masters)
        rules = installed().engine_rules()
        sources = load_tree(args.recipes, rules)
        points = expand_all(sources, rules)
    except (FileNotFoundError, RecipeError, RecipeErrors) as exc:
        print(f"infx compare-configs: {exc}")
        return 2
    runners = {source.recipe.key: source.recipe.runner for source in sources}
    result = compare(masters, recipe_points(points), runners)
    for difference in result.differences:
        print("\n".join(difference.render()))
    print(
        f"{len(result.compared)} keys of {args.masters}"
        f" (single-node {'/'.join(frameworks())} {' and '.join(SCENARIOS)}),"
        f" {result.points} points on both sides, {len(result.differences)} keys differ"
    )
    if result.local_keys:
        print(
            f"recipe keys with no master-config key (not compared): {', '.join(result.local_keys)}"
        )
    if result.skipped:
        print(f"{result.skipped} master keys of other frameworks or multinode not compared")
    return 1 if result.differences else 0
