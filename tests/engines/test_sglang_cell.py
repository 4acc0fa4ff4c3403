"""A SPEED-Bench cell against the SGLang 0.5.21 stand-in: the request asks for the per-request
details, both AL sources are read the way SGLang reports them, and the agreement check runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.spec import SpecCounters
from pytest_infx.speedbench import checks
from pytest_infx.speedbench.cell import CellOutcome, CellSettings, run_cell
from pytest_infx.speedbench.client import ClientConfig, RequestSampling, run_pass_sync
from pytest_infx.speedbench.dataset import Dataset, default_dataset_path, load_dataset
from pytest_infx.speedbench.metrics import scrape

from .sglang_standin import FIXED_TOKEN, SglangStandin


@pytest.fixture
def sglang() -> Iterator[SglangStandin]:
    with SglangStandin() as server:
        yield server


def dataset(n: int = 8) -> Dataset:
    ds = load_dataset(default_dataset_path(), category="coding")
    return Dataset(ds.name, ds.path, ds.category, ds.sha256, ds.rows[:n])


def cell(server: SglangStandin) -> CellOutcome:
    settings = CellSettings(
        base_url=server.url,
        model="standin-model",
        engine="sglang",
        draft_length=server.state.k,
        thinking=False,
        chat_template_kwargs={"enable_thinking": False},
        max_tokens=64,
        concurrency=2,
        sampling=RequestSampling(),
        request_timeout_s=30,
    )
    return run_cell(settings, dataset())


def test_an_sglang_cell_yields_request_weighted_al_and_agrees(sglang: SglangStandin) -> None:
    outcome = cell(sglang)
    assert outcome.reasons == ()
    assert all(body["return_spec_tokens_details"] is True for body in sglang.state.bodies)
    summary = outcome.summary
    assert summary.requests_with_metrics == 8
    assert summary.request_weighted is not None and summary.standard_error is not None
    assert summary.al is not None and summary.token_weighted is not None
    assert summary.al == pytest.approx(summary.token_weighted)
    steps, k = sglang.state.steps, sglang.state.k
    per_request = [(1 + steps * ((i % (k + 1)) + 1)) / steps for i in range(1, 9)]
    assert summary.request_weighted == pytest.approx(sum(per_request) / 8)
    generated = sum(sglang.state.generation.values())
    assert summary.al == pytest.approx(generated / (8 * steps))


def test_traffic_outside_the_pass_fails_the_agreement_check(sglang: SglangStandin) -> None:
    sglang.state.steps = 4

    def other_traffic(done: object) -> None:
        sglang.state.generation["false"] = sglang.state.generation.get("false", 0) + 40
        sglang.state.verify_calls += 5

    config = ClientConfig(sglang.url, "standin-model", max_tokens=8)
    settings = CellSettings(
        base_url=sglang.url,
        model="standin-model",
        engine="sglang",
        draft_length=sglang.state.k,
        thinking=False,
        chat_template_kwargs={},
        max_tokens=64,
        concurrency=1,
        sampling=RequestSampling(),
        request_timeout_s=30,
    )
    run_pass_sync(config, dataset(1).rows)
    outcome = run_cell(settings, dataset(4), on_done=other_traffic)
    assert checks.AL_DISAGREE in [r.code for r in outcome.reasons]


def test_details_come_only_when_asked(sglang: SglangStandin) -> None:
    plain = run_pass_sync(ClientConfig(sglang.url, "m", max_tokens=8), dataset(1).rows)
    assert plain.records[0].spec is None
    asked = ClientConfig(
        sglang.url,
        "m",
        max_tokens=8,
        extra_body=SglangAdapter().request_fields(),
        spec_reader=SglangAdapter().request_spec,
    )
    (record,) = run_pass_sync(asked, dataset(1).rows).records
    assert record.spec is not None and record.spec.source == "sglang"


@pytest.mark.parametrize(("mode", "repeated"), [("fixed", True), ("real-draft-token", False)])
def test_the_synthetic_token_mode_decides_what_is_generated(mode: str, repeated: bool) -> None:
    env = {**SglangAdapter().synthetic(2.0, 3).env, "SGLANG_SIMULATE_ACC_TOKEN_MODE": mode}
    with SglangStandin(env=env) as server:
        (record,) = run_pass_sync(
            ClientConfig(server.url, "m", max_tokens=8), dataset(1).rows
        ).records
    assert (set(record.content.split(FIXED_TOKEN)) == {""}) is repeated


def test_the_adapter_s_synthetic_env_keeps_real_tokens() -> None:
    env = SglangAdapter().synthetic(2.0, 3).env
    with SglangStandin(env=env) as server:
        (record,) = run_pass_sync(
            ClientConfig(server.url, "m", max_tokens=8), dataset(1).rows
        ).records
        counters = asyncio.run(_counters(server.url))
    assert FIXED_TOKEN not in record.content and record.content
    assert counters.drafts == server.state.steps


async def _counters(url: str) -> SpecCounters:
    return SglangAdapter().spec_counters(await scrape(url))
