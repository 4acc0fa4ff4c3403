from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.speedbench import checks
from pytest_infx.speedbench.al import counter_al, token_weighted_al
from pytest_infx.speedbench.client import (
    ClientConfig,
    RequestError,
    RequestRecord,
    RequestSpecMetrics,
    run_pass_sync,
)
from pytest_infx.speedbench.dataset import default_dataset_path, load_dataset
from pytest_infx.speedbench.metrics import (
    CounterDelta,
    SpecCounters,
    delta,
    parse_prometheus,
    scrape,
    spec_counters,
)

from .standin import StandinServer


def rec(
    qid: str = "q",
    content: str = "x",
    reasoning: str = "",
    tokens: int | None = 1,
    error: RequestError | None = None,
    spec: RequestSpecMetrics | None = None,
) -> RequestRecord:
    return RequestRecord(qid, content, reasoning, tokens, 1, 0.1, 0.2, "stop", spec, error, 0.0)


def codes(reasons: list[checks.Reason]) -> list[str]:
    return [r.code for r in reasons]


def cd(
    drafts: float | None, accepted: float | None, decreased: tuple[str, ...] = ()
) -> CounterDelta:
    return CounterDelta("vllm", drafts, None, accepted, (), None, decreased)


def test_requests_all_completed_passes_and_failures_are_counted() -> None:
    assert checks.check_requests([rec(str(i)) for i in range(80)], expected=80) == []
    records = [rec(str(i)) for i in range(78)] + [
        rec("bad1", error=RequestError("http", "HTTP 500: boom", 500)),
        rec("bad2", error=RequestError("timeout", "ReadTimeout")),
    ]
    reasons = checks.check_requests(records, expected=80)
    assert codes(reasons) == [checks.INCOMPLETE, checks.FAILED]
    assert reasons[0].message == "78/80 completed, 2 failed"
    assert "2 of 80 requests failed (1 http, 1 timeout)" in reasons[1].message
    assert "bad1: HTTP 500: boom" in reasons[1].message
    short = checks.check_requests([rec()] * 79, expected=80)
    assert [r.message for r in short] == ["79/80 completed, 0 failed"]


def test_empty_outputs() -> None:
    assert checks.check_empty_outputs([rec(), rec(content="", reasoning="r")]) == []
    (reason,) = checks.check_empty_outputs([rec("a"), rec("b", content="", tokens=0)])
    assert reason.code == checks.EMPTY
    assert "1 of 2 completed requests" in reason.message and "b" in reason.message
    assert checks.check_empty_outputs([rec(content="", tokens=5)]) == []


def test_rendered_prompt_must_match_the_mode() -> None:
    on, off = "<|im_start|>assistant\n<think>\n", "<|im_start|>assistant\n"
    assert checks.check_rendered_prompt(on, thinking=True) == []
    assert checks.check_rendered_prompt(off, thinking=False) == []
    assert codes(checks.check_rendered_prompt(off, thinking=True)) == [checks.PROMPT_THINKING]
    (r,) = checks.check_rendered_prompt(on, thinking=False)
    assert "thinking is off" in r.message and "<think>" in r.message


def test_reasoning_presence_must_match_the_mode() -> None:
    thinking = [rec("a", content="", reasoning="hm"), rec("b", content="<think>x</think>y")]
    plain = [rec("c"), rec("d")]
    assert checks.check_reasoning(thinking, thinking=True) == []
    assert checks.check_reasoning(plain, thinking=False) == []
    (r,) = checks.check_reasoning([*thinking, *plain], thinking=True)
    assert r.message.startswith("2 of 4 outputs have no reasoning") and "c, d" in r.message
    (r,) = checks.check_reasoning([*thinking, *plain], thinking=False)
    assert r.message.startswith("2 of 4 outputs carry reasoning") and "a, b" in r.message
    failed = rec("e", content="", error=RequestError("http", "x"))
    assert checks.check_reasoning([*thinking, failed], thinking=True) == []


def test_counter_plausibility() -> None:
    assert checks.check_counters(cd(10, 20), k=3) == []
    assert codes(checks.check_counters(cd(None, None), k=3)) == [checks.NO_SPEC]
    assert codes(checks.check_counters(cd(0, 0), k=3)) == [checks.NO_DRAFTS]
    r, al = checks.check_counters(cd(10, 31), k=3)
    assert r.code == checks.ACCEPTED_RANGE and "[0, 30]" in r.message and "31" in r.message
    assert al.code == checks.AL_RANGE and "4.1000" in al.message and "[1, 4]" in al.message
    assert codes(checks.check_counters(cd(10, -1), k=3)) == [checks.ACCEPTED_RANGE, checks.AL_RANGE]
    (r,) = checks.check_counters(cd(5, 1, decreased=("drafts 10 -> 3",)), k=3)
    assert r.code == checks.RESET and "drafts 10 -> 3" in r.message


def test_al_agreement() -> None:
    specs = [
        RequestSpecMetrics("vllm", 10, 10, 30, None),
        RequestSpecMetrics("vllm", 10, 12, 30, None),
    ]
    records = [rec(spec=s) for s in specs]
    assert checks.check_al_agreement(cd(20, 22), records) == []
    (r,) = checks.check_al_agreement(cd(20, 30), records)
    assert r.code == checks.AL_DISAGREE
    assert "2.5000" in r.message and "2.1000" in r.message and "2 requests" in r.message
    assert checks.check_al_agreement(cd(20, 30), [rec()]) == []


