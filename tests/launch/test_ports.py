from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_infx.launch import ports, process
from pytest_infx.launch.procfs import cmdline
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
    proc.stdout.close()


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


def test_a_claimed_port_is_refused_naming_its_claimant_until_the_claim_is_closed(
    tmp_path: Path,
) -> None:
    port = ports.free_port("127.0.0.1")
    fd, claimant = ports.claim_port(tmp_path, port)
    assert fd is not None and claimant is None
    again, holder = ports.claim_port(tmp_path, port)
    assert again is None
    assert holder is not None and holder.pid == os.getpid()
    os.close(fd)
    fd, claimant = ports.claim_port(tmp_path, port)
    assert fd is not None and claimant is None
    os.close(fd)


def test_a_claim_lasts_while_a_process_that_inherited_it_lives(tmp_path: Path) -> None:
    port = ports.free_port("127.0.0.1")
    fd, _ = ports.claim_port(tmp_path, port)
    assert fd is not None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], pass_fds=(fd,))
    os.close(fd)
    try:
        assert ports.claim_port(tmp_path, port)[0] is None
    finally:
        child.kill()
        child.wait()
    fd, claimant = ports.claim_port(tmp_path, port)
    assert fd is not None and claimant is None
    os.close(fd)


def test_a_claimed_preferred_port_is_passed_over_and_the_choice_comes_claimed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    preferred = ports.free_port("127.0.0.1")
    fd, _ = ports.claim_port(tmp_path, preferred)
    assert fd is not None
    try:
        with caplog.at_level(logging.WARNING, logger="pytest_infx.launch"):
            choice = ports.choose_port("127.0.0.1", preferred, claims=tmp_path)
    finally:
        os.close(fd)
    try:
        assert choice.port != preferred and choice.claim is not None
        assert choice.note == (
            f"port {preferred} is claimed by another pytest-infx server (started by pid "
            f"{os.getpid()} ({cmdline(os.getpid())})); serving on {choice.port} instead"
        )
        assert choice.note in caplog.text
        assert ports.claim_port(tmp_path, choice.port)[1] is not None
    finally:
        choice.release()
    assert ports.claim_port(tmp_path, choice.port)[1] is None


def test_a_port_bound_by_a_server_that_does_not_listen_yet_is_not_free() -> None:
    with socket.socket() as loading:
        loading.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        loading.bind(("127.0.0.1", 0))
        port = loading.getsockname()[1]
        assert not ports.port_is_free("127.0.0.1", port)
        choice = ports.choose_port("127.0.0.1", port)
        assert choice.port != port
        assert choice.note == (
            f"port {port} is held by a socket that is bound but not listening (or gone); "
            f"serving on {choice.port} instead"
        )
    assert ports.port_is_free("127.0.0.1", port)


def test_a_port_in_time_wait_is_free() -> None:
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        conn, _ = server.accept()
        conn.close()
        client.recv(1)
        client.close()
    assert any(state == "06" for state, _ in ports._table_rows(port))
    assert ports.port_is_free("127.0.0.1", port)


SHARER = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
    "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()\n"
    "print('bound', flush=True); time.sleep(120)\n"
)


def test_every_process_listening_on_a_shared_port_is_named() -> None:
    port = ports.free_port("127.0.0.1")
    sharers = [
        subprocess.Popen(
            [sys.executable, "-c", SHARER, str(port)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    try:
        for proc in sharers:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "bound"
        holders = ports.port_holders(port, listening=True)
        assert sorted(h.pid or 0 for h in holders) == sorted(p.pid for p in sharers)
    finally:
        for proc in sharers:
            proc.kill()
            proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


def test_a_claim_whose_pid_is_not_written_yet_is_read_again(tmp_path: Path) -> None:
    port = ports.free_port("127.0.0.1")
    fd, _ = ports.claim_port(tmp_path, port)
    assert fd is not None
    os.ftruncate(fd, 0)
    late = threading.Timer(0.2, lambda: os.pwrite(fd, str(os.getpid()).encode(), 0))
    late.start()
    try:
        _, claimant = ports.claim_port(tmp_path, port)
    finally:
        late.join()
        os.close(fd)
    assert claimant is not None and claimant.pid == os.getpid()
