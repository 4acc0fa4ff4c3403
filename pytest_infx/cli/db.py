"""``infx db`` (ingest, promote, items, dashboard, serve) and ``infx trend``: the results
history from the shell.

Every command takes ``--db URL`` (else ``$INFX_DB_URL``, else the SQLite file a run writes in
``infx-results/``), so the same commands read a laptop's history and a team's PostgreSQL.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.extras import require
from pytest_infx.settings import DEFAULT_RESULTS_DIR, HISTORY_DB_NAME, default_db_url, environment
from pytest_infx.usage import UsageError

if TYPE_CHECKING:
    from datetime import datetime

    from pytest_infx.history.store import Store

DEFAULT_PORT = 8765
DEFAULT_DASHBOARD = Path(DEFAULT_RESULTS_DIR) / "history.html"
"""In the results folder, which a project already ignores, rather than in the working directory."""


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        default=None,
        help="history database (default: $INFX_DB_URL, else "
        f"sqlite:///{DEFAULT_RESULTS_DIR}/{HISTORY_DB_NAME})",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = subparsers.add_parser(
        "db", help="the results history: ingest, promote, items, dashboard, serve"
    )
    actions = db.add_subparsers(dest="db_command", required=True)
    ingest = actions.add_parser(
        "ingest",
        help="store result files: our results folders, InferenceX's agg_*.json, agg_bmk.json "
        "and AgentX aggregates",
    )
    ingest.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="result files or folders to read"
    )
    _add_db(ingest)
    ingest.add_argument("--run-id", default=None, help="the run the rows belong to")
    ingest.add_argument("--attempt", type=int, default=1, help="the run's attempt (default 1)")
    ingest.add_argument("--branch", default="unknown", help="the run's branch")
    ingest.add_argument("--commit", default="", help="the run's commit")
    ingest.set_defaults(func=_ingest)
    promote = actions.add_parser(
        "promote",
        help="make a validated run's points a branch's results (a PR sweep as main's), with "
        "who promoted it and from which run",
    )
    promote.add_argument("run", metavar="RUN", help="the run id whose points to promote")
    promote.add_argument("--to", required=True, metavar="BRANCH", help="the branch to give them")
    promote.add_argument(
        "--by", default=None, help="who promotes (default: $GITHUB_ACTOR, else the user name)"
    )
    _add_db(promote)
    promote.set_defaults(func=_promote)
    items = actions.add_parser("items", help="the stored points, the keys infx trend takes")
    _add_db(items)
    items.set_defaults(func=_items)
    dashboard = actions.add_parser("dashboard", help="write the history as one HTML page")
    _add_db(dashboard)
    dashboard.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_DASHBOARD,
        help=f"the page (default {DEFAULT_DASHBOARD}, beside the history a run writes)",
    )
    dashboard.add_argument("--since", default=None, help="only runs since (30d, 2026-11-01)")
    _add_runs(dashboard)
    dashboard.set_defaults(func=_dashboard)
    serve = actions.add_parser("serve", help="serve the dashboard, drawn anew on every request")
    _add_db(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to listen on ({DEFAULT_PORT})"
    )
    serve.add_argument("--since", default=None, help="only runs since (30d, 2026-11-01)")
    _add_runs(serve)
    serve.set_defaults(func=_serve)

    trend = subparsers.add_parser(
        "trend", help="one point's metric over runs: a table, a PNG, and any slow drift"
    )
    trend.add_argument("key", metavar="KEY", help="a point id (infx db items lists them)")
    _add_db(trend)
    trend.add_argument("--metric", default=None, help="default: tput_per_gpu, else the first kept")
    trend.add_argument("--since", default=None, help="only runs since (30d, 12h, 2026-11-01)")
    trend.add_argument("--branch", default=None, help="only runs of this branch")
    trend.add_argument("--png", type=Path, default=None, help="the picture (default: KEY.png)")
    trend.set_defaults(func=_trend)


def url_of(given: str | None) -> str:
    return given or environment().db_url or default_db_url(Path(DEFAULT_RESULTS_DIR))


def open_store(given: str | None, *, create: bool = False) -> Store:
    """The store; reading a SQLite history that does not exist is an error, not a new file."""
    require("sqlalchemy", "alembic", purpose="the results history")
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from pytest_infx.history.store import Store, StoreError

    url = url_of(given)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UsageError(
            f"--db {url!r} is not a database URL; give one such as sqlite:///history.db or "
            "postgresql+psycopg://user@host/db"
        ) from None
    database = parsed.database
    if parsed.get_backend_name() == "sqlite" and database and not create:
        if not Path(database).is_file():
            raise UsageError(
                f"no history database at {database}: a pytest-infx run writes it, or give "
                "--db (or $INFX_DB_URL)"
            )
    try:
        return Store.open(url)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def _ingest(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from pytest_infx.history.ingest import default_stamp, files, ingest
    from pytest_infx.kinds import KINDS

    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    found = list(files(args.paths))
    if not found:
        shown = ", ".join(str(path) for path in args.paths)
        raise UsageError(
            f"no JSON result file in {shown}; give a results folder, an agg_*.json or an AgentX"
            " aggregate"
        )
    stamp = default_stamp(args.paths, found, branch=args.branch, commit=args.commit)
    if args.run_id:
        stamp = replace(stamp, run_id=args.run_id, attempt=args.attempt)
    with open_store(args.db, create=True) as store:
        tally = ingest(store, found, stamp, KINDS)
    print(f"run {stamp.run_id} (attempt {stamp.attempt}, branch {stamp.branch}):")
    for line in tally.lines():
        print(line)
    return 1 if tally.skipped or tally.refused else 0


def _promote(args: argparse.Namespace) -> int:
    import getpass

    from pytest_infx.history.store import StoreError

    if not args.to.strip():
        raise UsageError("--to: give the branch the run's points become results of")
    by = args.by or environment().github.get("GITHUB_ACTOR") or getpass.getuser()
    with open_store(args.db) as store:
        try:
            stamp, count = store.promote(args.run, args.to, by=by)
        except StoreError as exc:
            raise UsageError(str(exc)) from None
    print(f"promoted {count} point(s) of run {args.run} to {args.to} as run {stamp.run_id} by {by}")
    return 0


def _items(args: argparse.Namespace) -> int:
    with open_store(args.db) as store:
        for item in store.items():
            print(item)
    return 0


def _since(text: str | None) -> datetime | None:
    from pytest_infx.history.trend import since

    if text is None:
        return None
    try:
        return since(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OverflowError:
        raise UsageError(
            f"--since {text!r}: reaches before the first year; give a shorter span or a date"
        ) from None


def _add_runs(parser: argparse.ArgumentParser) -> None:
    from pytest_infx.history.dashboard import DEFAULT_LATEST

    parser.add_argument(
        "--runs",
        type=_run_count,
        default=DEFAULT_LATEST,
        metavar="N",
        help=f"the latest N runs of each branch (default {DEFAULT_LATEST}; 0 for every run)",
    )


def _run_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of runs: give 0 or more")
    return count


def _page(args: argparse.Namespace) -> str:
    """The page of every stored row, failed ones too: the page shows each point's verdict."""
    from pytest_infx.history.dashboard import page

    moment = _since(args.since)
    with open_store(args.db) as store:
        rows = [row for item in store.items() for row in store.series(item, since=moment)]
    rows.sort(key=lambda row: (row.started, row.attempt))
    return page(rows, source=shown_url(url_of(args.db)), latest=args.runs)


