"""``infx engine``: the engine environments (install, path, status) and ``check``, which parses
every planned server command of the selected recipes with the pinned engine's own parser.

``check`` needs the recipes, the golden curves (the synthetic setting is part of the command)
and the adapters, so it sits above all of them rather than in the environment module.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_infx.engines import embedded
from pytest_infx.envs import cli as envs_cli
from pytest_infx.settings import DEFAULT_GOLDEN_DIR, DEFAULT_RECIPES_DIR


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions, common = envs_cli.register(subparsers, {embedded.NAME: embedded.SPEC})
    check = actions.add_parser(
        "check",
        parents=[common],
        help="parse every planned server command with the pinned engine's own parser",
    )
    check.add_argument("--gpu", default=None, help="only the points of this runner (b300, ...)")
    check.add_argument(
        "--recipes", type=Path, default=Path(DEFAULT_RECIPES_DIR), help="recipe folder"
    )
    check.add_argument(
        "--golden", type=Path, default=Path(DEFAULT_GOLDEN_DIR), help="golden folder"
    )
    check.add_argument(
        "--no-install",
        action="store_true",
        help="check only with parser environments already installed; list the rest",
    )
    check.set_defaults(func=_check)
    read = actions.add_parser(
        "option-set",
        help="read an engine release's options from a checkout of its source, for an engine"
        " whose parser does not run here",
    )
    read.add_argument("engine", help="whose source it is (an engine with an option-set reader)")
    read.add_argument("checkout", type=Path, help="the source checkout of that release")
    read.add_argument("--release", required=True, help="the release it is (1.3.0rc14, ...)")
    read.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder to write <engine>-<release>.json to (default: pytest-infx's own option"
        " sets, which `infx engine check` reads)",
    )
    read.set_defaults(func=_option_set)


def _option_set(args: argparse.Namespace) -> int:
    from pytest_infx.engines import optionset
    from pytest_infx.engines.optionsource import READERS, SourceError
    from pytest_infx.files.atomic import atomic_write_text
    from pytest_infx.usage import EXIT_STATUS

    reader = READERS.get(args.engine)
    if reader is None:
        known = ", ".join(READERS)
        print(
            f"infx engine option-set: error: no option-set reader for {args.engine!r};"
            f" engines with one: {known}",
            file=sys.stderr,
        )
        return EXIT_STATUS
    try:
        found = reader(args.checkout, args.release.lstrip("v"))
    except SourceError as exc:
        print(f"infx engine option-set: {exc}", file=sys.stderr)
        return 1
    folder = args.out if args.out is not None else optionset.shipped()
    path = folder / optionset.file_name(found.engine, found.release)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, found.model_dump_json(indent=1) + "\n")
    fields = sum(len(model) for model in found.models.values())
    print(
        f"{path}: {len(found.flags)} flags, {len(found.models)} option models ({fields} fields),"
        f" from {found.source}"
    )
    return 0


def _check(args: argparse.Namespace) -> int:
    from pytest_infx.engines.conformance import ParserCheckError
    from pytest_infx.envs.toolenv import InstallError
    from pytest_infx.hardware import unknown_runner
    from pytest_infx.prepare import preflight
    from pytest_infx.recipes.errors import RecipeErrors
    from pytest_infx.usage import EXIT_STATUS, UsageError, existing_folder

    try:
        existing_folder("--recipes", args.recipes, "give the recipe folder")
        existing_folder("--golden", args.golden, "give the golden curve folder")
        unknown = unknown_runner(args.gpu) if args.gpu is not None else None
        if unknown is not None:
            raise UsageError(f"--gpu {args.gpu}: {unknown}")
    except UsageError as exc:
        print(f"infx engine check: error: {exc}", file=sys.stderr)
        return EXIT_STATUS
    try:
        report = preflight.engine_check(
            args.recipes,
            args.golden,
            runner=args.gpu,
            install=not args.no_install,
            cache_dir=args.cache_dir,
        )
    except RecipeErrors as exc:
        print(exc, file=sys.stderr)
        return 2
    except (InstallError, ParserCheckError) as exc:
        print(f"infx engine check: {exc}", file=sys.stderr)
        return 1
    from pytest_infx.engines.conformance import summary

    for line in summary(report):
        print(line)
    for reason in report.unchecked:
        print(f"unchecked: {reason}")
    for rejection in report.rejected:
        print(rejection)
    if not report.runs and not report.unchecked and not report.rejected:
        runner = f" for --gpu {args.gpu}" if args.gpu is not None else ""
        print(
            f"infx engine check: error: no points in {args.recipes}{runner}; give the recipe"
            " folder that holds them" + (", or another runner" if runner else ""),
            file=sys.stderr,
        )
        return EXIT_STATUS
    unchecked = len(report.unchecked)
    stood_in = sum("standing in for the pinned release" in r for r in report.unchecked)
    checked = sum(run.points for run in report.runs) - stood_in
    counts = f"{checked} points checked" + (f", {unchecked} unchecked" if unchecked else "")
    if report.rejected:
        print(f"{len(report.rejected)} server commands rejected ({counts})")
        return 1
    print(f"every checked server command accepted ({counts})")
    return 0
