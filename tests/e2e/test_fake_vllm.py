from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_infx.launch.ports import free_port
from pytest_infx.speedbench.al import token_weighted_al
from pytest_infx.speedbench.client import ClientConfig, run_pass_sync
from pytest_infx.speedbench.dataset import load_dataset
from pytest_infx.speedbench.metrics import parse_prometheus, spec_counters

from .fake_vllm import FAULTS_ENV, UsageError, expected_al, parse_argv, steps_for
from .helpers import FAKE, prompts, records

PLUGIN_ARGV = [
    "--model",
    "models/target",
    "--served-model-name",
    "m",
    "--host",
    "127.0.0.1",
    "--port",
    "8000",
    "--tensor-parallel-size",
    "1",
    "--max-model-len",
    "2048",
    "--enforce-eager",
    "--reasoning-parser",
    "deepseek_v3",
    "--speculative-config",
    '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}',
]


def test_the_plugin_argv_is_understood() -> None:
    options = parse_argv(["--fault", "fail-requests=2", *PLUGIN_ARGV], environ={})
    assert (options.port, options.served_name, options.k) == (8000, "m", 3)
    assert options.reasoning_parser == "deepseek_v3"
    assert options.faults == {"fail-requests": 2}


def test_faults_come_from_the_environment_too() -> None:
    options = parse_argv(PLUGIN_ARGV, environ={FAULTS_ENV: "ignore-thinking,crash-after=3"})
    assert options.faults == {"ignore-thinking": None, "crash-after": 3}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fault", "explode"], "unknown fault 'explode'"),
        (["--fault", "fail-requests=x"], "the count must be a whole number"),
        (["--model", "m"], "--port is required"),
    ],
)
def test_bad_argv_is_refused_with_the_reason(argv: list[str], message: str) -> None:
    port = [] if "--port" in message else ["--port", "1"]
    with pytest.raises(UsageError, match=message):
        parse_argv([*port, *argv], environ={})


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_whole_pattern_cycles_give_the_expected_al(k: int) -> None:
    plan = steps_for((3, 0), k, max_tokens=16)
    assert len(plan) % 2 == 0
    assert 1 + sum(plan) / len(plan) == expected_al((3, 0), k)
    assert sum(a + 1 for a in plan) <= 16


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """fake_vllm on a free port, 0.5 s before it listens, with two requests that fail."""
    port = free_port("127.0.0.1")
    record = tmp_path / "starts.jsonl"
    argv = [a if a != "8000" else str(port) for a in PLUGIN_ARGV]
    argv += ["--per-request-spec-decode-metrics", "summary", "--start-delay", "0.5"]
    argv += ["--record", str(record), "--fault", "fail-requests=2"]
    proc = subprocess.Popen([sys.executable, str(FAKE), *argv], stdout=subprocess.DEVNULL)
    try:
        yield port, record
    finally:
        proc.terminate()
        proc.wait(10)


def test_refuses_connections_until_ready_then_serves(served: tuple[int, Path]) -> None:
    port, record = served
    with pytest.raises(ConnectionRefusedError):
        _get(port, "/health")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            status, _ = _get(port, "/health")
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    assert status == 200
    assert [r["port"] for r in records(record)] == [port]
    status, body = _get(port, "/v1/models")
    assert json.loads(body)["data"][0]["id"] == "m"


def test_counters_match_the_per_request_metrics(served: tuple[int, Path], tmp_path: Path) -> None:
    port, _ = served
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            _get(port, "/health")
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    rows = load_dataset(prompts(tmp_path / "p.jsonl", 6), category="coding").rows
    config = ClientConfig(
        base_url=f"http://127.0.0.1:{port}",
        model="m",
        max_tokens=12,
        concurrency=3,
        chat_template_kwargs={"enable_thinking": True},
    )
    result = run_pass_sync(config, rows)
    assert (result.completed, result.failed) == (4, 2)
    assert all(r.reasoning and r.content for r in result.records if r.ok)
    specs = [r.spec for r in result.records if r.spec is not None]
    counters = spec_counters(parse_prometheus(_get(port, "/metrics")[1].decode()), "vllm")
    assert counters.drafts == sum(s.num_steps for s in specs)
    assert counters.accepted == sum(s.num_accepted for s in specs)
    assert counters.accepted is not None and counters.drafts
    assert 1 + counters.accepted / counters.drafts == token_weighted_al(specs)
    assert token_weighted_al(specs) == expected_al((3, 0), 3)
    assert sum(counters.accepted_per_pos) == counters.accepted
