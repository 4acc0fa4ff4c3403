"""The ``infx`` console script.

Each area of the plugin owns its sub-commands: a module listed in ``_COMMANDS`` exposes
``register(subparsers)``, which adds its parser and sets ``func`` (taking the parsed namespace and
returning an exit status). Importing lazily keeps ``infx --help`` fast and lets an area that needs
heavy imports pay for them only when its command runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

_COMMANDS: tuple[str, ...] = (
    "pytest_infx.cli.recipes",
    "pytest_infx.cli.engine",
    "pytest_infx.cli.golden",
    "pytest_infx.lint.cli",
    "pytest_infx.lint.compare",
    "pytest_infx.prepare.precision",
    "pytest_infx.report.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="infx", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in _COMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from pytest_infx.usage import EXIT_STATUS, UsageError

    try:
        status: int = args.func(args)
    except UsageError as exc:
        print(f"infx {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_STATUS
    return status


if __name__ == "__main__":
    sys.exit(main())
