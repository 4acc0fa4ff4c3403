"""``infx compare-scripts CHECKOUT``: the recipes' commands against what a checkout of
InferenceX's scripts runs for each of their points.

The recipes mirror InferenceX at one commit, and the fidelity test holds them to the
commands recorded there. InferenceX's scripts move on: a flag added to a per-key script, a
variable a launcher exports, a client setting in ``benchmark_lib.sh``. This command replays
a checkout's workflow step, launcher and per-key script for each of its points that a recipe
holds (``cli/replay.py``), and compares the server and client it recorded with the
recipe's plan exactly as the fidelity comparison does (``engines/fidelity.py``): what the
plugin owns or the recipe states is counted by reason, anything else is printed, one line
per setting, and makes the exit status 1.

A point of the checkout's sweep is a recipe point when the recipe's point has its name (TP,
concurrency, lengths, variant), model, image (less a digest the recipe pins) and runner type;
where keys share all of those (a key and its ``-mtp`` sibling), those whose master config in
the checkout lists the point's ``spec-decoding`` (a key it lacks: whose name says ``mtp``
exactly when the point names one); two keys can still share a point (a variant of a key), and
each is compared with the same replay. A recipe point the sweep does not have is listed as
such (which points differ is ``infx compare-configs``'s business), not an error here.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_infx.recipes.points import Point
from pytest_infx.settings import DEFAULT_GOLDEN_DIR, DEFAULT_RECIPES_DIR
from pytest_infx.usage import UsageError

if TYPE_CHECKING:
    from pytest_infx.cli.replay import Replayed

DEFAULT_TIMEOUT_S = 60.0
"""Seconds one point's step may run: a script that waits on something no stand-in provides
is stopped and reported, not waited for."""


@dataclass(frozen=True)
class ReplayOutcome:
    """One point's comparison: the differences left unstated, the stated ones per reason,
    and why it could not be compared (``None`` when it was)."""

    point: Point
    left: tuple[str, ...]
    stated: Mapping[str, int]
    unverified: str | None = None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare-scripts",
        help="replay an InferenceX checkout's scripts for each recipe point with recording "
        "stand-ins and print the differences no recipe states",
    )
    parser.add_argument("checkout", type=Path, help="root of an InferenceX checkout")
    parser.add_argument("--recipes", default=DEFAULT_RECIPES_DIR, type=Path, help="recipe folder")
    parser.add_argument("--golden", default=DEFAULT_GOLDEN_DIR, type=Path, help="golden folder")
    parser.add_argument(
        "-k",
        "--key",
        action="append",
        default=[],
        help="only recipe keys matching this glob (repeatable; default all)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds one point's step may run (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        default=1,
        help="points replayed at once (default 1; scripts that share a folder named after the"
        " fixed Slurm job id, as AgentX scripts do, can collide above 1)",
    )
    parser.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return number


def match(
    params: Mapping[str, Any],
    points: Sequence[Point],
    speculative: Mapping[str, frozenset[str]] | None = None,
) -> list[Point]:
    """The recipe points that mirror one point of the checkout's sweep (two keys may share it,
    as a hand-written variant of a key does)."""
    from pytest_infx.cli.compare import _runner
    from pytest_infx.cli.importer import point_name

    kind = "agentic" if params.get("scenario-type") == "agentic-coding" else "fixed_seq_len"
    name = point_name(params)
    image = _untagged(params.get("image"))
    found = [
        p
        for p in points
        if p.kind == kind
        and p.name == name
        and p.recipe.model.hub_id == params.get("model")
        and (image is None or _untagged(p.recipe.engine.image) == image)
        and p.recipe.runner == _runner(str(params.get("runner", "")))
    ]
    spec = str(params.get("spec-decoding") or "none")
    speculative = speculative or {}
    return [
        p
        for p in found
        if (
            spec in speculative[p.recipe_key]
            if p.recipe_key in speculative
            else ("mtp" in p.recipe_key) == (spec != "none")
        )
    ]


def _untagged(image: object) -> str | None:
    """An image without its digest: a recipe pins one where the master config names a tag."""
    return None if not image else str(image).split("@", 1)[0]


def compare_point(
    point: Point, server: Mapping[str, Any], client: Mapping[str, Any], golden: Path
) -> ReplayOutcome:
    """One point's plan against a replayed server and client, as the fidelity test compares
    it against InferenceX's record."""
    from pytest_infx.engines.fidelity import (
        client_differences,
        server_differences,
        stated_in,
        unstated,
    )
    from pytest_infx.engines.registry import installed
    from pytest_infx.prepare.plan import client_settings, server_plan

    plan = server_plan(point, golden)
    found = server_differences(plan.engine, plan.argv, plan.env, plan.files, server)
    found += client_differences(client_settings(point), client)
    rules = installed().engine_rules()
    admission = rules.agentic.get(plan.engine, {}) if point.kind == "agentic" else {}
    left, counts = unstated(found, stated_in(point.recipe), admission)
    return ReplayOutcome(
        point, tuple(d.render() for d in left), {str(k): n for k, n in counts.items()}
    )


