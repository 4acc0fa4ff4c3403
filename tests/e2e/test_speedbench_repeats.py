"""A SPEED-Bench cell measured in ``repeats:`` passes against the vLLM stand-in: the cell keeps
each pass's AL and throughput and their median, the golden comparison and the history use the
median, and the ini's ``infx_repeats`` reaches a cell whose recipe names none."""

from __future__ import annotations

import statistics
from typing import Any

from pytest_infx.history.store import Store
from pytest_infx.launch.ports import free_port

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import recipe, write_recipe

KEY = "fake-repeats"
MODE = "thinking_off"
ITEM = f"{KEY}[k1-{MODE}]"


def _add(sweep: Sweep, **block: Any) -> None:
    data = recipe(
        KEY,
        record=sweep.record,
        extra=("--step-delay", "0.002"),
        modes=(MODE,),
        port=free_port("127.0.0.1"),
    )
    data["speedbench"].update(block)
    write_recipe(sweep.recipes, data)
    sweep.commit_golden({MODE: {1: expected_al(DEFAULT_PATTERN, 1)}})


def test_a_cell_in_three_passes_keeps_each_pass_and_the_history_stores_their_median(
    sweep: Sweep,
) -> None:
    _add(sweep, repeats=3)
    db = f"sqlite:///{sweep.root / 'history.db'}"
    result = sweep.run("--infx-db", db, "--infx-branch", "main", "-o", "infx_repeats=5")
    result.assert_outcomes(passed=1)
    cell = sweep.cell(ITEM)
    passes, median = cell["passes"], cell["median"]
    assert len(passes) == 3, "the recipe's repeats win over the ini's"
    for name in ("al", "output_tput", "output_tput_per_gpu"):
        assert median[name] == statistics.median(each[name] for each in passes)
    assert cell["al"] == median["al"] == expected_al(DEFAULT_PATTERN, 1)
    assert cell["requests"]["total"] == 4, "the rest of the record is one pass's"
    assert cell["golden"]["ok"] and cell["verdict"] == "pass"
    with Store.open(db) as store:
        [row] = store.series(ITEM)
    assert {name: row.metrics[name] for name in median} == median


def test_the_ini_s_repeats_reach_a_cell_whose_recipe_names_none(sweep: Sweep) -> None:
    _add(sweep)
    result = sweep.run("-o", "infx_repeats=2")
    result.assert_outcomes(passed=1)
    cell = sweep.cell(ITEM)
    assert len(cell["passes"]) == 2
    assert cell["median"]["output_tput"] == statistics.median(
        each["output_tput"] for each in cell["passes"]
    )


def test_a_cell_measured_once_writes_its_record_as_before(sweep: Sweep) -> None:
    _add(sweep)
    sweep.run().assert_outcomes(passed=1)
    assert not {"passes", "median"} & set(sweep.cell(ITEM))
