from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.files.locks import KernelLock, Timeout, kernel_lock
from pytest_infx.launch.gpus import GpuLeaser, Lease, Vendor, wait_clean
from pytest_infx.launch.process import (
    RunningServer,
    ServerDiedError,
    ServerStartError,
    start_server,
    stop_group,
)
from pytest_infx.launch.procfs import is_alive
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.spec import ServerSpec

log = logging.getLogger("pytest_infx.launch")

_KEEP = ("key", "expected", "released")
IDLE_CHECK_S = 2.0
"""How long a start waits for busy GPUs before it stops an idle server to free them."""
CLEAN_WAIT_S = 300.0
"""How long a start waits for its leased GPUs' memory to be freed by whatever held it."""
GpuMemory = Callable[[Vendor, tuple[int, ...]], dict[int, int] | None]


@dataclass(frozen=True)
class ServerHandle:
    """What an item needs to talk to a shared server; `pid` is the group leader (its guard)."""

    key: str
    label: str
    base_url: str
    port: int
    pid: int
    pgid: int
    log_path: Path
    gpu_ids: tuple[int, ...]
    argv: tuple[str, ...]
    generation: int
    start_ticks: int = -1
    port_note: str | None = None


class ServerPool:
    """Servers shared by every process of one pytest run (xdist workers or a single process).

    Per spec key, a JSON state file guarded by a kernel lock holds `{status, port, pid, pgid,
    users, log, generation}`. The first user starts the server while holding the key's lock, so
    one configuration is never started twice at once; later users attach; the last `release`
    stops it. With `expect(key, n)` (the number of collected items that use the key, the same
    on every worker) the server instead lives until n releases, so a worker that runs its items
    of a key early does not stop the server before another worker's later items reach it.
    A start failure is stored, so later items of that key fail at once with the same message
    instead of spending another start-up timeout each. `on_starting(name, log_path)` is told
    when this process launches a server, so a progress display can show its log while it loads.
    `log_path(name, generation)` names each start's log after the server's one name
    (:func:`pytest_infx.launch.spec.server_name`): the results folder's
    layout owns where logs go, and this package cannot import it (results reads recipes, which
    read the hardware this package is below).

    The GPU lease is handed to the server's guard process, so it ends with the server whichever
    process stops it. A server dies with the process that started it (the guard's parent-death
    signal), so `close()` in that process waits until other processes have released it.
    """

    def __init__(
        self,
        state_dir: Path,
        registry: Registry,
        log_path: Callable[[str, int], Path],
        leaser: GpuLeaser | None = None,
        *,
        grace_s: float = 30.0,
        lease_timeout_s: float = 3600.0,
        close_wait_s: float = 3600.0,
        on_starting: Callable[[str, Path], None] | None = None,
        gpu_memory: GpuMemory | None = None,
        clean_wait_s: float = CLEAN_WAIT_S,
        amd_env: Mapping[str, str] | None = None,
    ) -> None:
        """``gpu_memory`` reads the memory in use on leased GPUs (by vendor); with it, a start
        waits up to ``clean_wait_s`` for its GPUs to be clean. ``amd_env`` is what every server
        on AMD GPUs gets where its own environment does not say otherwise (the machine's
        firmware settings)."""
        self.state_dir = Path(state_dir)
        self.registry = registry
        self.log_path = log_path
        self.leaser = leaser
        self.grace_s = grace_s
        self.lease_timeout_s = lease_timeout_s
        self.close_wait_s = close_wait_s
        self.on_starting = on_starting
        self.gpu_memory = gpu_memory
        self.clean_wait_s = clean_wait_s
        self.amd_env = dict(amd_env or {})
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._holds: dict[str, list[int]] = {}
        self._started: dict[str, RunningServer] = {}

    def _paths(self, key: str) -> tuple[Path, Path]:
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        return self.state_dir / f"{digest}.json", self.state_dir / f"{digest}.lock"

    @contextlib.contextmanager
    def _locked(self, key: str, *, blocking: bool = True) -> Iterator[tuple[Path, dict[str, Any]]]:
        """The key's state under its lock; without `blocking`, a busy lock raises Timeout."""
        state_path, lock_path = self._paths(key)
        with kernel_lock(lock_path).acquire(blocking=blocking):
            try:
                state: dict[str, Any] = json.loads(state_path.read_text())
            except FileNotFoundError:
                state = {"key": key, "status": "absent", "generation": 0, "users": 0}
            state.setdefault("expected", 0)
            state.setdefault("released", 0)
            yield state_path, state

    def _handle(self, state: dict[str, Any]) -> ServerHandle:
        return ServerHandle(
            key=state["key"],
            label=state["label"],
            base_url=state["base_url"],
            port=state["port"],
            pid=state["pid"],
            pgid=state["pgid"],
            log_path=Path(state["log"]),
            gpu_ids=tuple(state["gpu_ids"]),
            argv=tuple(state["argv"]),
            generation=state["generation"],
            start_ticks=state["start_ticks"],
            port_note=state.get("port_note"),
        )

    def _alive(self, state: dict[str, Any]) -> bool:
        return is_alive(state["pid"], state["start_ticks"])

    def _start(self, spec: ServerSpec, state_path: Path, state: dict[str, Any]) -> dict[str, Any]:
        if spec.gpu_vendor == "amd" and self.amd_env:
            spec = dataclasses.replace(spec, env={**self.amd_env, **spec.env})
        generation = int(state.get("generation", 0)) + 1
        log_path = self.log_path(spec.name, generation)
        lease = None
        try:
            if spec.gpus:
                if self.leaser is None:
                    raise ServerStartError(
                        f"server {spec.name!r} needs {spec.gpus} GPUs but no GPU leaser was given"
                    )
                try:
                    lease = self._lease(spec)
                except TimeoutError as exc:
                    raise ServerStartError(f"server {spec.name!r}: {exc}") from exc
                self._wait_clean(spec, lease)
            if self.on_starting is not None:
                self.on_starting(spec.name, log_path)
            server = start_server(
                spec, log_path=log_path, registry=self.registry, lease=lease, grace_s=self.grace_s
            )
        except ServerStartError as exc:
            failed = {k: state[k] for k in _KEEP}
            failed.update(status="failed", message=str(exc), generation=generation, users=0)
            atomic_write_json(state_path, failed)
            raise
        finally:
            if lease is not None:
                lease.release()
        self._started[spec.key] = server
        return {
            **{k: state[k] for k in _KEEP},
            "label": spec.name,
            "status": "running",
            "generation": generation,
            "users": 0,
            "base_url": server.base_url,
            "port": server.port,
            "pid": server.pid,
            "pgid": server.pgid,
            "start_ticks": server.start_ticks,
            "grace_s": self.grace_s,
            "log": str(server.log_path),
            "gpu_ids": list(server.gpu_ids),
            "argv": list(server.argv),
            "port_note": server.port_note,
            "owner_pid": os.getpid(),
        }

    def _wait_clean(self, spec: ServerSpec, lease: Lease) -> None:
        """The leased GPUs hold no other process's memory, or the start fails naming them."""
        read = self.gpu_memory
        if read is None or not lease.ids:
            return
        dirty = wait_clean(lambda: read(spec.gpu_vendor, lease.ids), timeout_s=self.clean_wait_s)
        if dirty:
            held = ", ".join(f"GPU {index}: {mib} MiB" for index, mib in sorted(dirty.items()))
            raise ServerStartError(
                f"server {spec.name!r}: its GPUs still hold memory after"
                f" {self.clean_wait_s:.0f} s ({held}); another process is using them: stop it,"
                " or make those GPUs invisible to this run"
            )

    def _lease(self, spec: ServerSpec) -> Lease:
        """GPUs for `spec`, taken from idle servers when none are free.

        A server kept for the uses its key still expects holds its GPUs while nobody uses it;
        when those uses come late (another worker's items of the key run after this one's) or
        never (a replacement Slurm job counts the uses its dead predecessor made), a start that
        waited for its GPUs would wait for ever. An idle server is stopped instead and starts
        again if a use comes.
        """
        assert self.leaser is not None
        started = time.monotonic()
        deadline = started + self.lease_timeout_s
        while True:
            step = min(deadline, time.monotonic() + IDLE_CHECK_S)
            try:
                return self.leaser.lease(spec.gpus, step, since=started)
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise
            self._stop_idle(spec)

    def _stop_idle(self, spec: ServerSpec) -> None:
        """Stop one running server that holds GPUs and has no user, judged under its key's
        lock, which every attach takes first."""
        for state_path in sorted(self.state_dir.glob("*.json")):
            try:
                key = json.loads(state_path.read_text())["key"]
            except (OSError, ValueError, KeyError):
                continue
            if key == spec.key:
                continue
            try:
                with self._locked(key, blocking=False) as (path, state):
                    if state["status"] != "running" or state["users"] > 0 or not state["gpu_ids"]:
                        continue
                    log.warning(
                        "stopping idle server %r (GPUs %s) so that %r can start; it starts "
                        "again if another item needs it",
                        state["label"],
                        ",".join(str(i) for i in state["gpu_ids"]),
                        spec.name,
                    )
                    atomic_write_json(path, self._stopped(state))
                    return
            except Timeout:
                continue

    def expect(self, key: str, uses: int) -> None:
        """Keep the server of `key` until `uses` releases in total, across all processes.

        Every process of a run computes the same counts and sets all of them before its first
        acquire, so a key whose lock is busy (another process is starting its server, minutes
        on a GPU node) has its count already: waiting for that lock would hold this process's
        own first server start behind the other's.
        """
        try:
            with self._locked(key, blocking=False) as (state_path, state):
                if uses > state["expected"]:
                    state["expected"] = uses
                    atomic_write_json(state_path, state)
        except Timeout:
            return

    def acquire(self, spec: ServerSpec) -> ServerHandle:
        """Attach to the server of `spec.key`, starting it if nobody runs it.

        Raises ServerStartError for a start failure, including one remembered from earlier in
        the run.
        """
        with self._locked(spec.key) as (state_path, found):
            state = found
            status = state["status"]
            if status == "failed":
                raise ServerStartError(
                    f"{state['message']}\n(start failed earlier in this run; not retried)"
                )
            if status == "running" and not self._alive(state):
                log.warning(
                    "server %r (pid %d) is gone; starting it again", spec.name, state["pid"]
                )
                status = "dead"
            if status != "running":
                state = self._start(spec, state_path, state)
            state["users"] += 1
            atomic_write_json(state_path, state)
            self._holds.setdefault(spec.key, []).append(state["generation"])
            return self._handle(state)

    def measure_lock(self, handle: ServerHandle) -> KernelLock:
        """The lock an item holds while it measures on the server of `handle`.

        A server's counters, and the throughput aiperf sees, are the server's, not one
        client's: two items of one server measuring at once (xdist's plain ``load`` sends
        neighbours to different workers) would each count the other's traffic. The lock is a
        kernel lock, so it is freed if its holder dies.
        """
        _, lock_path = self._paths(handle.key)
        return kernel_lock(lock_path.with_suffix(".measure.lock"))

    def check(self, handle: ServerHandle) -> None:
        """Raise ServerDiedError if the server behind `handle` has exited."""
        if not is_alive(handle.pid, handle.start_ticks):
            own = self._started.get(handle.key)
            if own is not None and own.pid == handle.pid:
                own.ensure_alive()
            raise ServerDiedError(
                f"server {handle.label!r} (pid {handle.pid}) is gone; see {handle.log_path}"
            )

    def release(self, spec_key: str) -> None:
        """Drop one use of the server; the last use stops it."""
        holds = self._holds.get(spec_key)
        if not holds:
            raise KeyError(f"this process holds no server for key {spec_key!r}")
        generation = holds.pop()
        with self._locked(spec_key) as (state_path, found):
            state = found
            state["released"] += 1
            if state["status"] == "running" and state["generation"] == generation:
                state["users"] -= 1
                if state["users"] <= 0 and state["released"] >= state["expected"]:
                    state = self._stopped(state)
            atomic_write_json(state_path, state)
        self._reap()

    def _stopped(self, state: dict[str, Any]) -> dict[str, Any]:
        self._stop(state)
        stopped = {k: state[k] for k in _KEEP}
        stopped.update(status="stopped", users=0, generation=state["generation"])
        return stopped

    def _stop(self, state: dict[str, Any]) -> None:
        own = self._started.pop(state["key"], None)
        popen = own.popen if own is not None and own.pid == state["pid"] else None
        stop_group(
            state["pgid"], start_ticks=state["start_ticks"], grace_s=state["grace_s"], popen=popen
        )

    def _reap(self) -> None:
        for key, server in list(self._started.items()):
            if server.popen is not None and server.popen.poll() is not None:
                del self._started[key]

    def close(self) -> None:
        """Release every use this process still holds, then wait for the servers it started
        to be released by other processes (they would die with this one) and stop them."""
        for key, holds in list(self._holds.items()):
            while holds:
                self.release(key)
        deadline = time.monotonic() + self.close_wait_s
        for key, server in list(self._started.items()):
            while True:
                with self._locked(key) as (state_path, state):
                    mine = state["status"] == "running" and state["pid"] == server.pid
                    in_use = state["users"] > 0 or state["released"] < state["expected"]
                    if not mine or not in_use or time.monotonic() >= deadline:
                        if mine:
                            if in_use:
                                log.warning(
                                    "stopping server %r while other processes may still need it",
                                    server.label,
                                )
                            atomic_write_json(state_path, self._stopped(state))
                        break
                time.sleep(0.2)
            self._started.pop(key, None)
            if server.popen is not None:
                server.popen.poll()
