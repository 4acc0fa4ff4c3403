"""The SGLang adapter against the facts of SGLang's own source.

Facts (read from the released wheels):
- 0.5.12 and 0.5.13 ``srt/server_args.py`` have only ``--cuda-graph-max-bs``; from 0.5.14 to
  0.5.16 it is a ``DeprecatedAliasStoreAction`` of ``--cuda-graph-max-bs-decode``; 0.5.21 and
  0.5.23 (``srt/arg_groups``) have only ``--cuda-graph-max-bs-decode`` and
  ``--cuda-graph-max-bs-prefill``, so the old name is an ambiguous argparse prefix and the
  server exits before it starts.
- 0.5.23 has ``--attn-dp-size``; ``--enable-dp-attention`` is deprecated there.
- ``srt/environ.py``: ``SGLANG_SIMULATE_ACC_TOKEN_MODE`` defaults to ``fixed``, which
  ``generate_simulated_accept_index`` (``srt/speculative/spec_utils.py``) turns into
  ``predict.fill_(100)``.
- ``entrypoints/openai/protocol.py``: ``return_spec_tokens_details: bool = False``.
- ``managers/tokenizer_manager.py``: ``spec_accept_length = completion_tokens / spec_verify_ct``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_infx.engines import sglang
from pytest_infx.engines.registry import symbolic_paths
from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.spec import Snapshot, number
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand
from pytest_infx.recipes.schema import AgenticSpeculative
from pytest_infx.speedbench.metrics import parse_prometheus

REPO = Path(__file__).resolve().parents[2]
AGENTIC = REPO / "recipes" / "mimov2.6flash-fp4-b200-sglang-agentic.yaml"


def points(version: str | None = None) -> list[Point]:
    found = expand(load_file(AGENTIC))
    if version is None:
        return found
    return [
        replace(
            p,
            recipe=p.recipe.model_copy(
                update={"engine": p.recipe.engine.model_copy(update={"version": version})}
            ),
        )
        for p in found
    ]


def argv_of(point: Point) -> list[str]:
    return list(SglangAdapter().plan(point, symbolic_paths(point)).argv)


def test_the_repository_recipe_pins_0_5_21_and_gets_the_decode_flag() -> None:
    found = points()
    assert {p.recipe.engine.version for p in found} == {"v0.5.21-cu130"}
    for point in found:
        argv = argv_of(point)
        assert "--cuda-graph-max-bs" not in argv
        bs = argv[argv.index("--cuda-graph-max-bs-decode") + 1]
        assert bs == argv[argv.index("--max-running-requests") + 1]


@pytest.mark.parametrize(
    ("version", "flag"),
    [
        ("v0.5.8.post1-cu130", "--cuda-graph-max-bs"),
        ("v0.5.13-cu130", "--cuda-graph-max-bs"),
        ("v0.5.14-cu130", "--cuda-graph-max-bs-decode"),
        ("v0.5.16-cu130", "--cuda-graph-max-bs-decode"),
        ("v0.5.21-cu130", "--cuda-graph-max-bs-decode"),
        ("v0.5.23", "--cuda-graph-max-bs-decode"),
        ("nightly-dev-cu13-20260805-211ee642", "--cuda-graph-max-bs-decode"),
    ],
)
def test_the_version_table_decides_the_cuda_graph_flag(version: str, flag: str) -> None:
    argv = argv_of(points(version)[0])
    assert flag in argv
    other = {"--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"} - {flag}
    assert not other & set(argv)


def test_synthetic_acceptance_keeps_real_tokens() -> None:
    setting = SglangAdapter().synthetic(2.5, 3)
    assert setting.env == {
        "SGLANG_SIMULATE_ACC_LEN": "2.5",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
    }
    point = speculative(points()[0])
    plan = SglangAdapter().plan(point, symbolic_paths(point), synthetic=setting)
    assert plan.env["SGLANG_SIMULATE_ACC_TOKEN_MODE"] == "real-draft-token"
    assert "--speculative-num-steps" in plan.argv


def speculative(point: Point) -> Point:
    agentic = point.recipe.agentic
    assert agentic is not None
    spec = AgenticSpeculative(method="eagle", draft_length=3, golden="g")
    recipe = point.recipe.model_copy(
        update={"agentic": agentic.model_copy(update={"speculative": spec})}
    )
    return replace(point, recipe=recipe)


def test_requests_ask_for_the_per_request_details() -> None:
    assert SglangAdapter().request_fields() == {"return_spec_tokens_details": True}


def test_per_request_accepted_counts_as_the_counters_do() -> None:
    frame = {
        "sglext": {
            "spec_tokens_details": {
                "spec_verify_ct": 10,
                "spec_num_correct_drafts": 14,
                "spec_num_proposed_drafts": 30,
                "spec_accept_length": 2.5,
                "spec_correct_drafts_histogram": [1, 4, 5],
            }
        }
    }
    spec = SglangAdapter().request_spec(frame)
    assert spec is not None
    assert (spec.num_steps, spec.num_accepted, spec.num_drafted) == (10, 15, 30)
    assert spec.mean_acceptance_length == 2.5 == 1 + spec.num_accepted / spec.num_steps
    assert SglangAdapter().request_spec({"choices": []}) is None


def test_counters_are_summed_and_flag_the_prefill_token() -> None:
    text = (
        'sglang:spec_verify_calls_total{model_name="m",engine_type="unified"} 40\n'
        'sglang:generation_tokens_total{model_name="m",engine_type="unified",'
        'is_streaming="true"} 90\n'
        'sglang:generation_tokens_total{model_name="m",engine_type="unified",'
        'is_streaming="false"} 10\n'
    )
    counters = SglangAdapter().spec_counters(parse_prometheus(text))
    assert (counters.drafts, counters.generation_tokens) == (40, 100)
    assert counters.prefill_in_accepted
    assert counters.series["drafts"] == "sglang:spec_verify_calls_total"
    assert SglangAdapter().spec_counters(Snapshot({})).empty


@pytest.mark.parametrize(
    ("version", "args", "attention"),
    [
        ("v0.5.23", {"attn-dp-size": 2}, 2),
        ("v0.5.21-cu130", {"attn-dp-size": 2}, 4),
        ("v0.5.21-cu130", {"enable-dp-attention": True, "dp-size": 4}, 1),
        ("v0.5.23", {}, 4),
    ],
)
def test_attention_tp_follows_the_release_s_dp_attention_flag(
    version: str, args: dict[str, object], attention: int
) -> None:
    recipe = points()[0].recipe
    engine = recipe.engine.model_copy(update={"version": version, "args": args})
    assert SglangAdapter().attention_tp(recipe.model_copy(update={"engine": engine}), 4) == (
        attention
    )


def test_every_table_row_is_newer_than_the_one_before() -> None:
    sinces = [row.since for row in sglang.RELEASES]
    assert sinces == sorted(sinces) and len(set(sinces)) == len(sinces)


def test_the_parser_environment_holds_the_pinned_release() -> None:
    parser = SglangAdapter().parser_env("v0.5.21-cu130")
    assert parser is not None and parser.release == "SGLang 0.5.21"
    assert parser.spec.no_deps == ("sglang==0.5.21",)
    assert "torch==2.13.0" in parser.spec.requirements
    assert all("==" in pin for pin in parser.spec.requirements)
    assert not any(pin.startswith("torchvision") for pin in parser.spec.requirements)
    assert SglangAdapter().parser_env("nightly-dev-cu13-20260805-211ee642") is None


def test_a_release_whose_parser_does_not_import_here_falls_back_to_0_5_21() -> None:
    older = SglangAdapter().parser_env("v0.5.17-cu130")
    assert older is not None and older.release == "SGLang 0.5.17"
    assert older.fallback is not None and older.fallback.release == "SGLang 0.5.21"
    fallback = older.falling_back("No module named 'torchvision'")
    assert fallback is not None and fallback.spec.no_deps == ("sglang==0.5.21",)
    assert fallback.note.startswith("SGLang 0.5.17's parser does not run here (No module named")
    pinned = SglangAdapter().parser_env("v0.5.21-cu130")
    assert pinned is not None and pinned.fallback is None


@pytest.mark.parametrize(("value", "text"), [(3.0, "3"), (2.5, "2.5"), (1.2345678, "1.234568")])
def test_a_number_is_written_as_an_engine_reads_it(value: float, text: str) -> None:
    assert number(value) == text
