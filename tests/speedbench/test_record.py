from __future__ import annotations

from pathlib import Path

from pytest_infx.golden.compare import CompareOptions, compare_curves
from pytest_infx.golden.curve import Curve
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all
from pytest_infx.speedbench.record import engine_info, golden_summary

REPO = Path(__file__).resolve().parents[2]


def _cpu_point() -> Point:
    points = expand_all(load_tree(REPO / "recipes"))
    return next(p for p in points if p.recipe_key.endswith("cpu-vllm-ngram") and p.cell)


def test_the_engine_is_named_by_what_runs_it() -> None:
    point = _cpu_point()
    assert engine_info(point).model_dump() == {
        "name": "vllm",
        "version": point.recipe.engine.version,
        "image": None,
        "embedded": point.recipe.engine.embedded,
        "command": None,
    }


def test_a_recorded_curve_passes_and_a_drifted_cell_names_its_lines() -> None:
    recorded_only = golden_summary("c", None, passed=True)
    assert (recorded_only.ok, recorded_only.recorded, recorded_only.checked) == (True, True, None)
    golden = Curve(name="c", model_key="m", modes={"thinking_off": {1: 1.65}})
    measured = Curve(name="c", model_key="m", modes={"thinking_off": {1: 1.2}})
    comparison = compare_curves(golden, measured, CompareOptions(tolerance=0.05))
    failed = golden_summary("c", comparison, passed=False)
    assert (failed.ok, failed.recorded, failed.drifted) == (False, False, 1)
    assert failed.lines and "1.65" in "\n".join(failed.lines)
    recorded = golden_summary("c", comparison, passed=True)
    assert (recorded.ok, recorded.recorded, recorded.lines) == (True, True, [])
