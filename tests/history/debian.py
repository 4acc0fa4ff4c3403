"""Debian packages the history's tests need (a PostgreSQL server, Chromium), installed on first
use as the engine tests install theirs: as root with apt-get, once per machine, under a lock
so that two xdist workers do not run apt at once. Elsewhere the test fails saying what to
install; it never skips for want of it."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from filelock import FileLock

LOCK = Path(tempfile.gettempdir()) / "infx-tests-apt.lock"


def ensure(package: str, pattern: str) -> Path:
    """The first path matching ``pattern`` (a glob), installing ``package`` when none does."""
    found = sorted(glob.glob(pattern))
    if found:
        return Path(found[-1])
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.fail(f"this test needs Debian's {package}: apt-get install {package}", False)
    with FileLock(str(LOCK), timeout=1800):
        if not glob.glob(pattern):
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            for argv in (
                ["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
            ):
                done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
                assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}"
    found = sorted(glob.glob(pattern))
    assert found, f"{package} installed, but nothing matches {pattern}"
    return Path(found[-1])
