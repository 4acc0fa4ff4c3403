from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import sqlalchemy.dialects.postgresql.psycopg
from core.helpers import agentic, speedbench, write
from history.postgres import Server, start

DRIVERS = (psycopg, sqlalchemy.dialects.postgresql.psycopg)
"""Imported before any pytester test snapshots ``sys.modules``: a driver first imported inside
one is dropped after it, and the next import makes classes that SQLAlchemy's error mapping does
not know (a refused connection then surfaces as psycopg's own error, not SQLAlchemy's)."""

INI = """
[pytest]
infx = true
addopts = -p no:cacheprovider
filterwarnings = ignore:Module already imported:pytest.PytestAssertRewriteWarning
"""
XDIST_WORKER_VARS = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def pytest_configure(config: pytest.Config) -> None:
    """A shell without job control starts a background command with SIGINT ignored, and every
    pytest run a test interrupts would inherit that and never see its Ctrl-C."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def inner_runs_are_not_xdist_workers(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pytest run a test starts inherits the environment, and under ``-n`` that holds the
    outer worker's name, which the plugin reads to tell a worker from the main process: a
    one-process inner run would tag its progress lines and results ``[gw1]``."""
    if "pytester" in request.fixturenames:
        for name in XDIST_WORKER_VARS:
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def recipes(pytester: pytest.Pytester) -> Path:
    """An empty ``recipes/`` folder in a pytester dir that is its own rootdir."""
    pytester.makeini(INI)
    folder = pytester.path / "recipes"
    folder.mkdir()
    return folder


@pytest.fixture
def mixed_tree(recipes: Path) -> Path:
    """Three runners, both kinds: b300 speedbench (4), b200 speedbench (2) and agentic (8),
    cpu speedbench (2)."""
    write(recipes / "a-b300.yaml", speedbench("a-b300", draft_lengths=(3, 1)))
    write(recipes / "b200" / "sb.yaml", speedbench("b-b200", runner="b200", draft_lengths=[2]))
    write(recipes / "b200" / "agentic.yaml", agentic("b-b200-agentic", runner="b200"))
    write(recipes / "c-cpu.yaml", speedbench("c-cpu", runner="cpu", draft_lengths=[1]))
    return recipes


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    yield from start()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.engine)])
def db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh, empty database on each back end: SQLite in a temporary folder, and a database
    of its own on a real PostgreSQL server (marked ``engine``: it installs the server on first
    use)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('history') / 'history.db'}"
    server: Server = request.getfixturevalue("postgres_server")
    return server.new_database()
