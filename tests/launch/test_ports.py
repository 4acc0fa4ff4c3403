from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_infx.launch import ports, process
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.spec import ServerSpec

HOLDER = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()\n"
    "print('bound', flush=True); time.sleep(120)\n"
)


@pytest.fixture
def held_port() -> object:
    port = ports.free_port("127.0.0.1")
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(port), "port-holder-marker"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "bound"
    yield port, proc
    proc.kill()
    proc.wait()


def test_holder_is_named_by_pid_and_command(held_port: tuple[int, subprocess.Popen[str]]) -> None:
    port, proc = held_port
    assert not ports.port_is_free("127.0.0.1", port)
    holder = ports.port_holder(port)
    assert holder is not None
    assert holder.pid == proc.pid
    assert "port-holder-marker" in holder.command


def test_free_port_has_no_holder() -> None:
    port = ports.free_port("127.0.0.1")
    assert ports.port_is_free("127.0.0.1", port)
    assert ports.port_holder(port) is None
    assert ports.choose_port("127.0.0.1", port) == ports.PortChoice(port=port, preferred=port)


def test_taken_preferred_port_falls_back_and_logs_the_holder(
    held_port: tuple[int, subprocess.Popen[str]],
    make_spec: Callable[..., ServerSpec],
    registry: Registry,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    port, proc = held_port
    spec = make_spec(preferred_port=port)
    with caplog.at_level(logging.WARNING, logger="pytest_infx.launch"):
        server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry)
    try:
        assert server.port != port
        expected = f"port {port} is held by pid {proc.pid} ("
        assert server.port_note is not None and server.port_note.startswith(expected)
        assert "port-holder-marker" in server.port_note
        assert server.port_note.endswith(f"serving on {server.port} instead")
        assert server.port_note in caplog.text
        assert process.probe("127.0.0.1", server.port, "/health", timeout=2) == 200
    finally:
        server.stop()
