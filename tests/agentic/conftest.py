from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

DATA = Path(__file__).parent / "data"
STANDIN = Path(__file__).parent / "standin.py"
AIPERF_VAR = "INFX_AIPERF"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def standin_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("infx_agentic_standin", STANDIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _aiperf_from_var(value: str) -> Path:
    path = Path(value)
    return path / "bin" / "aiperf" if path.is_dir() else path


@pytest.fixture(scope="session")
def aiperf_path() -> Path:
    """aiperf from $INFX_AIPERF (an executable or a venv), else the isolated env, installed on
    first use (a minute, once): a test that needs aiperf runs, it never skips for want of it."""
    value = os.environ.get(AIPERF_VAR)
    if value:
        path = _aiperf_from_var(value)
        if not path.is_file():
            pytest.fail(f"{AIPERF_VAR}={value}: no aiperf executable there")
        return path
    from pytest_infx.envs.aiperf import ensure_aiperf

    return ensure_aiperf().aiperf


@dataclass
class Standin:
    url: str
    process: subprocess.Popen[str]

    def stop(self) -> str:
        """Stop the server and return its final STATS line."""
        if self.process.poll() is None:
            self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return next((ln for ln in out.splitlines() if ln.startswith("STATS")), "")


@pytest.fixture
def start_standin() -> Iterator[object]:
    started: list[Standin] = []

    def start(fail_fraction: str, *, token_delay: float = 0.001) -> Standin:
        delay = ["--token-delay", str(token_delay)]
        proc = subprocess.Popen(
            [sys.executable, str(STANDIN), "--fail-fraction", fail_fraction, *delay],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("READY "):
            proc.kill()
            pytest.fail(f"stand-in server did not start: {line!r}")
        server = Standin(url=f"http://127.0.0.1:{line.split()[1]}", process=proc)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=10)
