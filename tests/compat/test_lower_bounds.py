"""The lowest versions pyproject declares are versions pytest-infx works with: a virtual
environment with every dependency at its lower bound (the ``dev`` extra's included) runs the
unit lane of a copy of this checkout. A bound that is too low fails here, naming the tests that
broke, before a user's resolver picks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from pytest_infx.envs.toolenv import extra_pip_args

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
EXTRAS = ("golden", "hub", "plots", "dev")


def lower_bounds(pyproject: dict[str, object]) -> dict[str, str]:
    """Each declared requirement's lower bound (``>=``), by distribution name."""
    project = pyproject["project"]
    assert isinstance(project, dict)
    lines = list(project["dependencies"])
    for extra in EXTRAS:
        lines += project["optional-dependencies"][extra]
    found: dict[str, str] = {}
    for requirement in map(Requirement, lines):
        for spec in requirement.specifier:
            if spec.operator == ">=":
                found[requirement.name.lower().replace("_", "-")] = spec.version
    return found


def test_every_requirement_but_the_type_stubs_has_a_lower_bound() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    bounds = lower_bounds(pyproject)
    assert {"pytest", "pytest-xdist", "pydantic", "syrupy", "h11", "matplotlib"} <= set(bounds)
    assert bounds["pytest"] == "9.0"


def _copy_checkout(into: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    copy = into / "checkout"
    for name in filter(None, listed):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            target = copy / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return copy


def test_the_unit_lane_passes_with_every_dependency_at_its_lower_bound(tmp_path: Path) -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    bounds = lower_bounds(pyproject)
    constraints = tmp_path / "lower-bounds.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in bounds.items()))
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = str(env / "bin" / "python")
    copy = _copy_checkout(tmp_path)
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "-c", str(constraints), *extra_pip_args(),
         "-e", f"{copy}[dev]"],
        check=False, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    frozen = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze"],
        check=False,
        capture_output=True,
        text=True,
    ).stdout
    installed = {
        line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
        for line in frozen.splitlines()
        if "==" in line
    }
    for name, version in bounds.items():
        assert Requirement(f"{name}=={version}").specifier.contains(installed[name]), (
            name,
            installed.get(name),
        )
    lane = subprocess.run(
        [python, "-m", "pytest", "tests", "-m", "not engine and not slurm", "-q",
         "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "2", "--dist", "loadgroup"],
        check=False, cwd=copy, capture_output=True, text=True, timeout=4500,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},
    )  # fmt: skip
    tail = "\n".join(lane.stdout.splitlines()[-40:])
    assert lane.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail, tail
    assert sys.executable != python