def _selected(points: Iterable[Point], keys: Sequence[str]) -> list[Point]:
    return [p for p in points if not keys or any(fnmatch.fnmatch(p.recipe_key, k) for k in keys)]


def run(args: argparse.Namespace) -> int:
    from pytest_infx.cli.replay import (
        CheckoutError,
        check_checkout,
        replay,
        speculative_decoding,
        sweep,
    )
    from pytest_infx.cli.workflow import WorkflowError
    from pytest_infx.engines.registry import installed
    from pytest_infx.recipes.errors import RecipeError, RecipeErrors
    from pytest_infx.recipes.loader import load_tree
    from pytest_infx.recipes.points import expand_all

    try:
        check_checkout(args.checkout)
        rules = installed().engine_rules()
        points = expand_all(load_tree(args.recipes, rules), rules)
        wanted = sweep(args.checkout)
        speculative = speculative_decoding(args.checkout)
    except (CheckoutError, WorkflowError) as exc:
        raise UsageError(str(exc)) from exc
    except (FileNotFoundError, RecipeError, RecipeErrors) as exc:
        raise UsageError(f"{args.recipes}: {exc}") from exc
    chosen = {p.id for p in _selected(points, args.key)}
    pairs = [
        (params, mine)
        for params in wanted
        if (mine := [p for p in match(params, points, speculative) if p.id in chosen])
    ]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        replays = pool.map(lambda pair: replay(args.checkout, pair[0], args.timeout), pairs)
        try:
            done = list(replays)
        except (CheckoutError, WorkflowError) as exc:
            raise UsageError(str(exc)) from exc
    outcomes: list[ReplayOutcome] = []
    for (_, mine), replayed in zip(pairs, done, strict=True):
        for point in mine:
            outcomes.append(_outcome(point, replayed, args.golden))
    matched = {point.id for _, mine in pairs for point in mine}
    for point in points:
        if point.id in chosen and point.kind != "speedbench" and point.id not in matched:
            print(f"{point.id}: not in the checkout's sweep (infx compare-configs compares them)")
    return _report(outcomes, len(wanted))


def _outcome(point: Point, replayed: Replayed, golden: Path) -> ReplayOutcome:
    if replayed.server is None or replayed.client is None:
        stopped = "timed out" if replayed.returncode is None else f"exit {replayed.returncode}"
        side = "server" if replayed.server is None else "client"
        why = f"no {side} recorded (step {stopped}: {replayed.last_line or 'no output'})"
        return ReplayOutcome(point, (), {}, why)
    return compare_point(point, replayed.server, replayed.client, golden)


def _report(outcomes: Sequence[ReplayOutcome], swept: int) -> int:
    stated: Counter[str] = Counter()
    unstated = 0
    for outcome in outcomes:
        stated.update(outcome.stated)
        if outcome.unverified:
            print(f"{outcome.point.id}: unverified: {outcome.unverified}")
        for line in outcome.left:
            print(f"{outcome.point.id}: {line}")
            unstated += 1
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(stated.items()))
    unverified = sum(1 for o in outcomes if o.unverified)
    print(
        f"{len(outcomes)} of {swept} points replayed, {len(outcomes) - unverified} compared,"
        f" {unverified} unverified; {unstated} differences unstated,"
        f" {sum(stated.values())} stated ({reasons or 'none'})"
    )
    return 1 if unstated else 0
