"""The proof that a kind of benchmark is one package: the toy kind (``tests/kinds/toykind``),
offered by a conftest's ``pytest_infx_kinds`` hook, runs its points end to end on the vLLM
stand-in, with items, markers, result files, the history, the end-of-run table and resume, while
no module of pytest-infx names it."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e.conftest import Sweep
from e2e.helpers import lit, recipe, write_recipe

from pytest_infx.history.store import Store
from pytest_infx.launch.ports import free_port

PACKAGE = Path(__file__).parent / "toykind"
PYTEST_INFX = Path(__file__).resolve().parents[2] / "pytest_infx"
KEY = "fake-toy"
IDS = [f"{KEY}[c1]", f"{KEY}[c2]"]
CONFTEST = """
from toykind import TOY


def pytest_infx_kinds():
    return [TOY]
"""


def _toy(sweep: Sweep, block: dict[str, Any] | None = None) -> Path:
    shutil.copytree(PACKAGE, sweep.root / "toykind", dirs_exist_ok=True)
    (sweep.root / "conftest.py").write_text(CONFTEST)
    data = recipe(KEY, record=sweep.record, port=free_port("127.0.0.1"))
    del data["speedbench"]
    data["kinds"] = {"toy": block or {"concurrency": [2, 1], "requests": 4, "max-tokens": 8}}
    return write_recipe(sweep.recipes, data)


def test_a_kind_from_a_conftest_runs_its_points_end_to_end(sweep: Sweep) -> None:
    _toy(sweep)
    listed = sweep.pytester.runpytest_subprocess(
        "--gpu", "cpu", "-m", "toy", "--collect-only", "-q"
    )
    assert sorted(line for line in listed.outlines if "::" in line) == [
        f"recipes/{KEY}.yaml::{item}" for item in IDS
    ]
    result = sweep.run("-m", "toy")
    result.assert_outcomes(passed=2)
    assert len(sweep.record.read_text().splitlines()) == 1, "the points share their server"
    result.stdout.fnmatch_lines(["*infx toy*", f"{lit(IDS[0])}  * output tok/s/GPU"])
    stored = json.loads((sweep.results / "toy" / f"{IDS[1]}.json").read_text())
    assert (stored["kind"], stored["verdict"], stored["details"]) == (
        "toy", "pass", {"requests": 4, "output_tokens": 32}
    )  # fmt: skip
    assert stored["point"] == {"tp": 1, "concurrency": 2, "variant": None}
    assert stored["figures"]["output_tput_per_gpu"] > 0 and stored["config"]["tp"] == 1
    with Store.open(f"sqlite:///{sweep.results / 'history.db'}") as store:
        rows = store.passing()
    assert sorted((row.item, row.kind, row.conc) for row in rows) == [
        (IDS[0], "toy", 1), (IDS[1], "toy", 2)
    ]  # fmt: skip
    assert all(row.metrics["output_tput_per_gpu"] > 0 for row in rows)
    again = sweep.run("-m", "toy", "--infx-resume")
    assert again.parseoutcomes()["reused"] == 2
    again.stdout.fnmatch_lines(
        [f"{lit(IDS[0])}: reused from toy/{lit(IDS[0])}.json: * output tok/s/GPU"]
    )
    assert len(sweep.record.read_text().splitlines()) == 1, "a reused point starts no server"


def test_an_installed_package_provides_the_kind_through_its_entry_point(
    sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same kind, from a separately installed distribution whose entry point in the
    ``pytest_infx_kinds`` group names it: no conftest at all."""
    _toy(sweep)
    (sweep.root / "conftest.py").unlink()
    site = sweep.root / "site"
    shutil.move(sweep.root / "toykind", site / "toykind")
    info = site / "infx_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: infx-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pytest_infx_kinds]\ntoy = toykind:TOY\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), *sys.path]))
    result = sweep.run("-m", "toy", "-k", "c1")
    result.assert_outcomes(passed=1)
    assert (sweep.results / "toy" / f"{IDS[0]}.json").is_file()


def test_the_plan_shows_what_the_kind_s_client_sends(sweep: Sweep) -> None:
    _toy(sweep)
    result = sweep.run("-m", "toy", "--collect-only", "--infx-plan", "-k", "c2")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            f"{lit(IDS[1])}  (fingerprint *, recipes/{KEY}.yaml:1)",
            '  client: {"max_tokens": 8, "requests": 4, "stream": true}',
        ]
    )


def test_a_change_to_the_kind_s_block_changes_its_points_fingerprints(sweep: Sweep) -> None:
    _toy(sweep)
    sweep.run("-m", "toy", "-k", "c1").assert_outcomes(passed=1)
    _toy(sweep, {"concurrency": [1], "requests": 4, "max-tokens": 6})
    again = sweep.run("-m", "toy", "--infx-resume")
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(["0 cells reused, 1 run: 1 whose recipe or engine changed *"])


def test_a_recipe_block_of_a_kind_nobody_provides_is_an_error_at_its_line(sweep: Sweep) -> None:
    path = _toy(sweep)
    text = path.read_text().replace("toy:", "toys:")
    path.write_text(text)
    line = next(n for n, each in enumerate(text.splitlines(), 1) if each.startswith("  toys:"))
    result = sweep.run("-m", "toy")
    result.stdout.fnmatch_lines(
        [
            f"*{KEY}.yaml:{line}: kinds.toys: no installed package provides the kind 'toys'"
            " (provided kinds: toy)",
            "*hint: install the package that provides it, or list it in a pytest_infx_kinds hook",
        ]
    )


def test_the_kind_refuses_a_bad_block_at_its_line(sweep: Sweep) -> None:
    _toy(sweep, {"concurrency": [1], "request": 4})
    result = sweep.run("-m", "toy")
    result.stdout.fnmatch_lines(["*kinds.toy: unknown field 'request'; a toy block has *"])


def test_a_provider_that_offers_no_kind_is_a_usage_error(sweep: Sweep) -> None:
    _toy(sweep)
    (sweep.root / "conftest.py").write_text("def pytest_infx_kinds():\n    return [object()]\n")
    result = sweep.run("-m", "toy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*pytest_infx_kinds in *conftest.py: offered <object object at *>, which is not a kind*"]
    )


def test_no_module_of_pytest_infx_names_the_toy_kind() -> None:
    """The kind came in by its package and the hook alone: adding it changed no module."""
    naming = [
        path.relative_to(PYTEST_INFX).as_posix()
        for path in PYTEST_INFX.rglob("*.py")
        if re.search(r"\btoy(kind)?\b", path.read_text(encoding="utf-8"))
    ]
    assert naming == []
    assert (PACKAGE / "__init__.py").is_file()