def shown_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _dashboard(args: argparse.Namespace) -> int:
    from pytest_infx.files.atomic import atomic_write_text
    from pytest_infx.usage import writable_file

    writable_file("--out", args.out)
    atomic_write_text(args.out, _page(args))
    print(f"wrote {args.out}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: not a port; give 1 to 65535, or 0 for a free one")
    _page(args)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path not in ("/", "/index.html"):
                self.send_error(404)
                return
            try:
                body = _page(args).encode("utf-8")
            except UsageError as exc:
                self.send_error(503, str(exc))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *values: object) -> None:
            return

    try:
        server = ThreadingHTTPServer((args.host, args.port), Handler)
    except OSError as exc:
        raise UsageError(
            f"--host {args.host} --port {args.port}: {exc.strerror or exc}; give another port,"
            " or an address of this machine"
        ) from None
    print(f"serving the history dashboard on http://{args.host}:{server.server_port}/", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def _trend(args: argparse.Namespace) -> int:
    from pytest_infx.files.atomic import atomic_write_bytes
    from pytest_infx.history.trend import trend
    from pytest_infx.report import plots
    from pytest_infx.usage import writable_file

    with open_store(args.db) as store:
        rows = store.series(args.key, since=_since(args.since), branch=args.branch)
    if not rows:
        raise UsageError(
            f"no stored point {args.key!r}"
            + (" in that span" if args.since else "")
            + "; infx db items lists the stored points"
        )
    try:
        found = trend(args.key, rows, args.metric)
    except (KeyError, ValueError) as exc:
        raise UsageError(str(exc.args[0])) from None
    if not found.rows:
        raise UsageError(f"{args.key}: no stored run has {found.metric}")
    for line in found.lines():
        print(line)
    target = args.png or Path(re.sub(r"[^A-Za-z0-9._-]+", "_", args.key).strip("_") + ".png")
    writable_file("--png", target)
    missing = plots.missing_reason()
    if missing is not None:
        print(f"no picture: {missing}", file=sys.stderr)
        return 0
    atomic_write_bytes(target, plots.trend_png(found))
    print(f"wrote {target}")
    return 0
