"""Every planned server argv, parsed by the command-line parser of the engine release the recipe
pins, before any server starts.

A flag a release renamed or dropped is not ignored by the engine: its ``argparse`` exits before
the server starts (``ambiguous option``, ``unrecognized arguments``, ``invalid choice``), an hour
into a GPU job. The parsers run in cached tool environments that hold the engine's own Python
package without a GPU; importing one takes seconds, so every argv of one parser environment is
parsed in one process, and only the argvs whose verdict is not already in the cache
(:mod:`pytest_infx.engines.verdicts`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pytest_infx.engines.base import FILES, ParserEnv, PlanError, ServerPlan
from pytest_infx.engines.optionset import OptionSet
from pytest_infx.engines.registry import EngineRegistry, installed
from pytest_infx.engines.verdicts import Verdicts
from pytest_infx.envs.toolenv import InstallError, Progress, ensure, locate, spec_hash
from pytest_infx.recipes.errors import Location
from pytest_infx.recipes.owned import canonical
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.source import LinedDict

PORT = "8000"
_FLAG = re.compile(r"(?<![\w-])--([A-Za-z0-9][\w.-]*)")

PlanOf = Callable[[Point], ServerPlan]
RawOf = Callable[[Point], LinedDict | None]


class ParserCheckError(RuntimeError):
    """A parser process failed as a whole (it could not import, or died); names its log."""


@dataclass(frozen=True)
class Rejection:
    """One planned argv that the engine's own parser refuses, where the recipe sets it."""

    location: Location
    point_ids: tuple[str, ...]
    release: str
    message: str

    def __str__(self) -> str:
        points = ", ".join(self.point_ids[:3])
        more = f" and {len(self.point_ids) - 3} more" if len(self.point_ids) > 3 else ""
        return (
            f"{self.location}: {self.release} rejects the server command of {points}{more}:"
            f" {self.message}"
        )


@dataclass(frozen=True)
class ParserRun:
    """One parser process: which release parsed how many distinct argv, and how long it took."""

    release: str
    note: str
    argvs: int
    points: int
    import_s: float | None
    seconds: float
    installed_s: float | None = None
    cached: int = 0
    """Of ``argvs``, how many verdicts came from an earlier run's (no parser process for them)."""


@dataclass(frozen=True)
class Report:
    runs: tuple[ParserRun, ...]
    rejected: tuple[Rejection, ...]
    unchecked: tuple[str, ...] = ()
    """Points no parser checked, each with the reason (no parser known, not installed)."""

    @property
    def ok(self) -> bool:
        return not self.rejected


def parser_argv(plan: ServerPlan) -> list[str]:
    """The argv as the engine's parser sees it: without the command, with a port."""
    return [arg.replace("{port}", PORT) for arg in plan.argv[plan.command :]]


@dataclass
class _Group:
    parser: ParserEnv
    argvs: dict[tuple[str, ...], list[Point]] = field(default_factory=dict)