def test_a_clean_standin_cell_passes_every_check(standin: StandinServer) -> None:
    ds = load_dataset(default_dataset_path(), category="coding")
    kwargs = {"enable_thinking": True}
    cfg = ClientConfig(standin.url, "m", max_tokens=64, concurrency=4, chat_template_kwargs=kwargs)

    async def probe() -> tuple[SpecCounters, str]:
        snap = spec_counters(await scrape(standin.url))
        text = await VllmAdapter().rendered_prompt(
            standin.url,
            model="m",
            messages=ds.rows[0].messages_json(),
            chat_template_kwargs=kwargs,
        )
        return snap, text

    before, rendered = asyncio.run(probe())
    result = run_pass_sync(cfg, ds.rows)
    after, _ = asyncio.run(probe())
    d = delta(before, after)
    k = standin.state.k
    reasons = checks.check_cell(
        records=result.records, expected=len(ds), counters=d, k=k, thinking=True, rendered=rendered
    )
    assert reasons == []
    specs = [r.spec for r in result.records if r.spec is not None]
    assert counter_al(d) == token_weighted_al(specs)

    wrong = checks.check_cell(
        records=result.records, expected=len(ds), counters=d, k=k, thinking=False, rendered=rendered
    )
    assert codes(wrong) == [checks.PROMPT_THINKING, checks.OUTPUT_THINKING]


def test_a_restart_inside_the_window_fails_the_cell(standin: StandinServer) -> None:
    ds = load_dataset(default_dataset_path(), category="coding")
    cfg = ClientConfig(standin.url, "m", max_tokens=64, concurrency=4)
    run_pass_sync(cfg, ds.rows[:4])

    before = spec_counters(asyncio.run(scrape(standin.url)))
    standin.state.reset_counters()
    result = run_pass_sync(cfg, ds.rows[:2])
    d = delta(before, spec_counters(asyncio.run(scrape(standin.url))))
    reasons = checks.check_cell(records=result.records, expected=2, counters=d, k=3)
    assert codes(reasons) == [checks.RESET]


def test_each_counter_fault_has_its_own_reason() -> None:
    def only(d: CounterDelta) -> checks.Reason:
        (reason,) = checks.check_counters(d, k=3)
        return reason

    empty = only(CounterDelta("vllm", None, None, None, (), None, empty=("after",)))
    assert empty.code == checks.EMPTY_METRICS and "no samples after the pass" in empty.message
    inf = only(CounterDelta("vllm", None, None, None, (), None, non_finite=("x_total = inf",)))
    assert inf.code == checks.NON_FINITE and "x_total = inf" in inf.message
    gone = only(CounterDelta("vllm", 10, None, None, (), None, vanished=("y_total (was 3)",)))
    assert gone.code == checks.SERIES_VANISHED and "y_total (was 3)" in gone.message
    vllm = spec_counters(parse_prometheus("vllm:spec_decode_num_drafts_total 1"), "vllm")
    missing = only(CounterDelta("vllm", 10, None, None, (), None, series=vllm.series))
    assert missing.code == checks.NO_ACCEPTED
    assert "vllm:spec_decode_num_accepted_tokens_total" in missing.message
    sglang_counters = spec_counters(parse_prometheus("sglang:spec_verify_calls_total 1"), "sglang")
    sglang = only(CounterDelta("sglang", 10, None, None, (), None, series=sglang_counters.series))
    assert "sglang:generation_tokens_total" in sglang.message
    for reason in (empty, inf, gone, missing):
        assert "restart" not in reason.message.split("(")[0]


@pytest.mark.parametrize(
    ("fault", "code", "from_start"),
    [
        ("empty", checks.EMPTY_METRICS, False),
        ("inf", checks.NON_FINITE, False),
        ("no-accepted", checks.SERIES_VANISHED, False),
        ("no-accepted", checks.NO_ACCEPTED, True),
    ],
)
def test_a_served_metrics_fault_fails_the_cell_with_its_own_reason(
    standin: StandinServer, fault: str, code: str, from_start: bool
) -> None:
    ds = load_dataset(default_dataset_path(), category="coding")
    cfg = ClientConfig(standin.url, "m", max_tokens=64, concurrency=4)
    run_pass_sync(cfg, ds.rows[:2])
    if from_start:
        standin.state.metrics_fault = fault
    before = spec_counters(asyncio.run(scrape(standin.url)))
    result = run_pass_sync(cfg, ds.rows[:2])
    standin.state.metrics_fault = fault
    d = delta(before, spec_counters(asyncio.run(scrape(standin.url))))
    reasons = checks.check_cell(records=result.records, expected=2, counters=d, k=3)
    assert codes(reasons) == [code]
    assert checks.RESET not in codes(reasons)
    assert counter_al(d) is None


def test_sglang_accepted_may_hold_one_prefill_token_per_request() -> None:
    """SGLang's accepted count is generated - verify calls, and each request's first token comes
    from prefill: 4 requests of 6 tokens at k=1 with every draft accepted are 4 prefill tokens
    and 10 verify steps of 2 tokens, so Δaccepted = 24 - 10 = 14 > k·Δdrafts = 10."""
    d = CounterDelta("sglang", 10, None, 14, (), 24, prefill_in_accepted=True)
    records = [rec(str(i), tokens=6) for i in range(4)]
    assert checks.check_counters(d, k=1, requests=len(records)) == []
    assert checks.check_cell(records=records, expected=4, counters=d, k=1) == []
    too_many = checks.check_counters(replace(d, accepted=15), k=1, requests=4)
    assert codes(too_many) == [checks.ACCEPTED_RANGE, checks.AL_RANGE]
    assert "k·Δdrafts + requests" in too_many[0].message
    plain = CounterDelta("vllm", 10, None, 14, (), None)
    assert codes(checks.check_counters(plain, k=1, requests=4))[0] == checks.ACCEPTED_RANGE
