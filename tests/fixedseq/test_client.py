from __future__ import annotations

import pytest

from pytest_infx.fixedseq.client import (
    Connections,
    FixedClientConfig,
    parse_stream,
    run_requests_sync,
)
from pytest_infx.fixedseq.prompts import RandomRequest

from .conftest import Server, frame, text, usage


def test_every_frame_with_choices_is_a_token_arrival() -> None:
    chunks = [
        frame(text("a")),
        frame(text("")) + frame(text("b")),
        frame(usage(3)),
        b"data: [DONE]\n\n",
    ]
    out = parse_stream(10.0, chunks, [10.5, 10.75, 11.0, 11.0])
    assert out.success and out.error == ""
    assert out.generated_text == "ab"
    assert out.output_tokens == 3
    assert out.ttft_s == pytest.approx(0.5)
    assert out.itl_s == pytest.approx((0.25, 0.0))
    assert out.latency_s == pytest.approx(0.75)
    assert out.frames == 4


@pytest.mark.parametrize(
    ("chunks", "error"),
    [
        ([frame(text("a"))], "ended before 'data: [DONE]'"),
        ([frame(usage(0)), b"data: [DONE]\n\n"], "carried no tokens"),
        ([frame({"error": {"message": "boom"}}), b"data: [DONE]\n\n"], "error in stream: "),
        ([b"data: {nope\n\n", b"data: [DONE]\n\n"], "not JSON"),
    ],
)
def test_a_stream_that_is_not_a_whole_completion_fails_the_request(
    chunks: list[bytes], error: str
) -> None:
    out = parse_stream(0.0, chunks, [1.0] * len(chunks))
    assert not out.success
    assert error in out.error


def _requests(*prompts: str, out: int = 4) -> list[RandomRequest]:
    return [RandomRequest(p, 10, out, (1, 2)) for p in prompts]


def test_warm_ups_go_first_and_the_measured_requests_keep_their_order(server: Server) -> None:
    config = FixedClientConfig(server.url, "m", concurrency=2, warmups=3)
    outcome = run_requests_sync(config, _requests("a", "b", "c", "d", "e"))
    prompts = [str(b["prompt"]) for b in server.bodies]
    assert prompts[:3] == ["a", "a", "a"]
    assert sorted(prompts[3:]) == ["a", "b", "c", "d", "e"]
    assert len(outcome.outputs) == 5
    assert all(
        o.success and o.output_tokens == 4 and o.generated_text == "xxxx" for o in outcome.outputs
    )
    assert server.most == 2
    assert outcome.duration_s > 0
    sent = server.bodies[-1]
    assert sent["ignore_eos"] is True and sent["stream"] is True and sent["max_tokens"] == 4
    assert sent["model"] == "m" and sent["temperature"] == 0.0


def test_a_failed_request_is_kept_with_its_error_and_the_rest_run(server: Server) -> None:
    config = FixedClientConfig(server.url, "m", concurrency=1)
    outcome = run_requests_sync(config, _requests("a", "fail", "b"))
    assert [o.success for o in outcome.outputs] == [True, False, True]
    assert outcome.outputs[1].error.startswith("HTTP 500")


def test_a_server_that_is_not_there_fails_every_request_by_name() -> None:
    config = FixedClientConfig("http://127.0.0.1:9", "m", concurrency=2, connect_timeout_s=2)
    outcome = run_requests_sync(config, _requests("a", "b"))
    assert [o.success for o in outcome.outputs] == [False, False]
    assert all("127.0.0.1:9" in o.error for o in outcome.outputs)


def test_each_measured_request_is_reported_as_it_ends_and_warm_ups_are_not(
    server: Server,
) -> None:
    seen: list[int | None] = []
    config = FixedClientConfig(server.url, "m", concurrency=2, warmups=2)
    run_requests_sync(
        config, _requests("a", "b", "c", out=3), on_done=lambda o: seen.append(o.output_tokens)
    )
    assert seen == [3, 3, 3]


@pytest.mark.parametrize(("connections", "opened"), [("per-request", 8), ("kept-alive", 4)])
def test_each_request_opens_its_own_connection_as_inferencex_s_client_does_unless_kept_alive(
    server: Server, connections: Connections, opened: int
) -> None:
    config = FixedClientConfig(server.url, "m", concurrency=2, warmups=2, connections=connections)
    outcome = run_requests_sync(config, _requests(*"abcdef"))
    assert all(o.success for o in outcome.outputs)
    assert server.connections == opened
