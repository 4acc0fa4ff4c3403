from __future__ import annotations

import importlib.util
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from pytest_infx.launch.procfs import group_members, is_alive
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.spec import ServerSpec

STANDIN_DIR = Path(__file__).resolve().parents[1] / "standin"
STANDIN = STANDIN_DIR / "server.py"


def load_standin(name: str) -> ModuleType:
    """Import a helper module from tests/standin by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"infx_standin_{name}", STANDIN_DIR / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def standin_argv(*flags: str, record: Path | None = None) -> tuple[str, ...]:
    argv = [sys.executable, str(STANDIN), "--port", "{port}", *flags]
    if record is not None:
        argv += ["--record", str(record)]
    return tuple(argv)


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def read_records(path: Path) -> list[dict[str, object]]:
    import json

    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def all_gone(pids: list[int], pgids: list[int] | None = None) -> bool:
    groups = pgids or []
    return not any(is_alive(p) for p in pids) and not any(group_members(g) for g in groups)


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return Registry(tmp_path / "registry.jsonl")


@pytest.fixture
def records(tmp_path: Path) -> Path:
    return tmp_path / "starts.jsonl"


@pytest.fixture
def make_spec(records: Path) -> Callable[..., ServerSpec]:
    def make(
        *flags: str,
        key: str = "standin",
        label: str = "standin",
        ready_timeout_s: float = 15.0,
        preferred_port: int | None = None,
        gpus: int = 0,
    ) -> ServerSpec:
        return ServerSpec(
            key=key,
            label=label,
            argv=standin_argv(*flags, record=records),
            ready_timeout_s=ready_timeout_s,
            preferred_port=preferred_port if preferred_port is not None else _free_port(),
            gpus=gpus,
        )

    return make


def _free_port() -> int:
    from pytest_infx.launch.ports import free_port

    return free_port("127.0.0.1")


@pytest.fixture(autouse=True)
def leftovers(registry: Registry, records: Path) -> Iterator[None]:
    """After each test: every engine, grandchild and group it started must be gone."""
    yield
    pids: list[int] = []
    for rec in read_records(records):
        pids.append(int(rec["pid"]))  # type: ignore[call-overload]
        if rec.get("child"):
            pids.append(int(rec["child"]))  # type: ignore[call-overload]
    pgids = [e.pgid for e in registry.entries()]
    alive = wait_until(lambda: all_gone(pids, pgids), timeout=10)
    for pgid in pgids:
        if group_members(pgid):
            os.killpg(pgid, signal.SIGKILL)
    assert alive, f"processes left behind: pids {pids}, groups {pgids}"
