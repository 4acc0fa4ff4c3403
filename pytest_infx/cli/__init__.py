"""infx: recipes, golden curves, engine environments, lint and reports from the shell.

Each area of the plugin owns its sub-commands: each module :func:`build_parser` names exposes
``register(subparsers)``, which adds its parser and sets ``func`` (taking the parsed namespace and
returning an exit status); the namespace's ``environment`` is the process's, read here once. The
modules import what is heavy inside their commands, so that ``infx --help`` stays fast and an
area pays for its imports only when its command runs.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from collections.abc import Sequence

from pytest_infx.settings import environment


def build_parser() -> argparse.ArgumentParser:
    from pytest_infx.cli import cache, compare, db, engine, golden, importer, recipes, scripts
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
        scripts,
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
    args.environment = environment()
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
    except Exception as exc:
        message = expected_error(exc, args)
        if message is None:
            raise
        print(f"infx {args.command}: error: {message}", file=sys.stderr)
        return EXIT_STATUS
    return status


_OS_HINTS = {
    errno.ENAMETOOLONG: "give a shorter path",
    errno.EISDIR: "give a file, not a folder",
    errno.ENOTDIR: "give a path whose folders are folders",
    errno.ELOOP: "remove the symbolic link loop or give another path",
    errno.ENOENT: "give a path that exists",
    errno.EACCES: "give a path you may read and write",
    errno.EPERM: "give a path you may read and write",
    errno.EROFS: "give a path on a writable file system",
    errno.ENOSPC: "free some space",
    errno.EADDRINUSE: "give another --port, or stop what listens there",
    errno.EADDRNOTAVAIL: "give an address of this machine",
}


def expected_error(exc: BaseException, args: argparse.Namespace) -> str | None:
    """The one line for a failure a command can meet on any input (a path the system refuses,
    a history database that is no database or is read-only): the input, what is wrong and what
    to do. ``None`` for anything else, which is a defect and keeps its traceback."""
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else "the system"
        hint = _OS_HINTS.get(exc.errno or 0, "check the path and try again")
        return f"{where}: {exc.strerror or exc}; {hint}"
    database = sys.modules.get("sqlalchemy.exc")
    if database is not None and isinstance(exc, database.SQLAlchemyError):
        from pytest_infx.cli.db import shown_url, url_of

        cause = getattr(exc, "orig", None) or exc
        first = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        url = shown_url(url_of(getattr(args, "db", None)))
        return (
            f"history database {url}: {first}; give a database a pytest-infx run wrote and you"
            " may write to (--db or $INFX_DB_URL)"
        )
    return None


def _silence_stdout() -> None:
    """Python flushes stdout once more at exit, which would raise again into the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
