from __future__ import annotations

import asyncio
import math
import re
import socket
from pathlib import Path

import pytest

from pytest_infx.speedbench.al import counter_al
from pytest_infx.speedbench.client import ClientConfig, run_pass_sync
from pytest_infx.speedbench.dataset import Message, Prompt
from pytest_infx.speedbench.metrics import (
    CounterResetError,
    MetricsParseError,
    ScrapeError,
    SpecCounters,
    delta,
    parse_prometheus,
    scrape,
    spec_counters,
)

from .standin import TEXT_PIECES, StandinServer

REAL_DATA = Path(__file__).resolve().parent.parent / "envs" / "data"
VLLM_SERIES = spec_counters(parse_prometheus("vllm:spec_decode_num_drafts_total 0"), "vllm").series

VLLM_TEXT = """\
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100.0
vllm:spec_decode_num_drafts_total{model_name="m",engine="1"} 50.0
# HELP vllm:spec_decode_num_drafts_created Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_created gauge
vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.7962009201398273e+09
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 300.0
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="m"} 150.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 120.0
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 30.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 80.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 30.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="2"} 10.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="0"} 20.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="1"} 10.0
"""


def test_samples_are_keyed_by_name_and_label_set() -> None:
    snap = parse_prometheus(VLLM_TEXT)
    assert snap.get_series("vllm:spec_decode_num_drafts_total", engine="0", model_name="m") == 100.0
    assert snap.get_series("vllm:spec_decode_num_drafts_total", model_name="m", engine="1") == 50.0
    assert snap.total("vllm:spec_decode_num_drafts_total") == 150.0
    assert snap.total("vllm:spec_decode_num_drafts_total", engine="1") == 50.0
    assert snap.types["vllm:spec_decode_num_drafts_total"] == "counter"
    assert not any(name.endswith("_created") for name, _ in snap)
    assert snap.total("vllm:absent_total") is None


def test_escapes_special_values_timestamps_and_quoted_names() -> None:
    text = (
        'a_total{path="C:\\\\x",msg="say \\"hi\\", {ok}\\n"} 1 1712345678000\n'
        "b NaN\n"
        "c{} +Inf\n"
        "d -Inf\n"
        'e{  x = "1" , } 2.5e3\n'
        '{"vllm.dotted", engine="0"} 7\n'
        "# free comment\n"
    )
    snap = parse_prometheus(text)
    assert snap.get_series("a_total", path="C:\\x", msg='say "hi", {ok}\n') == 1.0
    b = snap.get_series("b")
    assert b is not None and math.isnan(b)
    assert snap.get_series("c") == math.inf
    assert snap.get_series("d") == -math.inf
    assert snap.get_series("e", x="1") == 2500.0
    assert snap.get_series("vllm.dotted", engine="0") == 7.0


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("x{a=1} 2", "quoted string"),
        ('x{a="1" 2', "expected ',' or '}'"),
        ('x{a="1",', "unterminated label set"),
        ('x{a="1', "unterminated quoted string"),
        ("x", "missing sample value"),
        ("x abc", "bad sample value"),
        ("x 1 2 3", "after the timestamp"),
        ('x{a="\\q"} 1', "bad escape"),
        ('x{a="1",a="2"} 1', "given twice"),
        ("9x 1", "metric or label name"),
    ],
)
def test_bad_lines_name_line_and_problem(line: str, what: str) -> None:
    with pytest.raises(
        MetricsParseError, match=r"metrics line 2, column \d+: .*" + re.escape(what)
    ):
        parse_prometheus("ok 1\n" + line + "\n")


def test_vllm_counters_sum_every_label_set() -> None:
    c = spec_counters(parse_prometheus(VLLM_TEXT))
    assert c.engine == "vllm"
    assert (c.drafts, c.draft_tokens, c.accepted) == (150.0, 450.0, 150.0)
    assert c.accepted_per_pos == (100.0, 40.0, 10.0)


def test_positions_sort_numerically_and_gaps_are_zero() -> None:
    lines = [
        f'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{{position="{p}"}} {p}'
        for p in (10, 2, 0)
    ]
    text = "llamacpp:spec_decode_num_drafts_total 5\n" + "\n".join(lines)
    c = spec_counters(parse_prometheus(text))
    assert c.engine == "llamacpp"
    assert len(c.accepted_per_pos) == 11
    assert c.accepted_per_pos[10] == 10.0 and c.accepted_per_pos[2] == 2.0
    assert c.accepted_per_pos[5] == 0.0


def test_missing_series_is_no_speculation_not_zero() -> None:
    c = spec_counters(parse_prometheus("vllm:generation_tokens_total 10\n"))
    assert c.engine is None and not c.speculating
    assert c.drafts is None and c.accepted is None
    forced = spec_counters(parse_prometheus("x 1\n"), engine="vllm")
    assert forced.drafts is None and forced.engine is None
    zero = spec_counters(parse_prometheus("vllm:spec_decode_num_drafts_total 0\n"))
    assert zero.speculating and zero.drafts == 0.0


def test_sglang_counters_and_derived_accepted() -> None:
    def snap(verify: int, gen: int) -> SpecCounters:
        text = (
            f'sglang:spec_verify_calls_total{{model_name="m",tp_rank="0"}} {verify}\n'
            f'sglang:generation_tokens_total{{model_name="m",is_streaming="true"}} {gen}\n'
            f'sglang:generation_tokens_total{{model_name="m",is_streaming="false"}} 1\n'
        )
        return spec_counters(parse_prometheus(text))

    before, after = snap(10, 30), snap(50, 130)
    assert after.engine == "sglang" and after.generation_tokens == 131.0
    d = delta(before, after)
    assert d.drafts == 40.0 and d.generation_tokens == 100.0
    assert d.accepted == 60.0


