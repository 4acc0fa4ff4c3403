"""xdist workers as Slurm jobs: one ``srun`` allocation per worker, started by the controller.

The user asks for N workers; each becomes an execnet ``popen`` spec whose interpreter is
``srun ... python``, so xdist talks to a worker running inside a Slurm job over srun's stdio
exactly as it would to a local subprocess. Items that share a server are one xdist group
(``--dist loadgroup``), so a server is never started twice on two nodes. Each job's name is
unique to the run and the worker slot; the controller uses it to explain a worker that died
(cancelled, out of time, node failure) and to cancel every job of the run when it stops.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_infx.settings import SlurmSettings as SlurmSettings

JOB_PREFIX = "infx-"
TERMINAL_WAIT_S = 10.0
CANCEL_WAIT_S = 30.0
ENDS = {
    "CANCELLED": "was cancelled (scancel, or an administrator)",
    "TIMEOUT": "hit its time limit",
    "DEADLINE": "hit its deadline",
    "NODE_FAIL": "lost its node (node failure)",
    "BOOT_FAIL": "could not boot its node",
    "PREEMPTED": "was preempted",
    "OUT_OF_MEMORY": "ran out of memory",
    "FAILED": "failed",
    "COMPLETED": "ended",
}
GROUPS_KEY = "infx_server_groups"
LIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "RESIZING")
TEST_ONLY_S = 5.0
RUN_FOLDER = re.compile(r"infx-run-[0-9a-f]{12}-(\d+)")


class SlurmError(RuntimeError):
    """A Slurm command failed or was missing."""


def srun_argv(settings: SlurmSettings, job_name: str) -> list[str]:
    """`-n1 --unbuffered` matter: without them the worker never answers xdist's handshake."""
    argv = ["srun", f"--job-name={job_name}", "-N1", "-n1", "--unbuffered"]
    if settings.partition:
        argv.append(f"--partition={settings.partition}")
    if settings.gpus:
        argv.append(f"--gres=gpu:{settings.gpus}")
    if settings.time:
        argv.append(f"--time={settings.time}")
    if settings.account:
        argv.append(f"--account={settings.account}")
    return [*argv, *settings.extra]


REQUEST_OPTIONS = (
    ("partition", "--infx-slurm-partition", ("partition",)),
    ("gpus", "--infx-slurm-gpus", ("gres", "gpu", "node configuration")),
    ("time", "--infx-slurm-time", ("time",)),
    ("account", "--infx-slurm-account", ("account", "association")),
)


def request_problem(settings: SlurmSettings, python: str = sys.executable) -> str | None:
    """What srun says about a worker job the cluster can never run (no such partition, more
    GPUs than a node has), asked with ``srun --test-only`` before any worker starts: a job
    that cannot be allocated would otherwise end xdist's start-up in an execnet traceback.
    None when the request can run, or when srun does not answer in time (a busy controller
    is no reason to refuse the run)."""
    argv = ["srun", "--test-only", *srun_argv(settings, job_name("check", 0))[1:], python]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=TEST_ONLY_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    reason = lines[-1] if lines else f"srun --test-only exited with {done.returncode}"
    if not reason.startswith("srun:"):
        reason = f"srun: {reason}"
    said = " ".join(lines).lower()
    named = [
        f"{flag} {getattr(settings, field)}"
        for field, flag, words in REQUEST_OPTIONS
        if getattr(settings, field) and any(word in said for word in words)
    ]
    if not named and settings.extra:
        named = [f"--infx-slurm-args {shlex.join(settings.extra)}"]
    which = ", ".join(named) if named else "--infx-slurm"
    return f"{which}: the cluster cannot run the worker jobs ({reason})"


def job_name(tag: str, slot: int) -> str:
    return f"{JOB_PREFIX}{tag}-w{slot}"


def tx_specs(settings: SlurmSettings, tag: str, python: str = sys.executable) -> list[str]:
    """One execnet spec per worker slot, each naming its own job."""
    return [
        "popen//python=" + " ".join([*srun_argv(settings, job_name(tag, slot)), python])
        for slot in range(settings.workers)
    ]


def job_name_of_spec(python: str) -> str | None:
    for word in python.split():
        if word.startswith("--job-name="):
            return word.split("=", 1)[1]
    return None


def in_job(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("SLURM_JOB_ID"))


