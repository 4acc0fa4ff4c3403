"""Installed in a real environment, pytest-infx leaves other projects' runs as they were: each
environment is built by pip as a user's is, and a foreign project runs in it and in the same
environment without pytest-infx. Building them is slow, so they are ``engine`` tests and the
environments are kept in the cache (keyed by pyproject and this checkout's path; pytest-infx is
installed editable, so the code under test is always the checkout's)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest
from filelock import FileLock

from pytest_infx.envs.toolenv import extra_pip_args
from pytest_infx.files.cachedir import cache_root

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
ANYIO_TEST = """
import pytest

@pytest.mark.anyio
async def test_sleeps():
    pass
"""
SNAPSHOT_TESTS = """
def test_mapping(snapshot):
    assert {"a": 1, "b": [2, 3]} == snapshot

def test_text(snapshot):
    assert "pancakes" == snapshot
"""
PRIVATE_PYTEST_NAMES = """
import importlib, inspect, re
import pytest
from packaging.specifiers import SpecifierSet
from pytest_infx.compat.versions import NAMES
for entry in NAMES:
    if entry.distribution != "pytest":
        continue
    if entry.versions and pytest.__version__ not in SpecifierSet(entry.versions):
        continue
    module_name, _, class_name = entry.owner.partition(":")
    module = importlib.import_module(module_name)
    if not class_name:
        found = hasattr(module, entry.name)
    else:
        owner = getattr(module, class_name)
        found = any(
            entry.name in vars(k) or entry.name in vars(k).get("__annotations__", {})
            for k in owner.__mro__
        ) or re.search(
            rf"\\bself\\.{entry.name}\\b\\s*(:[^=\\n]+)?=", inspect.getsource(owner)
        ) is not None
    if not found:
        print("missing", entry.owner, entry.name)
"""
"""The check of tests/compat/test_versions.py on pytest's internal names, run in another
environment (where the tests' own dependencies are not installed)."""
_NOT_PASSED = ("PYTEST_", "INFX_", "PYTHONPATH")
"""What the foreign project's run does not inherit from this one."""
_TIMES = re.compile(r" in [0-9.]+s( \([0-9:]+\))?")


def _key() -> str:
    text = (REPO / "pyproject.toml").read_bytes() + os.fsencode(REPO)
    return hashlib.sha256(text).hexdigest()[:16]


def _pip(python: Path, *args: str) -> None:
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *extra_pip_args(), *args],
        check=False, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def environment(name: str, *installs: tuple[str, ...]) -> Path:
    """The cached environment ``name``, made by running each ``pip install`` in order (once)."""
    folder = cache_root() / "foreign-projects" / _key() / name
    python = folder / "bin" / "python"
    done = folder / ".complete"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not done.exists():
            venv.create(folder, with_pip=True, clear=True)
            for args in installs:
                _pip(python, *args)
            done.write_text("")
    return python


PLAIN = ("-e", str(REPO))
GOLDEN = ("-e", f"{REPO}[golden]")


def _run(python: Path, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder, check=False, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith(_NOT_PASSED)},
    )  # fmt: skip


def _outcome(done: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    closing = [line for line in done.stdout.splitlines() if line.startswith("=")]
    return done.returncode, _TIMES.sub("", closing[-1] if closing else "")


def _fixtures(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The fixture names ``--fixtures`` lists (its locations name each environment's folder)."""
    return re.findall(r"^(\w+)(?: \[[a-z ]+\])? -- ", done.stdout, flags=re.MULTILINE)


def _project(folder: Path, **modules: str) -> Path:
    """A foreign project: an empty pytest.ini (its rootdir) and the test modules given."""
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(text)
    return folder


def test_an_anyio_marked_test_fails_after_a_plain_install_as_without(tmp_path: Path) -> None:
    plain = environment("plain", PLAIN)
    bare = environment("bare", ("pytest",))
    project = _project(tmp_path / "p", test_async=ANYIO_TEST)
    ours, theirs = _run(plain, project), _run(bare, project)
    assert _outcome(ours) == _outcome(theirs), (ours.stdout, theirs.stdout)
    assert ours.returncode == pytest.ExitCode.TESTS_FAILED, ours.stdout
    plugins = [line for line in ours.stdout.splitlines() if line.startswith("plugins:")]
    assert plugins == ["plugins: infx-0.1.0"], plugins
    assert _run(plain, project, "--markers").stdout == _run(bare, project, "--markers").stdout
    assert _fixtures(_run(plain, project, "--fixtures")) == _fixtures(
        _run(bare, project, "--fixtures")
    )


@pytest.mark.parametrize("order", ["pytest-infx first", "syrupy first"])
def test_a_syrupy_project_runs_as_without_whichever_was_installed_first(
    order: str, tmp_path: Path
) -> None:
    installs = (GOLDEN, ("syrupy",)) if order == "pytest-infx first" else (("syrupy",), GOLDEN)
    ours = environment(order.replace(" ", "-"), *installs)
    theirs = environment("syrupy-alone", ("syrupy",))
    for conftest in ("", 'pytest_plugins = ["syrupy"]\n'):
        outcomes = []
        for python, name in ((ours, "ours"), (theirs, "theirs")):
            project = _project(tmp_path / f"{name}{len(conftest)}", test_snap=SNAPSHOT_TESTS)
            (project / "conftest.py").write_text(conftest)
            wrote = _run(python, project, "--snapshot-update")
            assert wrote.returncode == 0, wrote.stdout + wrote.stderr
            assert (project / "__snapshots__" / "test_snap.ambr").is_file()
            outcomes.append(_outcome(_run(python, project)))
        assert outcomes[0] == outcomes[1], outcomes
        assert outcomes[0][0] == 0 and "2 passed" in outcomes[0][1], outcomes


def test_the_newest_pytest_runs_an_opted_in_project(tmp_path: Path) -> None:
    """pytest has no upper bound, so a plain install gets the newest release: the internal names
    pytest-infx touches exist there, and an opted-in project runs."""
    plain = environment("plain", PLAIN)
    _pip(plain, "--upgrade", "pytest")
    checked = subprocess.run(
        [str(plain), "-c", PRIVATE_PYTEST_NAMES],
        check=False, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0 and checked.stdout == "", checked.stdout + checked.stderr
    project = _project(tmp_path / "p", test_one="def test_one():\n    assert True\n")
    (project / "pytest.ini").write_text("[pytest]\ninfx = true\n")
    ran = _run(plain, project, "--collect-only", "-q")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "test_one.py::test_one" in ran.stdout
