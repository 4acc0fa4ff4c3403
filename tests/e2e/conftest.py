from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.files.cachedir import cache_root
from pytest_infx.launch.ports import free_port

from .helpers import CURVE, golden_text, live_pids, prompts, recipe, write_recipe

TOKENIZER = Path(__file__).resolve().parents[1] / "agentic" / "data" / "tokenizer"
CACHE = cache_root()
INI = """
[pytest]
infx = true
addopts = -p no:cacheprovider
filterwarnings = ignore:Module already imported:pytest.PytestAssertRewriteWarning
"""


@dataclass
class Sweep:
    """A pytester rootdir with recipes/, prompts.jsonl, golden/ and a results folder."""

    pytester: pytest.Pytester
    root: Path
    record: Path

    @property
    def recipes(self) -> Path:
        return self.root / "recipes"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def golden(self) -> Path:
        return self.root / "golden"

    def add(self, key: str, **fields: Any) -> Path:
        """A recipe served by fake_vllm; its preferred port is free now, not the shared 8888,
        so no other engine on this machine answers (or sends) the sweep's traffic."""
        fields.setdefault("port", free_port("127.0.0.1"))
        return write_recipe(self.recipes, recipe(key, record=self.record, **fields))

    def add_agentic(self, key: str, concurrency: list[int], port: int, **block: Any) -> Path:
        """A short AgentX recipe of one TP, replayed by the real aiperf against fake_vllm;
        ``block`` adds to (or overrides) its ``agentic:`` fields."""
        data = recipe(key, record=self.record, port=port)
        del data["speedbench"]
        data["model"]["path"] = str(TOKENIZER)
        data["agentic"] = {
            "points": [{"tp": 1, "concurrency": concurrency}],
            "duration": 60,
            "request-count": 4,
            "trajectory-start-ratio": [0.0, 0.0],
            "traces": "builtin",
            "num-dataset-entries": None,
        }
        data["agentic"].update(block)
        return write_recipe(self.recipes, data)

    def commit_golden(self, cells: dict[str, dict[int, float]], name: str = CURVE) -> Path:
        self.golden.mkdir(exist_ok=True)
        path = self.golden / f"{name}.yaml"
        path.write_text(golden_text(cells))
        return path

    def run(self, *args: str) -> pytest.RunResult:
        """A separate pytest process: servers, xdist and signals need a real process."""
        return self.pytester.runpytest_subprocess(
            "--gpu", "cpu", "--infx-results", str(self.results), "-rA", *args
        )

    def cell(self, item_id: str) -> dict[str, Any]:
        import json

        return dict(json.loads((self.results / "cells" / f"{item_id}.json").read_text()))


def wait_gone(record: Path, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while live_pids(record) and time.monotonic() < deadline:
        time.sleep(0.05)
    return live_pids(record)


@pytest.fixture
def aiperf_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """aiperf, installed on first use (a minute, once) and found by the run even though
    pytester moves the home folder."""
    from pytest_infx.envs.aiperf import ensure_aiperf

    ensure_aiperf(cache_dir=CACHE)
    monkeypatch.setenv("INFX_CACHE_DIR", str(CACHE))


@pytest.fixture
def sweep(pytester: pytest.Pytester) -> Iterator[Sweep]:
    """After the test, every stand-in the run started must be gone (none is killed silently).
    The outer xdist worker's variables are kept from the inner run by tests/conftest.py."""
    pytester.makeini(INI)
    (pytester.path / "recipes").mkdir()
    prompts(pytester.path / "prompts.jsonl")
    made = Sweep(pytester, pytester.path, pytester.path / "starts.jsonl")
    yield made
    left = wait_gone(made.record, timeout=10.0)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"stand-in processes left behind: {left}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the local Slurm cluster carry the ``slurm`` marker (``-m "not slurm"`` leaves
    them out), and they take turns (its lock), so under ``--dist loadgroup`` they share one
    xdist worker instead of leaving a second one waiting on the lock. Marked before ``-m``
    selects."""
    for item in items:
        if "slurm_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slurm)
            item.add_marker(pytest.mark.xdist_group("slurm-cluster"))
