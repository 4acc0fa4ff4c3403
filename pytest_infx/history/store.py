"""The history database: opened and migrated in one step, written one point at a time, read
for baselines, trends and the dashboard.

SQLAlchemy Core, not an ORM: the rows are plain values (the records already are the typed
objects), and Core's dialects give the two things this needs from each server, an upsert and a
lock, with one set of queries. SQLite runs in WAL mode with every transaction ``BEGIN
IMMEDIATE``: xdist and Slurm workers then queue for the write lock (busy timeout) instead of
failing when a reader's snapshot goes stale. On PostgreSQL the migration runs under an advisory
lock so that workers opening one database at once migrate it once.
"""

from __future__ import annotations

import dataclasses
import difflib
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, Engine, create_engine, event, func, select
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from pytest_infx.history.metrics import Metrics
from pytest_infx.history.schema import CONFIG_KEY, configs, points, runs
from pytest_infx.results.verdict import Verdict

if TYPE_CHECKING:
    from sqlalchemy.engine import RowMapping

    from pytest_infx.results.identity import ConfigIdentity

MIGRATIONS: Final = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS: Final = 60_000
_PG_LOCK: Final = 0x1F_1A_F0
"""The advisory lock key the migration holds on PostgreSQL (any constant; ours alone)."""


class StoreError(RuntimeError):
    """The database cannot be used: its URL, its server, or a schema this version cannot
    read; the message says which and what to do."""


@dataclass(frozen=True)
class RunStamp:
    """One run of the plugin (or one InferenceX workflow run an ingest reads): a GitHub run id
    and attempt on CI, a generated id elsewhere."""

    run_id: str
    attempt: int
    branch: str
    commit: str
    started: datetime
    machine: str
    plugin_version: str


@dataclass(frozen=True)
class PointRow:
    """One point as the history keeps it; ``status`` is the point's final verdict word (its own
    checks, its golden curve and the baseline gate: a failed point's figures are kept, and
    never become a baseline), ``reason`` why it failed."""

    config: ConfigIdentity
    kind: str
    conc: int
    cell: str
    item: str
    recipe: str
    dataset: str
    status: str
    metrics: Metrics
    golden: str | None = None
    isl: int = 0
    osl: int = 0
    offload_mode: str = "none"
    reason: str = ""

    def key(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "isl": self.isl,
            "osl": self.osl,
            "conc": self.conc,
            "offload_mode": self.offload_mode,
            "cell": self.cell,
        }


@dataclass(frozen=True)
class Stored:
    """A stored point with the run it belongs to."""

    item: str
    status: str
    metrics: Metrics
    run_id: str
    attempt: int
    branch: str
    commit: str
    started: datetime
    config: Mapping[str, object] = field(default_factory=dict)
    kind: str = ""
    conc: int = 0
    cell: str = ""
    reason: str = ""
    isl: int = 0
    osl: int = 0

    @property
    def passed(self) -> bool:
        return self.status == Verdict.PASS

    @property
    def run_label(self) -> str:
        return self.run_id if self.attempt == 1 else f"{self.run_id}#{self.attempt}"


_CONFIG_COLUMNS: Final = (*CONFIG_KEY, "tp", "ep", "dp_attention", "gpus")


