from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_infx.launch.ports import free_port

from .conftest import Sweep
from .helpers import MODES

KEY = "fake-cpu-vllm"
CONFTEST = """
import json
import os
from pathlib import Path


def pytest_infx_result(config, path, record):
    entry = {
        "path": str(path),
        "record": record,
        "on_disk": json.loads(path.read_text()),
        "worker": os.environ.get("PYTEST_XDIST_WORKER"),
        "rootdir": str(config.rootpath),
    }
    with open(Path(__file__).parent / "seen.jsonl", "a") as handle:
        handle.write(json.dumps(entry) + "\\n")
    record["verdict"] = "changed by the hook"
"""


def _seen(sweep: Sweep) -> list[dict[str, Any]]:
    path = sweep.root / "seen.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_conftest_gets_each_written_cell_result_failed_ones_too(
    sweep: Sweep, workers: tuple[str, ...]
) -> None:
    sweep.pytester.makeconftest(CONFTEST)
    sweep.add(KEY, draft_lengths=(1,), faults=("empty-output=1",))
    sweep.run("--snapshot-update", *workers).assert_outcomes(passed=1, failed=1)
    seen = {entry["record"]["id"]: entry for entry in _seen(sweep)}
    ids = [f"{KEY}[k1-{mode}]" for mode in MODES]
    assert sorted(seen) == sorted(ids), "one call per cell, each with its record"
    for item_id in ids:
        entry = seen[item_id]
        assert entry["path"] == str(sweep.results / "cells" / f"{item_id}.json")
        assert entry["record"] == entry["on_disk"] == sweep.cell(item_id), (
            "the hook sees the whole file, and what it does to its record stays its own"
        )
        assert entry["rootdir"] == str(sweep.root)
        assert (entry["worker"] is not None) == bool(workers), "called where the cell ran"
    assert sorted(e["record"]["verdict"] for e in seen.values()) == ["fail", "pass"]


def test_a_reused_cell_writes_no_result_and_calls_no_hook(sweep: Sweep) -> None:
    sweep.pytester.makeconftest(CONFTEST)
    sweep.add(KEY, draft_lengths=(1,))
    sweep.run("--snapshot-update").assert_outcomes(passed=2)
    assert len(_seen(sweep)) == 2
    result = sweep.run("--infx-resume")
    assert result.parseoutcomes().get("reused") == 2
    assert len(_seen(sweep)) == 2


@pytest.mark.engine
@pytest.mark.usefixtures("aiperf_installed")
def test_a_conftest_gets_each_written_agentic_point_result(sweep: Sweep) -> None:
    sweep.pytester.makeconftest(CONFTEST)
    sweep.add_agentic("fake-agentic", [1], free_port("127.0.0.1"))
    sweep.run("-m", "agentic", "-p", "no:randomly").assert_outcomes(passed=1)
    (entry,) = _seen(sweep)
    item_id = "fake-agentic[tp1-c1]"
    path = sweep.results / "agentic" / f"{item_id}.json"
    assert entry["path"] == str(path)
    assert entry["record"] == entry["on_disk"] == json.loads(path.read_text())
    assert (entry["record"]["id"], entry["record"]["verdict"]) == (item_id, "pass")
