from __future__ import annotations

from collections.abc import Iterator

import pytest

from history.postgres import Server, start


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
