from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_infx.golden.io import loads_curve

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import CURVE, MODEL_KEY, MODES

DESIGN_FIELDS = (
    "id",
    "recipe",
    "point",
    "engine",
    "server",
    "dataset",
    "requests",
    "al",
    "al_per_position",
    "counters",
    "verdict",
    "reasons",
)
KS = (1, 2, 3)
KEY = "fake-cpu-vllm"


@pytest.fixture
def healthy(sweep: Sweep) -> tuple[Sweep, pytest.RunResult]:
    sweep.add(KEY, draft_lengths=KS)
    sweep.commit_golden({m: {k: expected_al(DEFAULT_PATTERN, k) for k in KS} for m in MODES})
    return sweep, sweep.run(f"--junitxml={sweep.root / 'junit.xml'}")


def test_every_cell_passes_with_the_stand_in_al_from_both_sources(
    healthy: tuple[Sweep, pytest.RunResult],
) -> None:
    sweep, result = healthy
    result.assert_outcomes(passed=len(KS) * len(MODES))
    _counter_al_equals_the_token_weighted_request_al(sweep)
    for k in KS:
        for mode in MODES:
            cell = sweep.cell(f"{KEY}[k{k}-{mode}]")
            assert [f for f in DESIGN_FIELDS if f not in cell] == []
            assert cell["al"] == round(expected_al(DEFAULT_PATTERN, k), 2)
            assert (cell["verdict"], cell["reasons"]) == ("pass", [])
            assert cell["point"] == {
                "draft_length": k,
                "thinking": mode,
                "tp": 1,
                "concurrency": 4,
            }
            assert cell["requests"] == {**cell["requests"], "total": 4, "completed": 4}
            assert cell["dataset"]["n"] == 4 and len(cell["dataset"]["sha256"]) == 64
            assert cell["engine"]["name"] == "vllm" and cell["engine"]["command"][-2] == "--record"
            assert f'"num_speculative_tokens":{k}' in cell["server"]["argv"][-1]
            assert cell["rendered_prompt_tail"].endswith("<think>\n") == (mode == "thinking_on")


def _counter_al_equals_the_token_weighted_request_al(sweep: Sweep) -> None:
    for k in KS:
        cell = sweep.cell(f"{KEY}[k{k}-thinking_on]")
        delta = cell["counters"]["delta"]
        assert delta["drafts"] > 0 and delta["decreased"] == []
        counter_al = 1 + delta["accepted"] / delta["drafts"]
        assert counter_al == pytest.approx(cell["al_token_weighted"], abs=1e-12)
        assert counter_al == pytest.approx(cell["al_request_weighted"], abs=1e-12)
        accepted = [min(p, k) for p in DEFAULT_PATTERN]
        per_position = [sum(a > i for a in accepted) / len(accepted) for i in range(k)]
        assert cell["al_per_position"] == pytest.approx(per_position)


def test_reports_table_matrix_and_junit(healthy: tuple[Sweep, pytest.RunResult]) -> None:
    sweep, result = healthy
    result.assert_outcomes(passed=len(KS) * len(MODES))
    _the_measured_matrix_is_in_golden_format(sweep)
    _junit_carries_the_al_property(sweep)
    assert sorted(p.name for p in sweep.results.rglob("*.lock")) == []
    rows = [f"  {k:<3}" + f"{expected_al(DEFAULT_PATTERN, k):>14.2f}" * 2 for k in KS]
    result.stdout.fnmatch_lines(
        [
            "*= infx acceptance length =*",
            f"{KEY}  (AL;*",
            "  k    thinking_off   thinking_on",
            *rows,
        ]
    )


def _the_measured_matrix_is_in_golden_format(sweep: Sweep) -> None:
    text = (sweep.results / f"{KEY}.al.yaml").read_text()
    curve = loads_curve(text, name=CURVE)
    assert curve.model_key == MODEL_KEY
    for mode in MODES:
        assert dict(curve.modes[mode]) == {k: round(expected_al(DEFAULT_PATTERN, k), 2) for k in KS}
    assert curve.header.dataset == "prompts/coding"
    assert curve.header.method == "ngram"


def _junit_carries_the_al_property(sweep: Sweep) -> None:
    tree = ET.parse(sweep.root / "junit.xml")
    found = {}
    for case in tree.iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        found[case.get("name")] = props
    assert len(found) == len(KS) * len(MODES)
    for k in KS:
        props = found[f"{KEY}[k{k}-thinking_off]"]
        assert float(props["al"] or "nan") == round(expected_al(DEFAULT_PATTERN, k), 2)
        assert props["requests"] == "4/4"
