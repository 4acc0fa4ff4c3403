from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.conftest import INI, Sweep, wait_gone
from e2e.helpers import prompts

from .cluster import Cluster, Owner, Unavailable


@pytest.fixture(autouse=True)
def cluster_to_itself(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on the cluster has it to itself: tests drain the node or cancel jobs, and two
    runs of this folder at once (xdist, or two checkouts on one machine) would see each
    other's faults. Tests that do not touch the cluster take no lock."""
    if "slurm_cluster" not in request.fixturenames:
        yield
        return
    with open(Path(tempfile.gettempdir()) / "infx-slurm-tests.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def slurm_owner() -> Iterator[Owner]:
    """What this session started of the cluster, stopped when the session ends: munged,
    slurmctld and slurmd do not outlive the tests that needed them (a cluster that was running
    before the session is left running)."""
    owner = Owner()
    try:
        yield owner
    finally:
        owner.release()


@pytest.fixture
def slurm_cluster(slurm_owner: Owner) -> Cluster:
    """The local cluster, installed and started on first use (and again if a test stopped it);
    skipped (with the reason) only where it cannot run."""
    try:
        return slurm_owner.get()
    except Unavailable as exc:
        pytest.skip(f"no local Slurm cluster: {exc}")


def run_jobs(root: Path | None = None) -> list[tuple[int, str, str]]:
    """Every job of a pytest-infx run that Slurm still has queued or running; with `root`,
    only those submitted from inside it (another test's jobs are not this test's business)."""
    out = subprocess.run(
        ["squeue", "-h", "-o", "%i|%j|%T|%Z"], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in out.splitlines():
        job, name, state, workdir = line.split("|", 3)
        inside = root is None or Path(workdir) == root or root in Path(workdir).parents
        if name.startswith("infx-") and inside:
            found.append((int(job), name, state))
    return found


def processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is inside `folder` (workers, srun, engines)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd == folder or folder in cwd.parents:
            found.append(int(entry.name))
    return found


def wait_until(predicate: object, timeout: float) -> bool:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


@pytest.fixture
def slurm_sweep(pytester: pytest.Pytester, slurm_cluster: Cluster) -> Iterator[Sweep]:
    """A stand-in sweep folder; afterwards no job of the run may be queued or running and no
    process may still work inside the folder."""
    pytester.makeini(INI)
    (pytester.path / "recipes").mkdir()
    prompts(pytester.path / "prompts.jsonl")
    made = Sweep(pytester, pytester.path, pytester.path / "starts.jsonl")
    yield made
    jobs = run_jobs(made.root)
    if jobs:
        subprocess.run(["scancel", *(str(job) for job, _, _ in jobs)], check=False)
    wait_until(lambda: not processes_in(made.root), timeout=10.0)
    left = processes_in(made.root)
    stand_ins = wait_gone(made.record, timeout=5.0)
    assert not jobs, f"Slurm jobs left queued or running: {jobs}"
    assert not left and not stand_ins, f"processes left behind: {left} {stand_ins}"
