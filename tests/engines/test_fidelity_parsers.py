"""engines/fidelity.py's reading of a server command line, checked against the engines' own
parsers: every vLLM and SGLang server argv InferenceX recorded (its ``commands.jsonl``, in the
reference data beside the repository; skipped without it) and every argv the plan makes for
the same points, parsed in one process per engine in the parser's cached environment.

Two flags the reading names alike must land in one parser ``dest`` and two it names apart in
two; two values it reads as equal must parse to equal values, and two it reads as different
to different ones. Otherwise the comparison would hide a difference or report one that the
engine never sees. An argv the parser refuses (a flag of another release) is left out and
counted.

The parser is the newest release of each engine whose parser installs here, which is newer
than InferenceX's images (vLLM 0.25.0 to 0.27.1 and nightlies, SGLang 0.5.12 to 0.5.17 and
nightlies, at 843c6254f): a reading is checked where that parser runs.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inferencex_reference import RECIPES, ROOT, records, reference, sweep_points

from pytest_infx.cli.importer import point_name
from pytest_infx.engines.conformance import parser_argv
from pytest_infx.engines.fidelity import flags, setting_name
from pytest_infx.engines.registry import installed
from pytest_infx.envs.toolenv import ensure
from pytest_infx.prepare.plan import server_plan
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all

pytestmark = pytest.mark.engine

SCRIPT = Path(__file__).with_name("parser_reading.py.txt")
PARSERS = {"vllm": "v0.31.0", "sglang": "v0.5.21"}
"""The release whose parser checks each engine's reading: the newest that installs here."""


@dataclass(frozen=True)
class Flag:
    """One flag token of one argv: the reading's name and value, the parser's dest and value."""

    name: str | None
    value: str | None
    dest: str
    parsed: str
    where: str


@dataclass(frozen=True)
class Reading:
    release: str
    argvs: int
    refused: int
    flags: tuple[Flag, ...]


def _command_apart(argv: list[str]) -> list[str]:
    """A recorded argv as the parser reads it: after ``vllm serve``/``sglang serve`` or the
    module of ``python3 -m``."""
    for at, token in enumerate(argv[:3]):
        if token == "serve":
            return argv[at + 1 :]
        if token == "-m" and at + 1 < len(argv):
            return argv[at + 2 :]
    return argv


@functools.cache
def _argvs() -> dict[str, dict[tuple[str, ...], str]]:
    """Per engine, every distinct parser argv, recorded or planned, with where it is from."""
    points = {p.id: p for p in expand_all(load_tree(RECIPES))}
    sweep = sweep_points()
    found: dict[str, dict[tuple[str, ...], str]] = {engine: {} for engine in PARSERS}
    for record in records():
        argv = (record.get("server") or {}).get("argv") or []
        engine = record.get("framework")
        if engine not in found or not argv or record["scenario"] == "speedbench":
            continue
        found[engine].setdefault(tuple(_command_apart(argv)), f"InferenceX {record['key']}")
        name = point_name(sweep[record["index"]])
        ids = [f"{key}[{name}]" for key in record["key"].split("|")]
        point = next((points[i] for i in ids if i in points), None)
        if point is None:
            continue
        plan = server_plan(point, ROOT / "golden")
        if plan.engine in found:
            found[plan.engine].setdefault(tuple(parser_argv(plan)), f"ours {point.id}")
    return found


def _flag_at(argv: tuple[str, ...]) -> list[int]:
    """Where the tokens an ``argparse`` parser may read as an option are (a negative number is
    a value)."""
    at = []
    for i, token in enumerate(argv):
        try:
            float(token)
        except ValueError:
            if token.startswith("-"):
                at.append(i)
    return at