def check(
    points: Iterable[Point],
    plan_of: PlanOf,
    *,
    raw_of: RawOf | None = None,
    install: bool = True,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
    engines: EngineRegistry | None = None,
) -> Report:
    """Parse every point's planned argv with its engine's own parser.

    ``install`` installs a missing parser environment (minutes, once); without it, points whose
    environment is not installed are listed as unchecked.
    """
    engines = engines or installed()
    groups: dict[str, _Group] = {}
    sets: dict[str, _SetGroup] = {}
    unchecked: list[str] = []
    for point in points:
        if point.recipe.engine.command is not None:
            unchecked.append(f"{point.id}: a local command's parser is whatever it runs")
            continue
        adapter = engines.adapter_for(point)
        version = point.recipe.engine.version
        parser = adapter.parser_env(version)
        options = adapter.option_set(version) if parser is None else None
        if parser is None and options is None:
            unchecked.append(
                f"{point.id}: no parser known for {adapter.name} {version or '(unpinned)'},"
                " and no option set read from its source (infx engine option-set"
                f" {adapter.name} CHECKOUT --release {version or 'RELEASE'})"
            )
            continue
        try:
            plan = plan_of(point)
        except (PlanError, LookupError, ValueError) as exc:
            unchecked.append(f"{point.id}: cannot plan: {exc}")
            continue
        if options is not None:
            held = sets.setdefault(f"{options.engine}-{options.release}", _SetGroup(options))
            held.plans.setdefault(_plan_key(plan), (plan, []))[1].append(point)
            continue
        assert parser is not None
        key = f"{parser.spec.name}-{parser.spec.version}-{spec_hash(parser.spec)}"
        group = groups.setdefault(key, _Group(parser))
        group.argvs.setdefault(tuple(parser_argv(plan)), []).append(point)
    runs: list[ParserRun] = []
    rejected: list[Rejection] = []
    for group in groups.values():
        env = locate(group.parser.spec, cache_dir=cache_dir)
        installed_s: float | None = None
        if not env.is_complete():
            if not install:
                unchecked.extend(
                    f"{p.id}: {group.parser.release} parser not installed"
                    for ps in group.argvs.values()
                    for p in ps
                )
                continue
            started = time.monotonic()
            unusable = env.env_dir.parent / f"{env.env_dir.name}.unusable"
            reason = None
            if unusable.is_file() and group.parser.fallback is not None:
                reason = unusable.read_text(encoding="utf-8")
            if reason is None:
                try:
                    env = ensure(group.parser.spec, progress=progress, cache_dir=cache_dir)
                except InstallError as exc:
                    if group.parser.fallback is None:
                        raise
                    reason = _first_line(exc)
                    if "step 'check'" in reason:
                        # it installed and does not import: the same next time, unlike a download
                        unusable.write_text(reason, encoding="utf-8")
            fallback = group.parser.falling_back(reason) if reason is not None else None
            if fallback is not None:
                group.parser = fallback
                env = ensure(fallback.spec, progress=progress, cache_dir=cache_dir)
            installed_s = time.monotonic() - started
        store = Verdicts.of(group.parser, cache_dir)
        known = store.known(group.argvs)
        todo = [argv for argv in group.argvs if argv not in known]
        run: tuple[int, float | None, float] = (0, None, 0.0)
        errors = [(argv, message) for argv, message in known.items() if message]
        if todo:
            if progress is not None:
                progress(
                    f"engine argv check: parsing {len(todo)} command(s) with the"
                    f" {group.parser.release} parser (its import takes a while; the verdicts"
                    " are kept for the next run)"
                )
            run, parsed = _parse(env.python, group, todo)
            store.add(dict.fromkeys(todo, None) | dict(parsed))
            errors.extend(parsed)
        runs.append(
            ParserRun(
                group.parser.release,
                group.parser.note,
                len(group.argvs),
                sum(len(ps) for ps in group.argvs.values()),
                run[1],
                run[2],
                installed_s,
                cached=len(known),
            )
        )
        merged: dict[tuple[str, str], list[Point]] = {}
        for argv, message in errors:
            found = group.argvs[argv]
            where = _locate(found[0], message, raw_of)
            merged.setdefault((str(where), message), []).extend(found)
        for (_, message), found in merged.items():
            where = _locate(found[0], message, raw_of)
            ids = tuple(sorted({p.id for p in found}, key=[p.id for p in found].index))
            if group.parser.stands_in:
                unchecked.extend(
                    f"{i}: {group.parser.release}, standing in for the pinned release, rejects"
                    f" it ({message}); the pinned release may accept it"
                    for i in ids
                )
                continue
            rejected.append(Rejection(where, ids, group.parser.release, message))
    for held in sets.values():
        set_run, refused = _check_set(held, raw_of)
        runs.append(set_run)
        rejected.extend(refused)
    return Report(tuple(runs), tuple(rejected), tuple(unchecked))


