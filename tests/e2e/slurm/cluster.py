"""A real Slurm cluster on this one host (munge, slurmctld, slurmd) with fake GPU devices.

The tests need a real scheduler: job ids, gres allocation, ``scancel`` and time limits are what
the plugin relies on, and no stand-in shows them faithfully. Everything here is idempotent, so a
cluster that a previous session started (with the same configuration) is reused as it is.
Run as a script (``python tests/e2e/slurm/cluster.py``) to start the cluster by hand.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CONF_DIR = Path("/etc/slurm")
PARTITION = "gpu"
GPUS = 8
LOG_DIR = Path("/var/log/slurm")
PID_FILES = {"slurmctld": Path("/run/slurmctld.pid"), "slurmd": Path("/run/slurmd.pid")}
READY_STATES = ("idle", "mixed", "allocated")


class Unavailable(RuntimeError):
    """Slurm cannot run here (not root, no package manager, a daemon that will not start)."""


@dataclass(frozen=True)
class Cluster:
    host: str
    partition: str
    gpus: int


def _run(argv: list[str], *, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def _install() -> None:
    if all(shutil.which(exe) for exe in ("slurmctld", "slurmd", "srun", "munged")):
        return
    if shutil.which("apt-get") is None:
        raise Unavailable("Slurm is not installed and there is no apt-get to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", "slurm-wlm", "munge"],
    ):
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=900, check=False
        )
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise Unavailable(f"{' '.join(argv)} failed: " + " | ".join(tail))


def _owned_dir(path: Path, user: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    shutil.chown(path, user, user)


def _munge() -> None:
    key = Path("/etc/munge/munge.key")
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(os.urandom(1024))
    shutil.chown(key, "munge", "munge")
    key.chmod(0o400)
    for folder in ("/run/munge", "/var/lib/munge", "/var/log/munge"):
        _owned_dir(Path(folder), "munge")
    if _munge_works():
        return
    started = _run(["runuser", "-u", "munge", "--", "munged"], timeout=30)
    deadline = time.monotonic() + 15
    while not _munge_works():
        if time.monotonic() > deadline:
            raise Unavailable(f"munged did not start: {started.stderr.strip()}")
        time.sleep(0.2)


def _munge_works() -> bool:
    if shutil.which("munge") is None:
        return False
    cred = _run(["munge", "-n"], timeout=10)
    if cred.returncode != 0:
        return False
    check = subprocess.run(
        ["unmunge"], input=cred.stdout, capture_output=True, text=True, timeout=10, check=False
    )
    return check.returncode == 0


def slurm_conf(host: str, cpus: int, gpus: int) -> str:
    """Short kill waits and a long MinJobAge: a cancelled or timed-out job ends in seconds and
    stays visible to ``squeue -t all`` long enough for the plugin to name its end."""
    return "\n".join(
        [
            "ClusterName=infx",
            f"SlurmctldHost={host}(127.0.0.1)",
            "AuthType=auth/munge",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            "SlurmUser=root",
            "MpiDefault=none",
            "KillWait=3",
            "MinJobAge=600",
            "InactiveLimit=0",
            "GresTypes=gpu",
            f"SlurmctldPidFile={PID_FILES['slurmctld']}",
            f"SlurmdPidFile={PID_FILES['slurmd']}",
            "StateSaveLocation=/var/spool/slurmctld",
            "SlurmdSpoolDir=/var/spool/slurmd",
            f"SlurmctldLogFile={LOG_DIR / 'slurmctld.log'}",
            f"SlurmdLogFile={LOG_DIR / 'slurmd.log'}",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=20000 Gres=gpu:{gpus} "
            "State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={host} Default=YES OverSubscribe=YES "
            "MaxTime=INFINITE State=UP",
            "",
        ]
    )


def gres_conf(host: str, gpus: int) -> str:
    return f"NodeName={host} Name=gpu File=/dev/fakegpu[0-{gpus - 1}]\n"


def _devices(gpus: int) -> None:
    """GPU gres needs device files; a null-device node per fake GPU is enough for Slurm."""
    for index in range(gpus):
        path = Path(f"/dev/fakegpu{index}")
        if path.exists():
            continue
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except OSError as exc:
            raise Unavailable(f"cannot make the fake GPU device {path}: {exc}") from None


def _write_if_changed(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True


def _daemon_alive(name: str) -> bool:
    try:
        pid = int(PID_FILES[name].read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return False
    return Path(f"/proc/{pid}/comm").read_text().strip() == name


def _stop(name: str) -> None:
    if not _daemon_alive(name):
        return
    pid = int(PID_FILES[name].read_text().split()[0])
    os.kill(pid, 15)
    deadline = time.monotonic() + 15
    while _daemon_alive(name) and time.monotonic() < deadline:
        time.sleep(0.1)


def _node_state(host: str) -> str:
    found = _run(["sinfo", "-h", "-n", host, "-o", "%T"], timeout=15)
    return found.stdout.strip().rstrip("*~#$@").lower() if found.returncode == 0 else ""


def ensure(gpus: int = GPUS) -> Cluster:
    """A running single-host cluster with `gpus` fake GPUs; raises Unavailable with the reason."""
    if os.geteuid() != 0:
        raise Unavailable("starting a local Slurm needs root (munge, slurmd and device nodes)")
    _install()
    _munge()
    host = socket.gethostname().split(".")[0]
    cpus = max(4, os.cpu_count() or 1)
    changed = _write_if_changed(CONF_DIR / "slurm.conf", slurm_conf(host, cpus, gpus))
    changed |= _write_if_changed(CONF_DIR / "gres.conf", gres_conf(host, gpus))
    _devices(gpus)
    for folder in ("/var/spool/slurmctld", "/var/spool/slurmd", str(LOG_DIR)):
        Path(folder).mkdir(parents=True, exist_ok=True)
    for name in ("slurmctld", "slurmd"):
        if changed:
            _stop(name)
        if not _daemon_alive(name):
            started = _run([name], timeout=60)
            if started.returncode != 0:
                raise Unavailable(f"{name} did not start: {started.stderr.strip()}")
    deadline = time.monotonic() + 60
    state = ""
    while time.monotonic() < deadline:
        state = _node_state(host)
        if state.startswith(READY_STATES):
            return Cluster(host, PARTITION, gpus)
        if "drain" in state or state.startswith("down"):
            _run(["scontrol", "update", f"nodename={host}", "state=resume"], timeout=15)
        time.sleep(0.5)
    raise Unavailable(
        f"node {host} did not become ready (state {state or 'unknown'}); see {LOG_DIR}"
    )


DAEMONS = ("munged", "slurmctld", "slurmd")
"""In start order; stopped in the reverse one."""


def daemons() -> dict[str, set[int]]:
    """The process ids of each Slurm or munge daemon running on this host, whoever started it."""
    found: dict[str, set[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name in DAEMONS:
            found.setdefault(name, set()).add(int(entry.name))
    return found


def _terminate(pid: int, name: str) -> None:
    """SIGTERM, then SIGKILL after 15 s; only while the process id is still that daemon's."""

    def alive() -> bool:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip() == name
        except OSError:
            return False

    for sig, wait_s in ((15, 15.0), (9, 5.0)):
        if not alive():
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while alive() and time.monotonic() < deadline:
            time.sleep(0.1)


class Owner:
    """The daemons one test session started: :meth:`get` starts what is not running (a test
    may have stopped the cluster) and remembers the processes it brought up; :meth:`release`
    stops exactly those. A cluster that was running before the session is reused and left
    running, as it was found."""

    def __init__(self) -> None:
        self.started: dict[str, set[int]] = {}

    def get(self, gpus: int = GPUS) -> Cluster:
        before = daemons()
        try:
            return ensure(gpus)
        finally:
            for name, pids in daemons().items():
                new = pids - before.get(name, set())
                if new:
                    self.started.setdefault(name, set()).update(new)

    def release(self) -> None:
        for name in reversed(DAEMONS):
            for pid in sorted(self.started.pop(name, set())):
                _terminate(pid, name)


if __name__ == "__main__":
    print(ensure())
