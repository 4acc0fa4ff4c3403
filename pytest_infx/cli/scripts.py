"""``infx compare-scripts CHECKOUT``: the recipes' commands against what a checkout of
InferenceX's scripts runs for each of their points.

The recipes mirror InferenceX at one commit, and the fidelity test holds them to the
commands recorded there. InferenceX's scripts move on: a flag added to a per-key script, a
variable a launcher exports, a client setting in ``benchmark_lib.sh``. This command replays
a checkout's workflow step, launcher and per-key script for each of its points that a recipe
holds (``recipes/replay.py``), and compares the server and client it recorded with the
recipe's plan exactly as the fidelity comparison does (``recipes/fidelity.py``): what the
plugin owns or the recipe states is counted by reason, anything else is printed, one line
per setting, and makes the exit status 1.

A point of the checkout's sweep is a recipe point when the recipe's point has its name (TP,
concurrency, lengths, variant), model, image and runner; where two keys share all of those
(a key and its ``-mtp`` sibling), the key's name must say ``mtp`` exactly when the point's
``spec-decoding`` names one. A recipe point the sweep does not have is listed as such (which
points differ is ``infx compare-configs``'s business), not an error here.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_infx.recipes.points import Point
from pytest_infx.settings import DEFAULT_GOLDEN_DIR, DEFAULT_RECIPES_DIR
from pytest_infx.usage import UsageError

DEFAULT_TIMEOUT_S = 60.0
"""Seconds one point's step may run: a script that waits on something no stand-in provides
is stopped and reported, not waited for."""


@dataclass(frozen=True)
class Outcome:
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
        help="points replayed at once (default 1; each is a few processes, mostly waiting)",
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


def match(params: Mapping[str, Any], points: Sequence[Point]) -> Point | None:
    """The recipe point that mirrors one point of the checkout's sweep, if any."""
    from pytest_infx.cli.compare import _runner
    from pytest_infx.cli.importer import point_name

    kind = "agentic" if params.get("scenario-type") == "agentic-coding" else "fixed_seq_len"
    name = point_name(params)
    found = [
        p
        for p in points
        if p.kind == kind
        and p.name == name
        and p.recipe.model.hub_id == params.get("model")
        and p.recipe.engine.image == params.get("image")
        and p.recipe.runner == _runner(str(params.get("runner", "")))
    ]
    mtp = params.get("spec-decoding", "none") not in ("none", None)
    found = sorted((p for p in found if ("mtp" in p.recipe_key) == mtp), key=lambda p: p.id)
    return found[0] if found else None


def compare_point(
    point: Point, server: Mapping[str, Any], client: Mapping[str, Any], golden: Path
) -> Outcome:
    """One point's plan against a replayed server and client, as the fidelity test compares
    it against InferenceX's record."""
    from pytest_infx.engines.registry import installed
    from pytest_infx.prepare.plan import client_settings, server_plan
    from pytest_infx.recipes.fidelity import (
        client_differences,
        server_differences,
        stated_in,
        unstated,
    )

    plan = server_plan(point, golden)
    found = server_differences(plan.engine, plan.argv, plan.env, plan.files, server)
    found += client_differences(client_settings(point), client)
    rules = installed().engine_rules()
    admission = rules.agentic.get(plan.engine, {}) if point.kind == "agentic" else {}
    left, counts = unstated(found, stated_in(point.recipe), admission)
    return Outcome(point, tuple(d.render() for d in left), {str(k): n for k, n in counts.items()})


def _selected(points: Iterable[Point], keys: Sequence[str]) -> list[Point]:
    return [p for p in points if not keys or any(fnmatch.fnmatch(p.recipe_key, k) for k in keys)]


def run(args: argparse.Namespace) -> int:
    from pytest_infx.engines.registry import installed
    from pytest_infx.recipes.errors import RecipeError, RecipeErrors
    from pytest_infx.recipes.loader import load_tree
    from pytest_infx.recipes.points import expand_all
    from pytest_infx.recipes.replay import CheckoutError, check_checkout, replay, sweep
    from pytest_infx.recipes.workflow import WorkflowError

    try:
        check_checkout(args.checkout)
        rules = installed().engine_rules()
        points = _selected(expand_all(load_tree(args.recipes, rules), rules), args.key)
        wanted = sweep(args.checkout)
    except (CheckoutError, WorkflowError) as exc:
        raise UsageError(str(exc)) from exc
    except (FileNotFoundError, RecipeError, RecipeErrors) as exc:
        raise UsageError(f"{args.recipes}: {exc}") from exc
    pairs = [(params, point) for params in wanted if (point := match(params, points))]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        replays = pool.map(lambda pair: replay(args.checkout, pair[0], args.timeout), pairs)
        try:
            done = list(replays)
        except (CheckoutError, WorkflowError) as exc:
            raise UsageError(str(exc)) from exc
    outcomes: list[Outcome] = []
    for (_, point), replayed in zip(pairs, done, strict=True):
        if replayed.server is None or replayed.client is None:
            stopped = "timed out" if replayed.returncode is None else f"exit {replayed.returncode}"
            side = "server" if replayed.server is None else "client"
            why = f"no {side} recorded (step {stopped}: {replayed.last_line or 'no output'})"
            outcomes.append(Outcome(point, (), {}, why))
            continue
        outcomes.append(compare_point(point, replayed.server, replayed.client, args.golden))
    matched = {point.id for _, point in pairs}
    for point in points:
        if point.kind != "speedbench" and point.id not in matched:
            print(f"{point.id}: not in the checkout's sweep (infx compare-configs compares them)")
    return _report(outcomes, len(wanted))


def _report(outcomes: Sequence[Outcome], swept: int) -> int:
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
