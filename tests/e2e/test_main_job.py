"""The repository's own CPU recipes, run as the README's main job runs them, in a folder of the
test's own: every cell against the real embedded engine, every AgentX point with the real aiperf,
every fixed-seq-len point with every request answered, every AL within its golden curve. The
test command runs this instead of collecting ``recipes/`` itself, so that it writes nothing into
the checkout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_infx.files.cachedir import cache_root
from pytest_infx.golden.io import load_curve

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]
CACHE = cache_root()
"""Read before pytester moves the home folder, so the run finds the engine this machine has."""
INI = """
[pytest]
infx = true
infx_engine_check = always
filterwarnings = ignore:\\s*Can not relate snapshot:UserWarning
"""


def test_the_cpu_recipes_pass_with_every_al_on_its_golden_curve(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFX_CACHE_DIR", str(CACHE))
    pytester.makeini(INI)
    shutil.copytree(REPO / "recipes", pytester.path / "recipes")
    shutil.copytree(REPO / "golden", pytester.path / "golden")
    result = pytester.runpytest_subprocess("--gpu", "cpu", "-p", "no:cacheprovider", "-rA")
    assert result.ret == 0, result.stdout.str()
    cells = sorted((pytester.path / "infx-results" / "cells").glob("*.json"))
    agentic = sorted((pytester.path / "infx-results" / "agentic").glob("*.json"))
    fixed = sorted((pytester.path / "infx-results" / "fixed-seq-len").glob("*.json"))
    result.assert_outcomes(passed=len(cells) + len(agentic) + len(fixed))
    assert len(cells) >= 10 and agentic and fixed
    for path in fixed:
        point = json.loads(path.read_text())
        assert point["verdict"] == "pass", (path.name, point["reasons"])
        assert point["requests"]["completed"] == point["requests"]["sent"], path.name
        agg = json.loads((pytester.path / "infx-results" / point["inferencex_result"]).read_text())
        assert agg["output_tput_per_gpu"] == point["figures"]["output_tput_per_gpu"] > 0
    for path in cells:
        cell = json.loads(path.read_text())
        curve = load_curve(pytester.path / "golden" / f"{cell['golden']['curve']}.yaml")
        point = cell["point"]
        assert cell["verdict"] == "pass", (path.name, cell["reasons"])
        assert cell["al"] == curve.modes[point["thinking"]][point["draft_length"]], path.name
