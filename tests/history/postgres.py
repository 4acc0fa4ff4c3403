"""A real PostgreSQL server for the history's tests: Debian's package, a throw-away cluster
started on a free loopback port, one fresh database per test."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from history.debian import ensure
from pytest_infx.launch.ports import free_port

PACKAGE = "postgresql"
SERVER = "/usr/lib/postgresql/*/bin/postgres"
USER = "postgres"


@dataclass(frozen=True)
class Server:
    host: str
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{USER}@{self.host}:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host=self.host, port=self.port, user=USER, dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _as_owner(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, its commands run as the package's user."""
    return ["runuser", "-u", USER, "--", *argv] if os.geteuid() == 0 else argv


def start() -> Iterator[Server]:
    server = ensure(PACKAGE, SERVER)
    bin_dir = server.parent
    folder = Path(tempfile.mkdtemp(prefix="infx-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        owner = pwd.getpwnam(USER)
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    subprocess.run(
        _as_owner(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
    )
    port = free_port("127.0.0.1")
    log = open(folder / "server.log", "wb")
    process = subprocess.Popen(
        _as_owner(
            [
                str(server),
                "-D",
                str(data),
                "-p",
                str(port),
                "-k",
                str(folder),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ]
        ),
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run(
                [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                capture_output=True,
                check=False,
            )
            if ready.returncode == 0:
                break
            assert process.poll() is None, (folder / "server.log").read_text()
            assert time.monotonic() < deadline, "PostgreSQL did not start in 60 s"
            time.sleep(0.2)
        yield Server("127.0.0.1", port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
