"""infx: recipes, golden curves, engine environments, lint and reports from the shell.

Each area of the plugin owns its sub-commands: each module :func:`build_parser` names exposes
``register(subparsers)``, which adds its parser and sets ``func`` (taking the parsed namespace and
returning an exit status). The modules import what is heavy inside their commands, so that
``infx --help`` stays fast and an area pays for its imports only when its command runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    from pytest_infx.cli import cache, compare, db, engine, golden, importer, recipes
    from pytest_infx.lint import cli as lint_cli
    from pytest_infx.prepare import precision
    from pytest_infx.report import cli as report_cli

    parser = argparse.ArgumentParser(prog="infx", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for module in (
        recipes,
        engine,
        cache,
        golden,
        lint_cli,
        compare,
        importer,
        precision,
        report_cli,
        db,
    ):
        module.register(subparsers)
    return parser


EXIT_PIPE = 128 + signal.SIGPIPE
EXIT_INTERRUPTED = 128 + signal.SIGINT


def main(argv: Sequence[str] | None = None) -> int:
    """A closed pipe (``infx recipes | head``) and Ctrl-C end a command quietly with the
    shell's status for them, as git and ripgrep do, instead of a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from pytest_infx.usage import EXIT_STATUS, UsageError

    try:
        status: int = args.func(args)
        sys.stdout.flush()
    except UsageError as exc:
        print(f"infx {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_STATUS
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:
        print(f"infx {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return status


def _silence_stdout() -> None:
    """Python flushes stdout once more at exit, which would raise again into the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
