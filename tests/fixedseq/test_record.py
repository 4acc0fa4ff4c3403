from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from e2e.helpers import recipe, write_recipe

from pytest_infx.engines.registry import installed
from pytest_infx.fixedseq.checks import Checked
from pytest_infx.fixedseq.prompts import RandomPrompts, RandomRequest
from pytest_infx.fixedseq.record import (
    block_of,
    figures,
    fixed_record,
    median_pass,
    with_passes,
)
from pytest_infx.prepare.identity import identity_of
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all
from pytest_infx.results.passes import median_figures
from pytest_infx.results.records import ServerInfo, parse_record

SERVER = ServerInfo(argv=["serve"], port=8000, log="logs/s.log")
CHECKED = Checked(sent=4, completed=4, failed=0, empty=0, short=0, errors=(), problems=())


def _points(folder: Path) -> list[Point]:
    data = recipe("k", record=folder / "starts.jsonl")
    data["fixed-seq-len"] = {
        "points": [{"tp": 1, "isl": 64, "osl": 8, "concurrency": [2]}],
        "seed": 7,
    }
    write_recipe(folder / "recipes", data)
    return expand_all(load_tree(folder / "recipes"))


def test_the_record_carries_the_point_its_identity_and_the_processed_figures(
    tmp_path: Path,
) -> None:
    (point,) = [p for p in _points(tmp_path) if p.kind == "fixed_seq_len"]
    identity = identity_of(point, runner="cpu-1", engines=installed())
    prompts = RandomPrompts((RandomRequest("p", 60, 8, (1,)), RandomRequest("q", 64, 8, (2,))))
    agg = {"tput_per_gpu": 10.0, "median_ttft": 0.5, "hw": "cpu-1", "dp_attention": "false"}
    record = fixed_record(
        point,
        identity=identity,
        server=SERVER,
        prompts=prompts,
        duration_s=2.0,
        checked=CHECKED,
        agg=agg,
        raw_result="fixed_seq_len/inferencex/a.json",
        inferencex_result="fixed_seq_len/inferencex/agg_a.json",
    )
    assert record.config == identity and record.passed
    assert (record.point.isl, record.point.osl, record.prompts.seed) == (64, 8, 7)
    assert record.prompts.mean_input_len == 62.0
    assert record.figures == {"tput_per_gpu": 10.0, "median_ttft": 0.5}
    assert record.output_tokens_per_s is None
    assert parse_record(record.as_json()).as_json() == record.as_json()
    failed = replace(CHECKED, failed=1, problems=("1 of 4 failed",))
    assert not fixed_record(
        point,
        identity=identity,
        server=SERVER,
        prompts=prompts,
        duration_s=2.0,
        checked=failed,
        agg=agg,
        raw_result="r",
        inferencex_result="p",
    ).passed


def test_another_kind_s_point_has_no_fixed_seq_len_block(tmp_path: Path) -> None:
    other = next(p for p in _points(tmp_path) if p.kind != "fixed_seq_len")
    with pytest.raises(TypeError, match="is not a fixed-seq-len point"):
        block_of(other)


def test_only_figures_the_history_knows_and_no_flag_are_kept() -> None:
    assert figures({"tput_per_gpu": 3, "median_ttft": True, "conc": 4, "model": "m"}) == {
        "tput_per_gpu": 3.0
    }


def test_the_median_pass_is_the_lower_middle_by_throughput(tmp_path: Path) -> None:
    aggs = [{"tput_per_gpu": 30.0}, {"tput_per_gpu": 10.0}, {"tput_per_gpu": 20.0}]
    assert median_pass(aggs) == 2
    assert median_pass(aggs[:2]) == 1
    passes = [{"tput_per_gpu": 1.0, "median_ttft": 4.0}, {"tput_per_gpu": 3.0}]
    assert median_figures(passes) == {"tput_per_gpu": 2.0, "median_ttft": 4.0}
    (point,) = [p for p in _points(tmp_path) if p.kind == "fixed_seq_len"]
    record = fixed_record(
        point,
        identity=identity_of(point, runner=None, engines=installed()),
        server=SERVER,
        prompts=RandomPrompts((RandomRequest("p", 64, 8, (1,)),)),
        duration_s=1.0,
        checked=CHECKED,
        agg=aggs[2],
        raw_result="r",
        inferencex_result="p",
    )
    kept = with_passes(record, aggs)
    assert kept.figures == {"tput_per_gpu": 20.0}
    assert kept.passes == [{"tput_per_gpu": 30.0}, {"tput_per_gpu": 10.0}, {"tput_per_gpu": 20.0}]