def _engine(url: str) -> Engine:
    try:
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        else:
            engine = create_engine(url, pool_pre_ping=True)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise StoreError(
            f"history database {url!r}: {exc}; give a URL such as sqlite:///infx-results/"
            "history.db or postgresql+psycopg://user@host/db"
        ) from None
    except ModuleNotFoundError as exc:
        raise StoreError(
            f"history database {url!r} needs the Python package {exc.name!r}: "
            "pip install 'pytest-infx[postgres]' for PostgreSQL"
        ) from None
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if database and database != ":memory:":
            try:
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"history database {url!r}: cannot make its folder ({exc.strerror}); "
                    "give a writable path or --infx-db off"
                ) from None
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def _migrated(engine: Engine, to: str) -> None:
    """Migrate on a first connection. SQLite's switch of a new file to WAL mode needs the file
    to itself, and a process connecting meanwhile is told "database is locked" at once rather
    than waiting on the busy timeout: opens of a new file by several workers retry until the
    busy timeout has passed."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.02
    while True:
        try:
            with engine.begin() as connection:
                migrate(connection, to=to)
            return
        except OperationalError as exc:
            locked = engine.dialect.name == "sqlite" and "locked" in str(exc.orig)
            if not locked or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def _sqlite_connect(dbapi_connection: Any, _record: object) -> None:
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(MIGRATIONS))
    head = script.get_current_head()
    assert head is not None
    return head


def migrate(connection: Connection, *, to: str = "head") -> None:
    """Bring the database to ``to`` (the newest schema by default); a database whose revision
    this version does not know was written by a newer pytest-infx, and is refused."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_LOCK})")
    current = MigrationContext.configure(connection).get_current_heads()
    script = ScriptDirectory(str(MIGRATIONS))
    known = {revision.revision for revision in script.walk_revisions()}
    unknown = [revision for revision in current if revision not in known]
    if unknown:
        raise StoreError(
            f"the history database is at schema revision {unknown[0]}, which this pytest-infx "
            f"does not know (its newest is {script.get_current_head()}): it was written by a "
            "newer pytest-infx; upgrade pytest-infx, or give another database with --infx-db"
        )
    try:
        command.upgrade(_alembic_config(connection), to)
    except CommandError as exc:
        raise StoreError(f"the history database could not be migrated: {exc}") from None