def job_gpus(environ: Mapping[str, str]) -> tuple[int, ...] | None:
    """The GPUs Slurm gave this job (None outside a job): CUDA_VISIBLE_DEVICES (on an AMD node
    ROCR_VISIBLE_DEVICES) as Slurm set it, which names the node's devices, so leases and lock
    files use the same numbers."""
    if not in_job(environ):
        return None
    name = next(
        (n for n in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES") if environ.get(n)),
        "SLURM_STEP_GPUS",
    )
    text = environ.get(name) or ""
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not all(part.isdigit() for part in ids):
        raise SlurmError(
            f"{name}={text!r} in Slurm job {environ['SLURM_JOB_ID']} is not a "
            "list of GPU indices; configure gres.conf with device files so Slurm sets indices"
        )
    return tuple(int(part) for part in ids)


def node_run_dir(environ: Mapping[str, str], testrunuid: str) -> Path:
    """A run folder on the node's own disk (TMPDIR, else /tmp), one per job: GPU locks are
    kernel locks, which a shared filesystem does not honour across nodes."""
    root = Path(tempfile.gettempdir())
    clear_dead_run_dirs(root, environ.get("SLURMD_NODENAME"))
    folder = root / f"infx-run-{testrunuid[:12]}-{environ['SLURM_JOB_ID']}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def clear_dead_run_dirs(root: Path, node: str | None) -> list[Path]:
    """Remove the run folders under `root` of jobs Slurm no longer lists: a job that was
    cancelled or lost its node never ran its worker's cleanup. Nothing is removed when squeue
    cannot say which jobs live. Returns the folders removed."""
    try:
        found = {int(m[1]): p for p in root.iterdir() if (m := RUN_FOLDER.fullmatch(p.name))}
    except OSError:
        return []
    if not found:
        return []
    argv = ["squeue", "-h", "-o", "%A", "-t", ",".join(LIVE_STATES)]
    if node:
        argv += ["-w", node]
    try:
        live = {int(w) for w in command(argv).split() if w.isdigit()}
    except SlurmError:
        return []
    removed = []
    for job_id, path in sorted(found.items()):
        if job_id not in live:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@dataclass(frozen=True)
class Job:
    id: int
    name: str
    state: str
    node: str


def command(argv: Sequence[str], timeout: float = 30.0) -> str:
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmError(f"{argv[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise SlurmError(f"{' '.join(argv)} exited with {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def jobs(names: Sequence[str], *, every_state: bool = False) -> list[Job]:
    """The jobs of these names that slurmctld still knows (finished ones only with
    `every_state`, for as long as its MinJobAge keeps them)."""
    if not names:
        return []
    argv = ["squeue", "-h", "-o", "%i|%j|%T|%N", f"--name={','.join(names)}"]
    if every_state:
        argv += ["-t", "all"]
    found = []
    for line in command(argv).splitlines():
        parts = line.split("|")
        if len(parts) == 4 and parts[0].strip().isdigit():
            found.append(Job(int(parts[0]), parts[1], parts[2].strip(), parts[3].strip()))
    return found


def why_ended(name: str, *, wait_s: float = TERMINAL_WAIT_S, time_limit: str | None = None) -> str:
    """One sentence on how the newest job of `name` ended, waiting briefly for Slurm to record
    the end (srun can exit a moment before the job leaves RUNNING or COMPLETING)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            found = jobs([name], every_state=True)
        except SlurmError as exc:
            return f"the worker's Slurm job {name} ended; its state is unknown ({exc})"
        newest = max(found, key=lambda job: job.id) if found else None
        if newest is not None and (newest.state not in LIVE_STATES or time.monotonic() >= deadline):
            break
        if newest is None and time.monotonic() >= deadline:
            return f"the worker's Slurm job {name} is gone and Slurm no longer lists it"
        time.sleep(0.2)
    where = f" on {newest.node}" if newest.node else ""
    if newest.state in LIVE_STATES:
        return f"Slurm job {newest.id}{where} is still {newest.state} but its worker died"
    how = ENDS.get(newest.state, f"ended in state {newest.state}")
    if newest.state == "TIMEOUT" and time_limit:
        how += f" ({time_limit}, --infx-slurm-time)"
    return f"Slurm job {newest.id}{where} {how}"


def cancel(names: Sequence[str], *, wait_s: float = CANCEL_WAIT_S) -> list[Job]:
    """Cancel every live job of these names and wait until none is queued or running; returns
    the jobs still live at the deadline."""
    try:
        live = jobs(names)
    except SlurmError:
        return []
    if live:
        try:
            command(["scancel", *(str(job.id) for job in live)])
        except SlurmError:
            pass
    deadline = time.monotonic() + wait_s
    while live and time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            live = jobs(names)
        except SlurmError:
            return live
    return live


def configure_worker(config: pytest.Config, environ: Mapping[str, str]) -> Path | None:
    """In a worker inside a Slurm job: the node-local run folder (None elsewhere)."""
    workerinput: dict[str, object] | None = getattr(config, "workerinput", None)
    if workerinput is None or not in_job(environ):
        return None
    if workerinput.get(GROUPS_KEY):
        config.option.loadgroup = True
    return node_run_dir(environ, str(workerinput["testrunuid"]))