@dataclass
class _SetGroup:
    options: OptionSet
    plans: dict[str, tuple[ServerPlan, list[Point]]] = field(default_factory=dict)


def _plan_key(plan: ServerPlan) -> str:
    return json.dumps([plan.argv[plan.command :], sorted(plan.files.items())])


def _check_set(found: _SetGroup, raw_of: RawOf | None) -> tuple[ParserRun, list[Rejection]]:
    """Every distinct command of one release, against the option set read from its source."""
    options = found.options
    release = f"{options.engine} {options.release} option set"
    started = time.monotonic()
    refused: list[Rejection] = []
    for plan, points in found.plans.values():
        named = {f"{FILES}/{name}": text for name, text in plan.files.items()}
        message = options.check_argv(parser_argv(plan), named)
        if message is not None:
            ids = tuple(dict.fromkeys(p.id for p in points))
            refused.append(Rejection(_locate(points[0], message, raw_of), ids, release, message))
    run = ParserRun(
        release,
        f"read from {options.source}",
        len(found.plans),
        sum(len(points) for _, points in found.plans.values()),
        None,
        time.monotonic() - started,
    )
    return run, refused


def _parse(
    python: Path, group: _Group, argvs: list[tuple[str, ...]]
) -> tuple[tuple[int, float | None, float], list[tuple[tuple[str, ...], str]]]:
    jobs = [[str(i), list(argv)] for i, argv in enumerate(argvs)]
    script = resources.files(group.parser.package) / group.parser.script
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    started = time.monotonic()
    with resources.as_file(script) as path:
        done = subprocess.run(
            [str(python), str(path)],
            input=json.dumps(jobs),
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    seconds = time.monotonic() - started
    answers: dict[str, str | None] = {}
    import_s: float | None = None
    for line in done.stdout.splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and "import_s" in answer:
            import_s = answer["import_s"]
        elif isinstance(answer, dict) and "id" in answer:
            answers[str(answer["id"])] = answer.get("error")
    if done.returncode != 0 or len(answers) != len(jobs):
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise ParserCheckError(
            f"the {group.parser.release} parser ({python}) exited with status {done.returncode}"
            f" after {len(answers)} of {len(jobs)} commands:\n{tail}"
        )
    errors = [(argvs[int(i)], message) for i, message in answers.items() if message]
    return (len(jobs), import_s, seconds), errors


def _first_line(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _locate(point: Point, message: str, raw_of: RawOf | None) -> Location:
    """The recipe line of the flag the parser names, when a recipe's ``engine.args`` set it;
    else the recipe's own line (the adapter planned the flag)."""
    fallback = Location(point.path, point.line)
    raw = raw_of(point) if raw_of is not None else None
    engine = raw.get("engine") if raw is not None else None
    args = engine.get("args") if isinstance(engine, LinedDict) else None
    if not isinstance(args, LinedDict):
        return fallback
    named = [canonical(flag) for flag in _FLAG.findall(message)]
    for name in args:
        mine = canonical(name).split("=", 1)[0]
        if any(flag == mine or flag.startswith(mine) or mine.startswith(flag) for flag in named):
            return args.where(name)
    return fallback


def summary(report: Report) -> list[str]:
    """What was checked, by which release's parser, and how long it took."""
    lines = []
    for run in report.runs:
        installed = f", installed in {run.installed_s:.0f}s" if run.installed_s else ""
        imported = f", import {run.import_s:.1f}s" if run.import_s is not None else ""
        note = f" ({run.note})" if run.note else ""
        points = f"{run.points} point{'s' if run.points != 1 else ''}"
        commands = f"{run.argvs} distinct command{'s' if run.argvs != 1 else ''}"
        if run.cached:
            commands += f" ({run.cached} verdict{'s' if run.cached != 1 else ''} from the cache)"
        lines.append(
            f"{run.release} parser{note}: {points}, {commands},"
            f" {run.seconds:.1f}s{imported}{installed}"
        )
    return lines