@functools.cache
def reading(engine: str) -> Reading:
    """Each argv's flags read by fidelity and by the engine's parser, in one parser process."""
    reference()
    parser = installed().adapters[engine].parser_env(PARSERS[engine])
    assert parser is not None
    env = ensure(parser.spec)
    argvs = _argvs()[engine]
    ordered = list(argvs)
    jobs = [[str(i), list(argv), _flag_at(argv)] for i, argv in enumerate(ordered)]
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(env.python), str(SCRIPT), engine],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        env=clean,
        check=False,
        timeout=300,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    by_id = {a["id"]: a for a in answers if "id" in a}
    assert done.returncode == 0 and len(by_id) == len(jobs), done.stderr[-3000:]
    found: list[Flag] = []
    refused = 0
    for i, argv in enumerate(ordered):
        answer: dict[str, Any] = by_id[str(i)]
        if answer["error"] is not None:
            refused += 1
            continue
        read = flags(argv, engine)
        for at, dest in zip(_flag_at(argv), answer["dests"], strict=True):
            if dest is None:
                continue
            name = setting_name(argv[at].partition("=")[0], engine)
            found.append(
                Flag(
                    name if name in read else None,
                    read.get(name),
                    dest,
                    answer["values"][dest],
                    argvs[argv],
                )
            )
    return Reading(parser.release, len(jobs), refused, tuple(found))


def _disagreements(engine: str) -> dict[str, list[str]]:
    """Per parser dest, where the reading and the parser part: each line with the first argv
    where each side's reading was seen."""
    found = reading(engine).flags
    apart: dict[str, list[str]] = defaultdict(list)
    dests: dict[str | None, dict[str, str]] = defaultdict(dict)
    names: dict[str, dict[str | None, str]] = defaultdict(dict)
    for flag in found:
        dests[flag.name].setdefault(flag.dest, flag.where)
        names[flag.dest].setdefault(flag.name, flag.where)
    for name, seen in dests.items():
        if name is None:
            for dest in seen:
                apart[dest].append(f"the reading leaves out a flag the parser reads: {seen}")
        elif len(seen) > 1:
            for dest in seen:
                apart[dest].append(f"{name} is one setting to the reading: {seen}")
    for dest, named in names.items():
        if len(named) > 1:
            apart[dest].append(f"one setting to the parser, several to the reading: {named}")
    parsed: dict[tuple[str, str | None], dict[str, str]] = defaultdict(dict)
    read: dict[tuple[str, str], dict[str | None, str]] = defaultdict(dict)
    for flag in found:
        parsed[(flag.dest, flag.value)].setdefault(flag.parsed, flag.where)
        read[(flag.dest, flag.parsed)].setdefault(flag.value, flag.where)
    for (dest, given), values in parsed.items():
        if len(values) > 1:
            apart[dest].append(f"the reading's one value {given!r} parses to several: {values}")
    for (dest, value), readings in read.items():
        if len(readings) > 1:
            apart[dest].append(f"one parsed value {value} is several to the reading: {readings}")
    return dict(apart)


KNOWN: dict[tuple[str, str], str] = {
    ("vllm", "enable_prefix_caching"): (
        "vLLM's boolean flags are argparse's BooleanOptionalAction: --no-enable-prefix-caching"
        " is --enable-prefix-caching false, one dest; the reading names them apart, so one side"
        " with --enable-prefix-caching and the other with --no-enable-prefix-caching is two"
        " differences, not one (none is hidden). The importer writes recipe args from the same"
        " reading, so folding them is not a change to the alias table alone."
    ),
}
"""Where the reading and the parser part today, with why it stays: a new one fails the test,
and so does one that is gone (remove it here)."""


@pytest.mark.parametrize("engine", sorted(PARSERS))
def test_the_parser_reads_most_commands_of_both_sides(
    engine: str, engine_figures: list[str]
) -> None:
    found = reading(engine)
    sides = {flag.where.split(" ", 1)[0] for flag in found.flags}
    engine_figures.append(
        f"fidelity's reading of {engine} checked by the {found.release} parser:"
        f" {found.argvs} distinct argv, {found.refused} refused (left out),"
        f" {len(found.flags)} flags"
    )
    assert sides == {"InferenceX", "ours"}
    assert found.refused < found.argvs


@pytest.mark.parametrize("engine", sorted(PARSERS))
def test_fidelity_reads_flags_and_values_as_the_engine_s_parser_does(engine: str) -> None:
    apart = _disagreements(engine)
    unknown = {dest: lines for dest, lines in apart.items() if (engine, dest) not in KNOWN}
    assert unknown == {}
    assert set(apart) == {dest for known, dest in KNOWN if known == engine}
