from __future__ import annotations

import asyncio
import gc
import json
import selectors
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.http1 import StampingSelector
from pytest_infx.speedbench.client import (
    ClientConfig,
    RequestSampling,
    Timeouts,
    _parse_stream,
    run_pass,
    run_pass_sync,
)
from pytest_infx.speedbench.dataset import Message, Prompt

from .standin import TEXT_PIECES, StandinServer

FULL_TEXT = "".join(TEXT_PIECES)


def prompts(*texts: str) -> list[Prompt]:
    return [Prompt(f"q{i}", "coding", (Message("user", t),)) for i, t in enumerate(texts)]


def config(server: StandinServer, **kw: Any) -> ClientConfig:
    base: dict[str, Any] = {"model": "m", "max_tokens": 64, "concurrency": 2}
    base.update(kw)
    return ClientConfig(base_url=server.url, **base)


def sse(obj: object) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def delta(**d: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": d}]}


def test_a_pass_records_text_usage_and_spec_metrics(standin: StandinServer) -> None:
    result = run_pass_sync(config(standin), prompts("one", "two", "three"))
    assert [r.question_id for r in result.records] == ["q0", "q1", "q2"]
    assert result.completed == 3 and result.failed == 0
    steps = len(TEXT_PIECES)
    for r in result.records:
        assert r.error is None
        assert r.content == FULL_TEXT
        assert r.reasoning == ""
        assert r.completion_tokens == steps * standin.state.tokens_per_chunk
        assert r.completion_tokens != steps
        assert r.prompt_tokens == 11
        assert r.finish_reason == "stop"
        assert r.ttft_s is not None and r.latency_s is not None
        assert 0 < r.ttft_s <= r.latency_s
        assert r.spec is not None and r.spec.source == "vllm"
        assert r.spec.num_steps == steps
        assert r.spec.num_accepted == steps * (standin.state.tokens_per_chunk - 1)
        assert len(r.spec.histogram) == standin.state.k + 1
    assert result.wall_s > 0 and result.started > 0


def test_body_sends_kwargs_to_the_server_unrendered(standin: StandinServer) -> None:
    cfg = config(
        standin,
        max_tokens=5,
        sampling=RequestSampling(temperature=0.0, top_k=1),
        chat_template_kwargs={"enable_thinking": False},
        extra_body={"ignore_eos": True},
    )
    run_pass_sync(cfg, prompts("hello"))
    (body,) = standin.state.bodies
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 5
    assert body["temperature"] == 0.0 and body["top_k"] == 1
    assert "top_p" not in body and "seed" not in body
    assert body["ignore_eos"] is True


def test_reasoning_field_is_collected(standin: StandinServer) -> None:
    cfg = config(standin, chat_template_kwargs={"enable_thinking": True})
    (r,) = run_pass_sync(cfg, prompts("think")).records
    assert r.reasoning == FULL_TEXT
    assert r.content == ""
    assert r.ttft_s is not None


def test_concurrency_is_the_in_flight_limit(standin: StandinServer) -> None:
    standin.state.chunk_delay_s = 0.01
    result = run_pass_sync(config(standin, concurrency=3), prompts(*["x"] * 12))
    assert result.completed == 12
    assert standin.state.max_inflight == 3


def test_failures_are_recorded_per_request(standin: StandinServer) -> None:
    cfg = config(standin, concurrency=4, timeouts=Timeouts(connect_s=2, read_s=0.5, total_s=30))
    result = run_pass_sync(
        cfg,
        prompts(
            "fine", "[[fail:503]]", "[[error]]", "[[event-error]]", "[[stall]]", "[[truncate]]"
        ),
    )
    by_id = {r.question_id: r for r in result.records}
    assert by_id["q0"].error is None
    http = by_id["q1"].error
    assert http is not None and http.kind == "http" and http.status == 503
    assert "stand-in failure" in http.message
    for qid in ("q2", "q3"):
        err = by_id[qid].error
        assert err is not None and err.kind == "stream" and "engine died" in err.message
    stall = by_id["q4"].error
    assert stall is not None and stall.kind == "timeout"
    cut = by_id["q5"].error
    assert cut is not None and cut.kind in ("protocol", "connection")
    assert result.failed == 5


def test_total_timeout_ends_a_slow_stream(standin: StandinServer) -> None:
    standin.state.chunk_delay_s = 0.2
    cfg = config(standin, timeouts=Timeouts(connect_s=2, read_s=5, total_s=0.3))
    (r,) = run_pass_sync(cfg, prompts("slow")).records
    assert r.error is not None and r.error.kind == "timeout"
    assert "total timeout of 0.3 s" in r.error.message


def test_empty_output_is_not_an_error(standin: StandinServer) -> None:
    (r,) = run_pass_sync(config(standin), prompts("[[empty]]")).records
    assert r.error is None
    assert r.content == "" and r.reasoning == ""
    assert r.completion_tokens == 0
    assert r.ttft_s is None


def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = ClientConfig(
        base_url=f"http://127.0.0.1:{port}",
        model="m",
        max_tokens=4,
    )
    (r,) = run_pass_sync(cfg, prompts("x")).records
    assert r.error is not None and r.error.kind == "connection"


def test_async_entry_point_and_connection_reuse(standin: StandinServer) -> None:
    async def go() -> int:
        cfg = config(standin, concurrency=1)
        a = await run_pass(cfg, prompts("a", "b", "c"))
        return a.completed

    assert asyncio.run(go()) == 3
    assert standin.connections == 1


def test_keep_alive_survives_error_answers(standin: StandinServer) -> None:
    cfg = config(standin, concurrency=1)
    result = run_pass_sync(cfg, prompts("[[fail:500]]", "ok", "[[fail:400]]", "ok"))
    assert [r.error is None for r in result.records] == [False, True, False, True]
    assert [r.error.status for r in result.records if r.error] == [500, 400]


def test_ttft_is_the_arrival_of_the_first_text_chunk_not_of_the_role_chunk() -> None:
    frames = [
        sse(delta(role="assistant", content="")),
        sse(delta(content="he")),
        sse(delta(content="llo"))[:10],
        sse(delta(content="llo"))[10:]
        + sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
        sse({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}}),
        b"data: [DONE]\n\n",
    ]
    stamps = [100.5, 101.0, 101.5, 102.0, 103.0, 104.0]
    r = _parse_stream("q", 100.0, frames, stamps, None)
    assert r.error is None
    assert r.content == "hello"
    assert r.ttft_s == pytest.approx(1.0)
    assert r.latency_s == pytest.approx(2.0)
    assert r.finish_reason == "length"
    assert r.completion_tokens == 9 and r.prompt_tokens == 3


