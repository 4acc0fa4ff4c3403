from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
USAGE = (
    "usage: guard.py [--grace S] [--parent-pid PID] [--cleanup JSON-ARGV] [--pass-fds 3,4] "
    "-- ENGINE-ARGV..."
)


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}) failed: {os.strerror(err)}")


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[2])


def _live_members(me: int, *, outside_group_only: bool = False) -> list[int]:
    """Processes in my group or below me in the process tree, zombies excluded."""
    table: dict[int, tuple[str, int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(int(name))
            if info is not None:
                table[int(name)] = info
    below: set[int] = {me}
    changed = True
    while changed:
        changed = False
        for pid, (_, ppid, _) in table.items():
            if ppid in below and pid not in below:
                below.add(pid)
                changed = True
    found = []
    for pid, (state, _, pgrp) in table.items():
        if pid == me or state in ("Z", "X"):
            continue
        in_group = pgrp == me
        if (in_group and not outside_group_only) or (pid in below and not in_group):
            found.append(pid)
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _signal_all(me: int, sig: int) -> None:
    # The group signal reaches members that forked after the /proc scan; ours is handled.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(me, sig)
    for pid in _live_members(me, outside_group_only=True):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def terminate_tree(me: int, grace_s: float) -> None:
    """TERM everything below the guard, wait up to the grace period, then KILL what is left."""
    _signal_all(me, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while True:
        _reap()
        if not _live_members(me):
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    sys.stderr.write(f"guard: processes still alive after {grace_s:g} s; sending SIGKILL\n")
    for _ in range(50):
        for pid in _live_members(me):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        if not _live_members(me):
            return
        time.sleep(0.02)


def _status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _parse(argv: list[str]) -> tuple[float, int | None, list[str], list[int], list[str]]:
    grace = 30.0
    parent: int | None = None
    cleanup: list[str] = []
    fds: list[int] = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        opt = argv[i]
        if i + 1 >= len(argv):
            raise SystemExit(USAGE)
        value = argv[i + 1]
        if opt == "--grace":
            grace = float(value)
        elif opt == "--parent-pid":
            parent = int(value)
        elif opt == "--cleanup":
            cleanup = [str(a) for a in json.loads(value)]
        elif opt == "--pass-fds":
            fds = [int(v) for v in value.split(",") if v]
        else:
            raise SystemExit(USAGE)
        i += 2
    engine = argv[i + 1 :]
    if not engine:
        raise SystemExit(USAGE)
    return grace, parent, cleanup, fds, engine


def main(argv: list[str]) -> int:
    """Run ENGINE-ARGV so that it cannot outlive the process that launched the guard.

    The guard is the leader of a fresh process group, asks the kernel for SIGTERM when its parent
    dies (PR_SET_PDEATHSIG) and is a child subreaper, so engine descendants that re-parent or
    leave the group are still found. On SIGTERM, SIGINT, SIGHUP or parent death it stops the
    whole tree: TERM, a grace period, then KILL. When the engine exits on its own, leftovers go
    the same way and the engine's status is passed on. Standard library only, so that it starts
    in milliseconds with `python -I -S guard.py`.
    """
    grace, parent, cleanup, fds, engine = _parse(argv)
    me = os.getpid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getpgid(0) != me:
        os.setpgid(0, 0)
    if parent is not None and os.getppid() != parent:
        sys.stderr.write("guard: the launching process is already gone; not starting\n")
        return 1
    received: list[int] = []
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        child = subprocess.Popen(engine, pass_fds=fds)
    except OSError as exc:
        sys.stderr.write(f"guard: cannot start {engine[0]!r}: {exc}\n")
        return 127
    pidfd = os.pidfd_open(child.pid)
    code: int | None = None
    while code is None and not received:
        try:
            ready, _, _ = select.select([pidfd, wake_r], [], [])
        except InterruptedError:
            continue
        if pidfd in ready:
            code = _status(child.wait())
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 512)
    if received:
        why = "parent died" if os.getppid() != parent and parent is not None else "signal"
        sys.stderr.write(
            f"guard: {why} ({signal.Signals(received[0]).name}); stopping the engine group\n"
        )
        terminate_tree(me, grace)
        code = _status(child.wait()) if code is None else code
    else:
        terminate_tree(me, min(grace, 5.0))
    if cleanup:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(cleanup, timeout=60, check=False, capture_output=True)
    sys.stderr.flush()
    return code if code is not None else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
