from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_infx.launch import ports, process
from pytest_infx.launch.ports import PortChoice, choose_port
from pytest_infx.launch.procfs import group_members, is_alive
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.spec import ServerSpec

from .conftest import read_records, wait_until

MakeSpec = Callable[..., ServerSpec]


def _post_chat(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    try:
        conn.request("POST", "/v1/chat/completions", body=body)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    except OSError:
        return -1
    finally:
        conn.close()


def test_slow_start_becomes_ready(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    spec = make_spec("--start-delay", "1.0")
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    try:
        assert server.ready_after_s is not None and server.ready_after_s >= 1.0
        assert process.probe("127.0.0.1", server.port, "/health", timeout=2) == 200
        assert _post_chat(server.port) == 200
        assert [e.pgid for e in registry.entries()] == [server.pgid]
        engine = int(read_records(records)[0]["pid"])  # type: ignore[call-overload]
        assert os.getpgid(engine) == server.pgid
    finally:
        server.stop()
    assert not group_members(server.pgid)
    assert server.popen is not None and server.popen.returncode is not None


def test_health_503_while_starting_is_not_ready(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path
) -> None:
    spec = make_spec("--health-503-while-starting", "--start-delay", "1.0")
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    try:
        assert server.ready_after_s is not None and server.ready_after_s >= 1.0
        assert '"GET /health HTTP/1.1" 503' in server.log_path.read_text()
    finally:
        server.stop()


def test_die_during_startup_reports_exit_code_and_log_tail(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path
) -> None:
    spec = make_spec("--die-during-startup", "--start-delay", "0.2", ready_timeout_s=30)
    with pytest.raises(process.ServerStartError) as info:
        process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    message = str(info.value)
    assert "was not ready after" not in message, "an exit must end the wait before the deadline"
    assert "exited with code 3 during start-up" in message
    assert "simulated start-up failure (CUDA out of memory)" in message
    assert "server.py --port" in message
    assert str(tmp_path / "s.log") in message


def test_never_ready_times_out_with_log_tail_and_is_stopped(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    spec = make_spec("--never-ready", ready_timeout_s=1.5)
    with pytest.raises(process.ServerStartError) as info:
        process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    message = str(info.value)
    assert "was not ready after 1.5 s (/health last answer HTTP 503)" in message
    assert "listening at" in message
    pid = int(read_records(records)[0]["pid"])  # type: ignore[call-overload]
    assert not is_alive(pid)


def test_crash_mid_run_is_detected(make_spec: MakeSpec, registry: Registry, tmp_path: Path) -> None:
    spec = make_spec("--crash-after-requests", "2")
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    try:
        server.ensure_alive()
        assert [_post_chat(server.port) for _ in range(2)] == [200, 200]
        assert _post_chat(server.port) == -1
        assert wait_until(lambda: server.returncode() is not None)
        with pytest.raises(process.ServerDiedError) as info:
            server.ensure_alive()
        assert "exited with code 7 while in use" in str(info.value)
        assert "simulated crash after 2 requests" in str(info.value)
    finally:
        server.stop()


def test_ignored_sigterm_gets_sigkill_after_grace(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    spec = make_spec("--ignore-sigterm", "--spawn-child")
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=1)
    rec = read_records(records)[0]
    engine, child = int(rec["pid"]), int(rec["child"])  # type: ignore[call-overload]
    assert is_alive(engine) and is_alive(child)
    started = time.monotonic()
    server.stop()
    took = time.monotonic() - started
    assert took >= 1.0, "SIGKILL came before the grace period ended"
    assert not is_alive(engine) and not is_alive(child)
    assert "sending SIGKILL" in server.log_path.read_text()


def test_grandchild_is_killed_with_the_group(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    spec = make_spec("--spawn-child")
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    child = int(read_records(records)[0]["child"])  # type: ignore[call-overload]
    assert os.getpgid(child) == server.pgid
    server.stop()
    assert not is_alive(child)


def test_grandchild_dies_when_the_engine_exits_on_its_own(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    spec = make_spec("--spawn-child", "--crash-after-requests", "0")
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    child = int(read_records(records)[0]["child"])  # type: ignore[call-overload]
    _post_chat(server.port)
    assert wait_until(lambda: server.returncode() is not None)
    assert server.returncode() == 7
    assert wait_until(lambda: not is_alive(child))


def test_port_lost_between_choice_and_bind_is_retried_once(
    make_spec: MakeSpec,
    registry: Registry,
    tmp_path: Path,
    records: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    real = choose_port
    calls: list[set[int]] = []

    def racy(host: str, preferred: int, *, exclude: set[int], claims: Path) -> PortChoice:
        calls.append(set(exclude))
        if not exclude:
            return PortChoice(port=taken, preferred=preferred)
        return real(host, preferred, exclude=exclude, claims=claims)

    monkeypatch.setattr(process, "choose_port", racy)
    spec = make_spec()
    try:
        with pytest.warns(process.ServerRetryWarning) as retries:
            server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry)
    finally:
        holder.close()
    try:
        (retry,) = retries
        assert f"its start on port {taken} failed because another process took the port" in str(
            retry.message
        )
        assert f"(log: {tmp_path / 's.log'})" in str(retry.message)
        assert calls == [set(), {taken}]
        assert server.port != taken
        assert "Address already in use" in (tmp_path / "s.log").read_text()
        assert server.log_path == tmp_path / "s.retry.log"
        assert [r["port"] for r in read_records(records)] == [taken, server.port]
    finally:
        server.stop()


def test_sigterm_reaches_the_engine_once(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path
) -> None:
    spec = make_spec()
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry)
    server.stop()
    text = server.log_path.read_text()
    assert text.count("SIGTERM, exiting") == 1
    assert server.popen is not None and server.popen.returncode == 0


def test_a_foreign_server_on_the_chosen_port_is_not_taken_for_ours(
    make_spec: MakeSpec,
    registry: Registry,
    tmp_path: Path,
    records: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import http.server
    import threading

    class Healthy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    intruder = http.server.HTTPServer(("127.0.0.1", 0), Healthy)
    taken = intruder.server_address[1]
    threading.Thread(target=intruder.serve_forever, daemon=True).start()
    real = choose_port

    def racy(host: str, preferred: int, *, exclude: set[int], claims: Path) -> PortChoice:
        if not exclude:
            return PortChoice(port=taken, preferred=preferred)
        return real(host, preferred, exclude=exclude, claims=claims)

    monkeypatch.setattr(process, "choose_port", racy)
    spec = make_spec("--start-delay", "1")
    try:
        with pytest.warns(process.ServerRetryWarning, match=f"on port {taken} failed"):
            server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry)
    finally:
        intruder.shutdown()
        intruder.server_close()
    try:
        assert server.port != taken
        assert [r["port"] for r in read_records(records)][-1] == server.port
    finally:
        server.stop()


def _one_answer_server(answer: bytes) -> tuple[int, Callable[[], None]]:
    """A listener that writes ``answer`` to each connection and closes it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join()
        sock.close()

    return sock.getsockname()[1], close


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", 200),
        (b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n", 503),
        (b"SSH-2.0-OpenSSH_9.2\r\n", None),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", None),
    ],
)
def test_the_readiness_probe_gives_the_status_or_none_for_what_is_not_a_whole_answer(
    answer: bytes, status: int | None
) -> None:
    port, close = _one_answer_server(answer)
    try:
        assert process.probe("127.0.0.1", port, "/health", timeout=2) == status
    finally:
        close()


def test_the_readiness_probe_gives_none_while_nothing_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert process.probe("127.0.0.1", port, "/health", timeout=1) is None


def test_a_server_s_files_are_written_beside_its_log_before_it_starts(
    records: Path, registry: Registry, tmp_path: Path
) -> None:
    from pytest_infx.launch.ports import free_port

    from .conftest import standin_argv

    spec = ServerSpec(
        key="files",
        label="files",
        argv=standin_argv("--model", "{files}/options.yaml", record=records),
        files={"options.yaml": "speculative_config:\n  decoding_type: MTP\n"},
        ready_timeout_s=15.0,
        preferred_port=free_port("127.0.0.1"),
    )
    server = process.start_server(spec, log_path=tmp_path / "s.log", registry=registry, grace_s=5)
    try:
        written = tmp_path / "s.files" / "options.yaml"
        assert written.read_text() == spec.files["options.yaml"]
        assert str(written) in server.argv
    finally:
        server.stop()


def _unshared_port() -> int:
    """A free port below the kernel's ephemeral range: one from :func:`ports.free_port` can become
    the source port of another test's connection before the test starts on it."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    start = 20000 + os.getpid() % 5000
    return next(p for p in range(start, low) if ports.port_is_free("127.0.0.1", p))


def test_two_starts_at_once_on_one_preferred_port_take_two_ports_without_a_retry(
    make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    """Two servers of two runs (two xdist workers' pytester runs, say) choosing their port
    together: both bind-tests pass before either engine binds, and a vLLM-like server binds
    with SO_REUSEADDR long before it listens, so without a claim both bind the port and the
    second fails only when it listens, after loading its model."""
    port = _unshared_port()
    specs = [
        make_spec(
            "--bind-early", "--start-delay", "1", key=f"s{i}", label=f"s{i}", preferred_port=port
        )
        for i in range(2)
    ]
    started: list[process.RunningServer] = []
    errors: list[BaseException] = []
    ready = threading.Barrier(3)
    done = threading.Event()

    def start(spec: ServerSpec) -> None:
        """Starts a server and lives on until the test is done: the guard dies with the thread
        that started it (PR_SET_PDEATHSIG follows the thread)."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", process.ServerRetryWarning)
                started.append(
                    process.start_server(
                        spec,
                        log_path=tmp_path / f"{spec.key}.log",
                        registry=registry,
                        claims=tmp_path / "claims",
                    )
                )
        except BaseException as exc:
            errors.append(exc)
        ready.wait()
        done.wait()

    threads = [threading.Thread(target=start, args=(spec,)) for spec in specs]
    for thread in threads:
        thread.start()
    ready.wait()
    try:
        assert errors == []
        assert sorted(server.port == port for server in started) == [False, True]
        moved = next(server for server in started if server.port != port)
        assert moved.port_note is not None
        assert moved.port_note.startswith(
            f"port {port} is claimed by another pytest-infx server (started by pid {os.getpid()} "
        )
        assert sorted(int(str(r["port"])) for r in read_records(records)) == sorted(
            s.port for s in started
        )
        for server in started:
            assert process.probe("127.0.0.1", server.port, "/health", timeout=2) == 200
    finally:
        for server in started:
            server.stop()
        done.set()
        for thread in threads:
            thread.join()