def test_crlf_lines_reasoning_content_and_sglang_details() -> None:
    details = {
        "spec_verify_ct": 4,
        "spec_num_correct_drafts": 6,
        "spec_num_proposed_drafts": 12,
        "spec_accept_length": 2.5,
        "spec_correct_drafts_histogram": [1, 1, 1, 1],
    }
    body = (
        sse(delta(reasoning_content="why")).replace(b"\n", b"\r\n")
        + sse(delta(content="so"))
        + sse(
            {
                "choices": [],
                "usage": {"completion_tokens": 10},
                "sglext": {"spec_tokens_details": details},
            }
        )
        + b"data: [DONE]\n\n"
    )
    r = _parse_stream("q", 0.0, [body], [1.0], None)
    assert r.error is None
    assert (r.reasoning, r.content) == ("why", "so")
    assert r.spec is not None and r.spec.source == "sglang"
    assert (r.spec.num_steps, r.spec.num_accepted, r.spec.num_drafted) == (4, 6, 12)
    assert r.spec.mean_acceptance_length == 2.5


def test_stream_without_done_or_with_garbage_is_a_protocol_error() -> None:
    cut = _parse_stream("q", 0.0, [sse(delta(content="a"))], [1.0], None)
    assert cut.error is not None and cut.error.kind == "protocol"
    assert cut.content == "a"
    junk = _parse_stream("q", 0.0, [b"data: {nope\n\ndata: [DONE]\n\n"], [1.0], None)
    assert junk.error is not None and "unparsable" in junk.error.message


