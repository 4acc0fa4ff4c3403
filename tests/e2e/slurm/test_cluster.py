"""The local cluster is the Slurm tests' own: a session that started munged, slurmctld and
slurmd stops them when it ends, and one that found them running leaves them running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .cluster import Cluster, Owner, daemons

REPO = Path(__file__).resolve().parents[3]
INNER = "tests/e2e/slurm/test_cluster.py::test_a_job_runs_on_the_cluster"


def test_a_job_runs_on_the_cluster(slurm_cluster: Cluster) -> None:
    done = subprocess.run(
        ["srun", "-N1", "-n1", f"--partition={slurm_cluster.partition}", "hostname"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().split(".")[0] == slurm_cluster.host


@pytest.mark.slurm
@pytest.mark.xdist_group("slurm-cluster")
def test_no_daemon_of_the_slurm_tests_outlives_their_session(slurm_owner: Owner) -> None:
    """This session's own daemons are stopped first, so the inner session starts the cluster
    itself (unless this machine ran one before any test did, which must then be left alone)."""
    slurm_owner.release()
    before = daemons()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", INNER, "-p", "no:cacheprovider", "-q"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if "1 skipped" in inner.stdout:
        pytest.skip(f"no local Slurm cluster: {inner.stdout.strip().splitlines()[-1]}")
    assert inner.returncode == 0, inner.stdout[-3000:]
    assert "1 passed" in inner.stdout
    after = daemons()
    own = {name: pids - before.get(name, set()) for name, pids in after.items()}
    assert not any(own.values()), f"daemons the inner session left running: {own}"
    for name, pids in before.items():
        assert pids <= after.get(name, set()), f"{name} was running before and was stopped"
    if not before:
        assert after == {}
