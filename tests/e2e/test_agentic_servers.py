"""AgentX points against the fake vLLM through real aiperf: each concurrency gets a server
admitting 2 x that concurrency, points launched alike share one, and each point leaves our
result file and InferenceX's, under InferenceX's name."""

from __future__ import annotations

import json

import pytest

from pytest_infx.engines.registry import installed
from pytest_infx.prepare.identity import identity_of
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import expand

from .conftest import Sweep
from .helpers import records


@pytest.mark.engine
def test_a_server_per_concurrency_shared_by_points_launched_alike(
    aiperf_installed: None, sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_infx.launch.ports import free_port

    monkeypatch.delenv("RUNNER_NAME", raising=False)
    port = free_port("127.0.0.1")
    main = sweep.add_agentic("fake-agentic", [1, 2], port)
    sweep.add_agentic("fake-agentic-twin", [2], port)
    result = sweep.run("-m", "agentic", "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    starts = records(sweep.record)
    admissions = sorted(int(s["argv"][s["argv"].index("--max-num-seqs") + 1]) for s in starts)
    assert admissions == [2, 4]
    ours = {
        item: json.loads((sweep.results / "agentic" / f"{item}.json").read_text())
        for item in ("fake-agentic[tp1-c1]", "fake-agentic[tp1-c2]", "fake-agentic-twin[tp1-c2]")
    }
    logs = {item: record["server"]["log"] for item, record in ours.items()}
    assert logs["fake-agentic[tp1-c2]"] == logs["fake-agentic-twin[tp1-c2]"]
    assert logs["fake-agentic[tp1-c1]"] != logs["fake-agentic[tp1-c2]"]
    for point in expand(load_file(main)):
        record = ours[point.id]
        identity = identity_of(point, runner="cpu", engines=installed())
        name = f"agentic/inferencex/{identity.file_name()}.json"
        assert record["inferencex_result"] == name
        agg = json.loads((sweep.results / name).read_text())
        assert agg["conc"] == point.concurrency
        assert record["throughput"]["method"] == "inferencex"
        per_gpu = agg["request_metrics"]["throughput"]["per_gpu"]
        assert record["throughput"]["total_tokens_per_s_per_gpu"] == per_gpu["total_tput_tps"]
        assert per_gpu["total_tput_tps"] > per_gpu["output_tput_tps"] > 0