class Store:
    """An open, migrated history database."""

    def __init__(self, url: str, engine: Engine) -> None:
        self.url = url
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, migrate_to: str = "head") -> Store:
        engine = _engine(url)
        try:
            _migrated(engine, migrate_to)
        except StoreError:
            engine.dispose()
            raise
        except OperationalError as exc:
            engine.dispose()
            reason = " ".join(str(exc.orig if exc.orig is not None else exc).split())
            raise StoreError(
                f"history database {engine.url.render_as_string(hide_password=True)}: "
                f"cannot open it ({reason}); check the URL and that the server is up"
            ) from None
        return cls(url, engine)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def add_run(self, stamp: RunStamp) -> int:
        """The run's row id, adding the run if it is new."""
        with self.engine.begin() as connection:
            return _id_of(connection, runs, ("run_id", "attempt"), dataclasses.asdict(stamp))

    def has_run(self, run_id: str) -> bool:
        """Whether any attempt of run ``run_id`` is stored: a baseline that names one is a
        run, else a branch."""
        with self.engine.connect() as connection:
            found = connection.execute(select(runs.c.id).where(runs.c.run_id == run_id)).first()
        return found is not None

    def names(self) -> tuple[list[str], list[str]]:
        """The branches and the run ids that hold at least one stored point: what a baseline
        may name."""
        with self.engine.connect() as connection:
            return _names(connection)

    def baseline_kind(self, name: str) -> str:
        """``run`` or ``branch``: what ``--infx-baseline NAME`` names, a run id first. A name
        with no stored point is a StoreError naming the close ones, since a mistyped baseline
        would otherwise pass every point as having none."""
        branches, run_ids = self.names()
        if name in run_ids:
            return "run"
        if name in branches:
            return "branch"
        close = difflib.get_close_matches(name, [*branches, *run_ids], n=5, cutoff=0.5)
        hint = (
            f"did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else f"stored branches: {', '.join(branches[:10]) or 'none'}"
        )
        raise StoreError(
            f"--infx-baseline {name!r}: no branch or run of that name has a stored point; "
            f"{hint} (infx db items lists what is stored)"
        )

    def promote(self, run_id: str, branch: str, *, by: str) -> tuple[RunStamp, int]:
        """Copy the points of run ``run_id`` (its latest attempt) into a new run on
        ``branch`` that records where they came from and who moved them, so a validated PR
        sweep becomes the branch's results without measuring it again. A run with a failed
        point is not validated and is refused, naming the point."""
        with self.engine.begin() as connection:
            source = (
                connection.execute(
                    select(runs)
                    .where(runs.c.run_id == run_id)
                    .order_by(runs.c.attempt.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
            if source is None:
                _, run_ids = _names(connection)
                close = difflib.get_close_matches(run_id, run_ids, n=5, cutoff=0.5)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise StoreError(f"no stored run {run_id!r}{hint} (infx db items lists points)")
            rows = connection.execute(select(points).where(points.c.run == source["id"])).all()
            if not rows:
                raise StoreError(f"run {run_id!r} has no stored point to promote")
            failed = [row._mapping for row in rows if row._mapping["status"] != Verdict.PASS]
            if failed:
                first = failed[0]
                raise StoreError(
                    f"run {run_id!r} is not validated: {len(failed)} point(s) failed, first "
                    f"{first['item']} ({first['reason'] or 'failed'}); fix or re-run it first"
                )
            label = run_id if source["attempt"] == 1 else f"{run_id}#{source['attempt']}"
            stamp = RunStamp(
                run_id=f"promoted-{label}-to-{branch}"[:200],
                attempt=1,
                branch=branch,
                commit=str(source["commit"]),
                started=datetime.now(UTC),
                machine=str(source["machine"]),
                plugin_version=str(source["plugin_version"]),
            )
            values = {**dataclasses.asdict(stamp), "promoted_from": label, "promoted_by": by}
            if _find(connection, runs, ("run_id", "attempt"), values) is not None:
                raise StoreError(f"run {label!r} was already promoted to {branch!r}")
            new = _id_of(connection, runs, ("run_id", "attempt"), values)
            for row in rows:
                copied = {k: v for k, v in row._mapping.items() if k not in ("id", "run")}
                copied["written"] = datetime.now(UTC)
                connection.execute(points.insert().values(**copied, run=new))
        return stamp, len(rows)

    def provenance(self, run_id: str) -> tuple[str, str] | None:
        """The run a promoted run was copied from and who promoted it; None for a run that
        was measured."""
        with self.engine.connect() as connection:
            found = connection.execute(
                select(runs.c.promoted_from, runs.c.promoted_by).where(runs.c.run_id == run_id)
            ).first()
        if found is None or found[0] is None:
            return None
        return str(found[0]), str(found[1] or "")

    def put(self, run: int, row: PointRow) -> str:
        """Write one point: ``added``, ``unchanged`` (the same row was there: an ingest run
        twice), ``updated``, or ``kept`` (a failed retry never replaces a passed row)."""
        with self.engine.begin() as connection:
            config = _config_id(connection, row.config)
            key = {"run": run, "config": config, **row.key()}
            values = {
                "item": row.item,
                "recipe": row.recipe,
                "dataset": row.dataset,
                "status": row.status,
                "metrics": dict(row.metrics),
                "golden": row.golden,
                "reason": row.reason,
            }
            where = [points.c[name] == value for name, value in key.items()]
            existing = (
                connection.execute(select(*(points.c[name] for name in values)).where(*where))
                .mappings()
                .first()
            )
            if existing is None:
                inserted = connection.execute(
                    _insert_ignoring(connection, points).values(
                        **key, **values, written=datetime.now(UTC)
                    )
                )
                if inserted.rowcount:
                    return "added"
                existing = (
                    connection.execute(select(*(points.c[name] for name in values)).where(*where))
                    .mappings()
                    .one()
                )
            if all(existing[name] == value for name, value in values.items()):
                return "unchanged"
            if existing["status"] == Verdict.PASS and row.status != Verdict.PASS:
                return "kept"
            connection.execute(
                points.update().where(*where).values(**values, written=datetime.now(UTC))
            )
            return "updated"

    def history(
        self,
        row: PointRow,
        *,
        branch: str | None = None,
        run_id: str | None = None,
        exclude_run: int | None = None,
    ) -> list[Stored]:
        """Every passing row of the same config and point on ``branch`` (or in run ``run_id``),
        other than the run ``exclude_run``, oldest first: the last is the baseline."""
        with self.engine.connect() as connection:
            config = _find_config(connection, row.config)
            if config is None:
                return []
            query = _joined().where(
                points.c.config == config,
                points.c.status == Verdict.PASS,
                *(points.c[name] == value for name, value in row.key().items()),
            )
            if branch is not None:
                query = query.where(runs.c.branch == branch)
            if run_id is not None:
                query = query.where(runs.c.run_id == run_id)
            if exclude_run is not None:
                query = query.where(runs.c.id != exclude_run)
            return _in_run_order(connection, query)

    def series(
        self, item: str, *, since: datetime | None = None, branch: str | None = None
    ) -> list[Stored]:
        """Every row of one item (a point id, or an InferenceX result name), oldest first."""
        with self.engine.connect() as connection:
            query = _joined().where(points.c.item == item)
            if since is not None:
                query = query.where(runs.c.started >= since)
            if branch is not None:
                query = query.where(runs.c.branch == branch)
            return _in_run_order(connection, query)

    def has_item(self, item: str) -> bool:
        """Whether any run stored a row of ``item``."""
        with self.engine.connect() as connection:
            found = connection.execute(select(points.c.id).where(points.c.item == item)).first()
        return found is not None

    def items(self) -> list[str]:
        with self.engine.connect() as connection:
            found = connection.execute(select(points.c.item).distinct().order_by(points.c.item))
            return [str(item) for item in found.scalars()]

    def passing(
        self, *, since: datetime | None = None, items: Collection[str] | None = None
    ) -> list[Stored]:
        """Every passing row (of ``items`` only, when given), oldest run first: what the
        dashboard draws."""
        with self.engine.connect() as connection:
            query = _joined().where(points.c.status == Verdict.PASS)
            if since is not None:
                query = query.where(runs.c.started >= since)
            if items is not None:
                query = query.where(points.c.item.in_(items))
            return _in_run_order(connection, query)

    def points(self, *, since: datetime | None = None) -> list[Stored]:
        """Every row, failed ones included with their reason, oldest run first: the verdicts a
        view shows beside the figures it draws from :meth:`passing`."""
        with self.engine.connect() as connection:
            query = _joined()
            if since is not None:
                query = query.where(runs.c.started >= since)
            return _in_run_order(connection, query)

    def count(self) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(points)).scalar_one())


def _names(connection: Connection) -> tuple[list[str], list[str]]:
    stored = select(runs.c.branch, runs.c.run_id).join(points, points.c.run == runs.c.id)
    found = connection.execute(stored.distinct()).all()
    return sorted({str(b) for b, _ in found}), sorted({str(r) for _, r in found})


def _joined() -> Any:
    return (
        select(
            points.c.item,
            points.c.status,
            points.c.metrics,
            points.c.kind,
            points.c.conc,
            points.c.cell,
            points.c.reason,
            points.c.isl,
            points.c.osl,
            runs.c.run_id,
            runs.c.attempt,
            runs.c.branch,
            runs.c.commit,
            runs.c.started,
            *(configs.c[name] for name in _CONFIG_COLUMNS),
        )
        .join(runs, points.c.run == runs.c.id)
        .join(configs, points.c.config == configs.c.id)
    )


def _in_run_order(connection: Connection, query: Any) -> list[Stored]:
    """The rows a query of ``_joined`` finds, oldest run first."""
    ordered = query.order_by(runs.c.started, runs.c.attempt, points.c.id)
    return [_stored(found) for found in connection.execute(ordered).mappings()]


def _stored(found: RowMapping) -> Stored:
    metrics = found["metrics"]
    started = found["started"]
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    return Stored(
        item=found["item"],
        status=found["status"],
        metrics={str(k): float(v) for k, v in metrics.items()},
        run_id=found["run_id"],
        attempt=found["attempt"],
        branch=found["branch"],
        commit=found["commit"],
        started=started,
        config={name: found[name] for name in _CONFIG_COLUMNS},
        kind=found["kind"],
        conc=found["conc"],
        cell=found["cell"],
        reason=found["reason"] or "",
        isl=found["isl"],
        osl=found["osl"],
    )


def _insert_ignoring(connection: Connection, table: Any) -> Any:
    """An INSERT that does nothing where the natural key already holds a row."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).on_conflict_do_nothing()


def _find(
    connection: Connection, table: Any, key: tuple[str, ...], values: Mapping[str, object]
) -> int | None:
    """The id of the row of ``table`` whose natural ``key`` columns hold ``values``."""
    where = [table.c[name] == values[name] for name in key]
    found = connection.execute(select(table.c.id).where(*where)).scalar()
    return None if found is None else int(found)


def _id_of(
    connection: Connection, table: Any, key: tuple[str, ...], values: Mapping[str, object]
) -> int:
    """The id of that row, adding it first when there is none (a writer that adds it
    meanwhile wins, and its row is found)."""
    found = _find(connection, table, key, values)
    if found is None:
        connection.execute(_insert_ignoring(connection, table).values(**values))
        found = _find(connection, table, key, values)
    assert found is not None
    return found


def _find_config(connection: Connection, config: ConfigIdentity) -> int | None:
    return _find(connection, configs, CONFIG_KEY, config.history_key())


def _config_id(connection: Connection, config: ConfigIdentity) -> int:
    return _id_of(connection, configs, CONFIG_KEY, config.history_key())
