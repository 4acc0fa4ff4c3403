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
from collections.abc import Callable, Collection, Sequence

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


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of a process's ``/proc/<pid>/stat`` after its command name (the state
    first), or None if it is gone. The name is skipped up to its last ``)``, as it may hold
    spaces and parentheses. It lives here, not in :mod:`pytest_infx.launch.procfs`, because
    this script runs without the package."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2 :].split()


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of a process, or None if it is gone."""
    fields = stat_fields(pid)
    if fields is None:
        return None
    return fields[0].decode(), int(fields[1]), int(fields[2])


def _live_members(
    leaders: Collection[int], *, own_tree: bool = False, outside_groups_only: bool = False
) -> list[int]:
    """Live processes (zombies excluded) of the groups ``leaders`` lead; with ``own_tree`` (the
    caller is the one leader), also those below it in the process tree that left its group, and
    never the caller itself."""
    table: dict[int, tuple[str, int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(int(name))
            if info is not None:
                table[int(name)] = info
    below: set[int] = set(leaders) if own_tree else set()
    changed = own_tree
    while changed:
        changed = False
        for pid, (_, ppid, _) in table.items():
            if ppid in below and pid not in below:
                below.add(pid)
                changed = True
    me = os.getpid()
    return [
        pid
        for pid, (state, _, pgrp) in table.items()
        if pid != me
        and state not in ("Z", "X")
        and (
            (pgrp in leaders and not outside_groups_only) or (pid in below and pgrp not in leaders)
        )
    ]


def _say(message: str) -> None:
    """Write to the guard's stderr, which may be a pipe whose reader (the process that died)
    is gone: a failed write must not stop the guard from ending its group."""
    with contextlib.suppress(OSError):
        sys.stderr.write(message)
        sys.stderr.flush()


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _signal(leaders: Collection[int], sig: int, own_tree: bool) -> None:
    """The group signal reaches members that forked after the /proc scan; each member gets the
    signal once. A guard ending its own group kills member by member, sparing itself."""
    by_group = not (own_tree and sig == signal.SIGKILL)
    if by_group:
        for leader in leaders:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(leader, sig)
    if not own_tree:
        return
    for pid in _live_members(leaders, own_tree=True, outside_groups_only=by_group):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def end_groups(
    leaders: Collection[int],
    grace_s: float,
    *,
    relay: bool = False,
    own_tree: bool = False,
    poll: Callable[[], object] | None = None,
    kill_wait_s: float = 5.0,
) -> bool:
    """End process groups: TERM, wait up to ``grace_s``, then KILL what is left and wait for it.

    The one way pytest-infx ends what it started, used by the guard on its own group and by the
    plugin on the guards' groups. With ``relay`` the TERM goes to each leader alone, which the
    caller has checked is a live guard: it relays the TERM to its group, and a second TERM makes
    some servers (uvicorn) skip their graceful shutdown. ``own_tree`` is the guard's view: it
    leads the one group, is itself spared, and also ends the descendants that left the group (it
    is their subreaper). ``poll`` reaps the caller's children while it waits (the guard reaps all
    of them; the plugin polls its Popen, never a host's children). Returns whether anything
    needed the KILL.
    """
    step = poll or (lambda: None)
    if relay:
        for leader in leaders:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(leader, signal.SIGTERM)
    else:
        _signal(leaders, signal.SIGTERM, own_tree)
    if _wait_gone(leaders, grace_s, own_tree, step, 0.05):
        return False
    _signal(leaders, signal.SIGKILL, own_tree)
    if not _wait_gone(leaders, kill_wait_s, own_tree, step, 0.02):
        _signal(leaders, signal.SIGKILL, own_tree)
    return True


def _wait_gone(
    leaders: Collection[int],
    timeout_s: float,
    own_tree: bool,
    poll: Callable[[], object],
    interval_s: float,
) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        poll()
        if not _live_members(leaders, own_tree=own_tree):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)


def terminate_tree(me: int, grace_s: float) -> None:
    """TERM everything below the guard, wait up to the grace period, then KILL what is left."""
    if end_groups([me], grace_s, own_tree=True, poll=_reap, kill_wait_s=1.0):
        _say(f"guard: processes still alive after {grace_s:g} s; sending SIGKILL\n")


def command(
    argv: Sequence[str],
    *,
    grace_s: float,
    parent_pid: int | None = None,
    cleanup: Sequence[str] = (),
    pass_fds: Sequence[int] = (),
) -> list[str]:
    """The argv that runs ``argv`` under the guard, with this interpreter, in isolated mode (no
    site packages: the guard needs the standard library only, and starts in milliseconds)."""
    cmd = [sys.executable, "-I", "-S", os.path.abspath(__file__), "--grace", f"{grace_s:g}"]
    if parent_pid is not None:
        cmd += ["--parent-pid", str(parent_pid)]
    if cleanup:
        cmd += ["--cleanup", json.dumps(list(cleanup))]
    if pass_fds:
        cmd += ["--pass-fds", ",".join(str(fd) for fd in pass_fds)]
    return [*cmd, "--", *argv]


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
        _say("guard: the launching process is already gone; not starting\n")
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
        _say(f"guard: cannot start {engine[0]!r}: {exc}\n")
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
        _say(f"guard: {why} ({signal.Signals(received[0]).name}); stopping its process group\n")
        terminate_tree(me, grace)
        code = _status(child.wait()) if code is None else code
    else:
        terminate_tree(me, min(grace, 5.0))
    if cleanup:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(cleanup, timeout=60, check=False, capture_output=True)
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    return code if code is not None else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
