"""An AgentX point measured in ``repeats:`` passes through the real aiperf against the fake vLLM:
each pass leaves its own folder, the record keeps each pass's figures and their median, the
history stores the median, and InferenceX's aggregate is the median pass's."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from pytest_infx.history.store import Store
from pytest_infx.launch.ports import free_port
from pytest_infx.results.passes import median_index

from .conftest import Sweep

ITEM = "fake-agentic-repeats[tp1-c2]"


@pytest.mark.engine
def test_a_point_in_three_real_aiperf_passes_keeps_each_and_reports_the_median_pass(
    aiperf_installed: None, sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    sweep.add_agentic("fake-agentic-repeats", [2], free_port("127.0.0.1"), repeats=3)
    db = f"sqlite:///{sweep.root / 'history.db'}"
    result = sweep.run(
        "-m", "agentic", "-p", "no:randomly", "--infx-db", db, "--infx-branch", "main"
    )
    result.assert_outcomes(passed=1)
    folder = sweep.results / "agentic" / ITEM
    folders = sorted(path.name for path in folder.iterdir() if path.is_dir())
    assert folders == ["pass-1", "pass-2", "pass-3"]
    for name in folders:
        assert (folder / name / "profile_export_aiperf.json").is_file()
    record = json.loads((sweep.results / "agentic" / f"{ITEM}.json").read_text())
    passes, median = record["passes"], record["median"]
    assert len(passes) == 3
    for name in ("output_tput_per_gpu", "tput_per_gpu", "median_ttft"):
        assert median[name] == statistics.median(each[name] for each in passes)
    chosen = median_index(passes, "output_tput_per_gpu")
    assert Path(record["aiperf"]["export"]).parent.name == f"pass-{chosen + 1}"
    throughput = record["throughput"]
    assert throughput["output_tokens_per_s_per_gpu"] == median["output_tput_per_gpu"]
    agg = json.loads((sweep.results / record["inferencex_result"]).read_text())
    per_gpu = agg["request_metrics"]["throughput"]["per_gpu"]
    assert per_gpu["output_tput_tps"] == passes[chosen]["output_tput_per_gpu"]
    assert per_gpu["total_tput_tps"] == passes[chosen]["tput_per_gpu"]
    with Store.open(db) as store:
        [row] = store.series(ITEM)
    assert {name: row.metrics[name] for name in median} == median
