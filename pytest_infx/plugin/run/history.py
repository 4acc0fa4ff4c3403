"""The results history on the pytest side: the run's identity, each finished point written to
the store as its result file is, and the baseline gate.

The controller names the run once and hands the name to every worker (xdist and Slurm alike)
in ``workerinput``, so all of a sweep's points land in one run. Each process opens the store
itself, on first use: a SQLite file in WAL mode or a PostgreSQL server take writers from many
processes, and a point committed is kept even if the run is killed the next moment.
"""

from __future__ import annotations

import functools
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import pytest

from pytest_infx.extras import MissingExtra, require
from pytest_infx.plugin.state import RunState

if TYPE_CHECKING:
    from pytest_infx.baseline_tolerance import MetricTolerance
    from pytest_infx.history.gate import BaselineVerdict
    from pytest_infx.history.store import RunStamp, Store
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.kind import Kinds
    from pytest_infx.results.records import Record
    from pytest_infx.settings import Settings

RUN_INPUT: Final = "infx_history_run"


def new_stamp(settings: Settings) -> dict[str, object]:
    """The run's identity as plain values (they cross xdist's wire): GitHub's run id and
    attempt on Actions, else a fresh id; the branch and commit from the option, Actions or
    Git."""
    from importlib.metadata import PackageNotFoundError, version

    from pytest_infx.files.git import head

    github = settings.env.github
    started = datetime.now(UTC)
    run_id = github.get("GITHUB_RUN_ID") or (
        f"local-{started:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    )
    attempt = github.get("GITHUB_RUN_ATTEMPT", "1")
    branch, commit = "", ""
    if settings.history.branch is None or not github.get("GITHUB_SHA"):
        branch, commit = head(settings.rootdir)
    branch = (
        settings.history.branch
        or github.get("GITHUB_HEAD_REF")
        or github.get("GITHUB_REF_NAME")
        or branch
        or "unknown"
    )
    try:
        plugin = version("pytest-infx")
    except PackageNotFoundError:
        plugin = "unknown"
    return {
        "run_id": run_id,
        "attempt": int(attempt) if attempt.isdigit() else 1,
        "branch": branch,
        "commit": github.get("GITHUB_SHA") or commit,
        "started": started.isoformat(),
        "machine": settings.env.runner_name or socket.gethostname(),
        "plugin_version": plugin,
    }


def stamp(config: pytest.Config, settings: Settings) -> dict[str, object]:
    """This run's identity: the controller's on a worker, made once elsewhere."""
    workerinput: dict[str, object] = getattr(config, "workerinput", {})
    given = workerinput.get(RUN_INPUT)
    if isinstance(given, dict):
        return given
    state = RunState.of(config)
    if state.history_run is None:
        state.history_run = new_stamp(settings)
    return state.history_run


def send_stamp(config: pytest.Config, workerinput: dict[str, object]) -> None:
    import pytest_infx.plugin.options as options

    found = options.settings(config)
    if found.history.url is not None:
        workerinput[RUN_INPUT] = stamp(config, found)


@dataclass
class History:
    """One process's view of the history: the store, opened on first use, and the run's row."""

    settings: Settings
    run_stamp: dict[str, object]
    run_kinds: Callable[[], Kinds]
    """The run's kinds, which a row is made by; asked only when one is, since the built-in
    kinds import the recipe schema, which a cached collection never loads."""
    _store: Store | None = None
    _run: int | None = None

    @property
    def on(self) -> bool:
        return self.settings.history.url is not None

    def store(self) -> tuple[Store, int]:
        """The open store and the run's row; a store that cannot be opened fails the item
        (its result file is already written)."""
        __tracebackhide__ = True
        try:
            require("sqlalchemy", "alembic", purpose="the results history")
        except MissingExtra as exc:
            pytest.fail(f"results history: {exc}", pytrace=False)
        from sqlalchemy.exc import SQLAlchemyError

        from pytest_infx.history.store import Store, StoreError

        if self._store is None or self._run is None:
            url = self.settings.history.url
            assert url is not None
            try:
                self._store = Store.open(url)
                self._run = self._store.add_run(run_stamp(self.run_stamp))
            except (StoreError, SQLAlchemyError) as exc:
                pytest.fail(f"results history: {exc}", pytrace=False)
        return self._store, self._run

    def put(
        self, record: Record, gate: BaselineVerdict | None = None, problems: Sequence[str] = ()
    ) -> None:
        """Store one finished point with its final verdict, when the history is on: a point
        that passed its own checks but failed the baseline ``gate``, or has ``problems`` its
        record does not hold, is stored as failed with why, so it never becomes a baseline."""
        if self.on:
            from dataclasses import replace

            from pytest_infx.history.rows import row_of
            from pytest_infx.results.verdict import Verdict as Word

            store, run = self.store()
            row = row_of(record, self.run_kinds())
            if problems:
                reason = "; ".join([*filter(None, [row.reason]), *problems])
                row = replace(row, status=Word.FAIL, reason=reason)
            elif gate is not None and not gate.passed:
                row = replace(row, status=Word.FAIL, reason=gate.message())
            store.put(run, row)

    def put_missing(self, record: Record, gate: BaselineVerdict | None = None) -> None:
        """Store a reused point that no run stored (one whose run was killed between writing
        its result file and its row, so the resumed run keeps every finished point), and a
        reused point the gate fails now, as this run's failed row."""
        if not self.on:
            return
        if (gate is not None and not gate.passed) or not self.store()[0].has_item(record.id):
            self.put(record, gate)

    def judge(self, record: Record, point: Point) -> BaselineVerdict | None:
        """The point against the baseline the run names; None without ``--infx-baseline``
        or for a point that failed (its figures are no measurement to judge)."""
        baseline = self.settings.history.baseline
        if baseline is None or not self.on or not record.passed or record.config is None:
            return None
        from pytest_infx.baseline_tolerance import merged, tolerances
        from pytest_infx.history.gate import compare
        from pytest_infx.history.rows import row_of

        store, run = self.store()
        row = row_of(record, self.run_kinds())
        limits = merged(
            self._run_limits,
            tolerances(
                (f"{k}: {v}" for k, v in point.recipe.tolerance.items()),
                source=f"{point.path}: tolerance",
            ),
        )
        history = self.settings.history
        by_branch = self._baseline_is_branch
        earlier = store.history(
            row,
            branch=baseline if by_branch else None,
            run_id=None if by_branch else baseline,
            exclude_run=run,
        )
        latest = earlier[-1] if earlier else None
        return compare(
            record.id,
            row.metrics,
            latest.metrics if latest else None,
            limits,
            baseline_run=latest.run_label if latest else None,
            history=[found.metrics for found in earlier],
            k=history.mad_k,
            window=history.window,
        )

    @functools.cached_property
    def _run_limits(self) -> tuple[MetricTolerance, ...]:
        """The defaults under the ini's tolerances: the same for every point of the run."""
        from pytest_infx.baseline_tolerance import DEFAULT_TOLERANCES, merged, tolerances

        return merged(
            tolerances(DEFAULT_TOLERANCES, source="the default tolerances"),
            tolerances(self.settings.history.tolerances, source="ini infx_baseline_tolerance"),
        )

    @functools.cached_property
    def _baseline_is_branch(self) -> bool:
        """``--infx-baseline`` names a run when the history holds a run of that id, else a
        branch; asked once a run."""
        baseline = self.settings.history.baseline
        assert baseline is not None
        store, _ = self.store()
        return not store.has_run(baseline)

    def check(self) -> None:
        """Open the database and check its schema, and that ``--infx-baseline`` names a stored
        branch or run, before any point is measured: a URL that cannot work or a mistyped
        baseline is one usage error rather than a failure of every point after it ran."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, SQLAlchemyError

        from pytest_infx.history.store import Store, StoreError

        url = self.settings.history.url
        if url is None:
            return
        try:
            parsed = make_url(url)
        except ArgumentError:
            parsed = None
        backend = None if parsed is None else parsed.get_backend_name()
        if backend is not None and backend not in ("sqlite", "postgresql"):
            raise pytest.UsageError(
                f"history database {url!r}: pytest-infx keeps its history in SQLite or "
                f"PostgreSQL, not {backend}; give sqlite:///PATH or "
                "postgresql+psycopg://user@host/db, or --infx-db off"
            )
        if parsed is not None and backend == "sqlite":
            if parsed.database in (None, "", ":memory:") or "mode=memory" in url:
                raise pytest.UsageError(
                    f"history database {url!r} is in memory, so every point stored would be "
                    "lost when the run ends: give sqlite:///PATH, or --infx-db off"
                )
        try:
            store = Store.open(url)
        except (StoreError, SQLAlchemyError) as exc:
            raise pytest.UsageError(f"results history: {exc}") from None
        try:
            baseline = self.settings.history.baseline
            if baseline is not None:
                store.baseline_kind(baseline)
        except StoreError as exc:
            raise pytest.UsageError(str(exc)) from None
        finally:
            store.close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def run_stamp(values: dict[str, object]) -> RunStamp:
    from pytest_infx.history.store import RunStamp

    return RunStamp(
        run_id=str(values["run_id"]),
        attempt=int(str(values["attempt"])),
        branch=str(values["branch"]),
        commit=str(values["commit"]),
        started=datetime.fromisoformat(str(values["started"])),
        machine=str(values["machine"]),
        plugin_version=str(values["plugin_version"]),
    )
