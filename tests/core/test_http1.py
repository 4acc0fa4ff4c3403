from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator

import pytest
from speedbench.standin import StandinServer

from pytest_infx.http1 import HTTPError, Response, fetch


@pytest.fixture
def standin() -> Iterator[StandinServer]:
    with StandinServer() as server:
        yield server


def call(
    base_url: str, method: str, path: str, body: bytes = b"", *, timeout_s: float = 5
) -> Response:
    return asyncio.run(fetch(base_url, method, path, body, timeout_s=timeout_s))


def chat(prompt: str) -> bytes:
    messages = [{"role": "user", "content": prompt}]
    return json.dumps({"model": "m", "messages": messages, "max_tokens": 64}).encode()


def test_get_returns_status_and_the_whole_body(standin: StandinServer) -> None:
    standin.state.drafts = 7
    resp = call(standin.url, "GET", "/metrics")
    assert resp.status == 200
    assert resp.headers["content-type"] == "text/plain"
    text = resp.body.decode()
    assert text == standin.state.metrics_text()
    assert 'vllm:spec_decode_num_drafts_total{engine="0",model_name="standin-model"} 7.0' in text


def test_post_sends_the_body_and_reads_json(standin: StandinServer) -> None:
    body = json.dumps({"model": "m", "tokens": [104, 105]}).encode()
    resp = call(standin.url, "POST", "/detokenize", body)
    assert resp.status == 200
    assert json.loads(resp.body) == {"prompt": "hi"}


def test_an_error_status_is_an_answer_not_a_failure(standin: StandinServer) -> None:
    resp = call(standin.url + "/prefix", "GET", "/metrics")
    assert resp.status == 404
    assert json.loads(resp.body) == {"error": {"message": "no route /prefix/metrics"}}


def test_each_call_opens_and_closes_its_own_connection(standin: StandinServer) -> None:
    for _ in range(3):
        assert call(standin.url, "GET", "/health").status == 200
    assert standin.connections == 3


def test_chunked_bodies_are_joined(standin: StandinServer) -> None:
    resp = call(standin.url, "POST", "/v1/chat/completions", chat("hello"))
    assert resp.status == 200
    assert resp.headers["transfer-encoding"] == "chunked"
    text = resp.body.decode()
    assert text.rstrip().endswith("data: [DONE]")
    assert text.count("data: ") > 5


def test_connection_refused_raises_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HTTPError, match=f"connect to 127.0.0.1:{port}") as info:
        call(f"http://127.0.0.1:{port}", "GET", "/metrics")
    assert info.value.kind == "connection"


def test_a_stalled_answer_raises_a_timeout_within_the_limit(standin: StandinServer) -> None:
    started = time.monotonic()
    with pytest.raises(HTTPError) as info:
        call(standin.url, "POST", "/v1/chat/completions", chat("[[stall]]"), timeout_s=0.3)
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < 2


def test_an_answer_cut_short_raises_instead_of_returning_part(standin: StandinServer) -> None:
    with pytest.raises(HTTPError, match="closed before the response ended") as info:
        call(standin.url, "POST", "/v1/chat/completions", chat("[[truncate]]"))
    assert info.value.kind == "connection"
