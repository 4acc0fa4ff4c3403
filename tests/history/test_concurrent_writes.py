"""Two xdist workers write 200 points each into one history at the same time, as a sweep's
workers do: no row is lost, on SQLite (WAL, the write lock queued) and on PostgreSQL, and both
workers' migrations of a new database end in one schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.history.store import Store

WRITES = 200
INNER = f"""
import os

import pytest

from pytest_infx.history.store import Store
from history.samples import row, stamp


@pytest.mark.parametrize("worker", ["a", "b"])
def test_write(worker):
    store = Store.open(os.environ["INFX_TEST_DB"])
    try:
        run = store.add_run(stamp("shared"))
        for conc in range(1, {WRITES} + 1):
            point = row(float(conc), conc=conc, cell=worker, item=f"{{worker}}[c{{conc}}]")
            assert store.put(run, point) == "added"
    finally:
        store.close()
"""


def test_two_workers_lose_no_row(
    db_url: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFX_TEST_DB", db_url)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1]))
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "-q")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=2)
    store = Store.open(db_url)
    try:
        assert store.count() == 2 * WRITES
        assert len(store.items()) == 2 * WRITES
    finally:
        store.close()