def test_delta_and_reset_detection() -> None:
    before = SpecCounters(
        "vllm",
        drafts=10,
        draft_tokens=30,
        accepted=12,
        accepted_per_pos=(8, 4, 0),
        series=VLLM_SERIES,
    )
    after = SpecCounters(
        "vllm", drafts=20, draft_tokens=60, accepted=27, accepted_per_pos=(16, 8, 3)
    )
    d = delta(before, after)
    assert (d.drafts, d.draft_tokens, d.accepted) == (10, 30, 15)
    assert d.accepted_per_pos == (8, 4, 3)
    assert not d.reset

    restarted = SpecCounters(
        "vllm", drafts=3, draft_tokens=9, accepted=2, accepted_per_pos=(2, 0, 0)
    )
    r = delta(before, restarted)
    assert r.reset
    assert any(s.startswith("drafts 10 -> 3") for s in r.decreased)
    with pytest.raises(CounterResetError, match="drafts 10 -> 3"):
        delta(before, restarted, strict=True)

    gone = delta(before, SpecCounters(None))
    assert not gone.reset
    assert gone.vanished == (
        "vllm:spec_decode_num_drafts_total (was 10)",
        "vllm:spec_decode_num_draft_tokens_total (was 30)",
        "vllm:spec_decode_num_accepted_tokens_total (was 12)",
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="0"} (was 8)',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="1"} (was 4)',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{position="2"} (was 0)',
    )


def test_scrape_reads_the_live_counters(standin: StandinServer) -> None:
    cfg = ClientConfig(base_url=standin.url, model="m", max_tokens=64, concurrency=2)
    prompts = [Prompt(f"q{i}", "coding", (Message("user", "x"),)) for i in range(4)]

    before = spec_counters(asyncio.run(scrape(standin.url)))
    run_pass_sync(cfg, prompts)
    after = spec_counters(asyncio.run(scrape(standin.url)))
    d = delta(before, after)
    steps = len(prompts) * len(TEXT_PIECES)
    assert d.drafts == steps
    assert d.accepted == steps * (standin.state.tokens_per_chunk - 1)


def test_scrape_errors_are_scrape_errors(standin: StandinServer) -> None:
    with pytest.raises(ScrapeError, match=r"/nope/metrics: HTTP 404"):
        asyncio.run(scrape(standin.url + "/nope"))
    standin.state.extra_metrics = "broken{ 1\n"
    with pytest.raises(ScrapeError, match="metrics line"):
        asyncio.run(scrape(standin.url))


def test_a_server_that_is_gone_is_a_scrape_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ScrapeError, match=rf"GET http://127.0.0.1:{port}/metrics: connect to"):
        asyncio.run(scrape(f"http://127.0.0.1:{port}", timeout_s=5))


@pytest.mark.skipif(not REAL_DATA.is_dir(), reason="no saved real engine output yet")
def test_real_vllm_metrics_fixtures_parse() -> None:
    files = sorted(REAL_DATA.glob("*metrics*"))
    if not files:
        pytest.skip("no saved /metrics text")
    for f in files:
        snap = parse_prometheus(f.read_text())
        assert len(snap) > 0
        c = spec_counters(snap)
        if c.speculating:
            assert c.drafts is not None and c.drafts >= 0
            assert c.accepted is not None and 0 <= c.accepted <= (c.draft_tokens or 0)
            assert sum(c.accepted_per_pos) == c.accepted
            assert len(snap.types) > 0


def test_an_empty_body_is_its_own_fault_not_a_restart() -> None:
    before = spec_counters(parse_prometheus(VLLM_TEXT))
    empty = spec_counters(parse_prometheus(""))
    assert empty.empty and not before.empty
    d = delta(before, empty, strict=True)
    assert d.empty == ("after",)
    assert not d.reset and d.vanished == () and d.drafts is None


def test_a_counter_at_plus_inf_gives_no_acceptance_length() -> None:
    before = SpecCounters("vllm", drafts=10, accepted=12)
    text = "vllm:spec_decode_num_drafts_total +Inf\nvllm:spec_decode_num_accepted_tokens_total 20\n"
    after = spec_counters(parse_prometheus(text))
    assert after.non_finite == ("vllm:spec_decode_num_drafts_total = inf",)
    d = delta(before, after)
    assert d.non_finite == after.non_finite
    assert d.drafts is None and not d.reset
    assert counter_al(d) is None


def test_a_vanished_accepted_series_is_not_a_restart() -> None:
    before = SpecCounters("vllm", drafts=10, accepted=12, series=VLLM_SERIES)
    d = delta(before, SpecCounters("vllm", drafts=20, series=VLLM_SERIES), strict=True)
    assert d.vanished == ("vllm:spec_decode_num_accepted_tokens_total (was 12)",)
    assert not d.reset and d.drafts == 10 and d.accepted is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'a_total{m="x"} 1\nb 2\na_total{m="x"} 5\n',
            'metrics line 3: series a_total{m="x"} repeats line 1',
        ),
        ("a 1\na 2\n", "metrics line 2: series a repeats line 1"),
        ("a 1_000\n", "bad sample value '1_000'"),
    ],
)
def test_malformed_text_is_an_error_naming_the_series(text: str, message: str) -> None:
    with pytest.raises(MetricsParseError) as info:
        parse_prometheus(text)
    assert message in str(info.value)