REAL_DATA = Path(__file__).resolve().parent.parent / "envs" / "data"
REAL_STREAMS = sorted(REAL_DATA.glob("*.sse")) if REAL_DATA.is_dir() else []


@pytest.mark.skipif(not REAL_STREAMS, reason="no saved real vLLM stream yet")
@pytest.mark.parametrize("path", REAL_STREAMS, ids=lambda p: p.stem)
def test_real_vllm_streams_parse_identically_however_they_are_cut(path: Path) -> None:
    raw = path.read_bytes()
    frames = [
        json.loads(line[len("data: ") :])
        for line in raw.decode().splitlines()
        if line.startswith("data: {")
    ]
    usage = next(f["usage"] for f in frames if f.get("usage"))
    spec = next((f["metrics"]["speculative_decoding"] for f in frames if f.get("metrics")), None)
    texts = [
        (c["delta"].get("content") or "", c["delta"].get("reasoning") or "")
        for f in frames
        for c in f["choices"]
    ]

    whole = _parse_stream("q", 0.0, [raw], [1.0], None)
    pieces = [raw[i : i + 97] for i in range(0, len(raw), 97)]
    cut = _parse_stream("q", 0.0, pieces, [1.0 + i for i in range(len(pieces))], None)
    for r in (whole, cut):
        assert r.error is None
        assert r.content == "".join(t[0] for t in texts)
        assert r.reasoning == "".join(t[1] for t in texts)
        assert r.completion_tokens == usage["completion_tokens"]
        assert r.prompt_tokens == usage["prompt_tokens"]
        if spec is not None:
            assert r.spec is not None
            assert r.spec.num_steps == spec["num_spec_steps"]
            assert r.spec.num_accepted == spec["num_accepted_draft_tokens"]
    assert cut.ttft_s is not None and cut.latency_s is not None
    assert cut.ttft_s < cut.latency_s


@pytest.mark.parametrize("pause_gc", [True, False])
def test_gc_is_paused_only_during_the_pass(standin: StandinServer, pause_gc: bool) -> None:
    assert gc.isenabled()
    run_pass_sync(config(standin, pause_gc=pause_gc), prompts("a", "b"))
    assert standin.state.gc_enabled == [not pause_gc] * 2
    assert gc.isenabled()


@pytest.mark.parametrize("loop", ["auto", "stamping", "asyncio", "uvloop"])
def test_every_event_loop_runs_a_pass(standin: StandinServer, loop: str) -> None:
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    cfg = config(standin)
    result = run_pass_sync(cfg, prompts("a", "[[fail:500]]"), loop=loop)  # type: ignore[arg-type]
    assert [r.error is None for r in result.records] == [True, False]
    assert result.records[0].content == FULL_TEXT
    assert result.records[0].ttft_s is not None and result.records[0].ttft_s > 0


def test_stamping_selector_stamps_the_poll_return() -> None:
    a, b = socket.socketpair()
    selector = StampingSelector()
    try:
        selector.register(a, selectors.EVENT_READ)
        b.send(b"x")
        before = time.perf_counter()
        events = selector.select(1.0)
        after = time.perf_counter()
        assert len(events) == 1
        assert before <= selector.clock() <= after
    finally:
        selector.close()
        a.close()
        b.close()


def test_presence_penalty_is_sent_when_the_recipe_gives_one(standin: StandinServer) -> None:
    cfg = config(
        standin, max_tokens=5, sampling=RequestSampling(temperature=0.7, presence_penalty=1.5)
    )
    run_pass_sync(cfg, prompts("hello"))
    (body,) = standin.state.bodies
    assert body["presence_penalty"] == 1.5 and body["temperature"] == 0.7
