from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from e2e.helpers import recipe, write_recipe
from results.samples import CELL, POINT, with_fields

from pytest_infx.kinds import KINDS
from pytest_infx.plugin.run.resume import judge
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all
from pytest_infx.results.reuse import Reuse

KEY = "fake-cpu-vllm"
NOT_A_MAPPING = "Input should be a valid dictionary"


def _points(tmp_path: Path, *, agentic: bool = False) -> list[Point]:
    data = recipe(KEY, record=tmp_path / "starts.jsonl")
    if agentic:
        data.pop("speedbench")
        data["agentic"] = {"points": [{"tp": 1, "concurrency": [1]}], "traces": "builtin"}
    write_recipe(tmp_path / "recipes", data)
    return expand_all(load_tree(tmp_path / "recipes"))


def _stored(point: Point, **fields: Any) -> dict[str, Any]:
    """A passed record of ``point`` measured on data whose digest is ``a...a``."""
    identity = {"id": point.id, "recipe": point.recipe_key, "fingerprint": point.fingerprint}
    if point.kind == "agentic":
        return with_fields(POINT, identity | {"traces_sha256": "a" * 64} | fields)
    return with_fields(CELL, identity | {"dataset.sha256": "a" * 64} | fields)


def test_a_missing_broken_or_foreign_result_file_is_not_reused(tmp_path: Path) -> None:
    point, other = _points(tmp_path)
    path = tmp_path / "cell.json"
    assert judge(path, point, None) == "without a result file"
    path.write_text('{"id": ')
    assert str(judge(path, point, None)).startswith(
        "with a result file that is not reusable (does not parse "
    )
    path.write_text(json.dumps(_stored(other)))
    assert judge(path, point, None) == "with another item's result file"
    path.write_text(json.dumps(_stored(point, al=1.5)))
    reuse = judge(path, point, "a" * 64)
    assert (
        isinstance(reuse, Reuse)
        and reuse.reason(tmp_path, KINDS) == "reused from cell.json: AL 1.50"
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"dataset": []}, f"'dataset': {NOT_A_MAPPING} or instance of DatasetInfo"),
        ({"dataset": "qualitative"}, f"'dataset': {NOT_A_MAPPING} or instance of DatasetInfo"),
        ({"engine": [1]}, f"'engine': {NOT_A_MAPPING} or instance of EngineInfo"),
        ({"engine": None}, f"'engine': {NOT_A_MAPPING} or instance of EngineInfo"),
        ({"engine!": None}, "'engine': Field required"),
        ({"al": "1.5"}, "'al': Input should be a valid number"),
        ({"al": True}, "'al': Input should be a valid number"),
        ({"al_standard_error": [0.1]}, "'al_standard_error': Input should be a valid number"),
    ],
)
def test_a_result_file_of_the_wrong_shape_runs_the_cell_again(
    tmp_path: Path, change: dict[str, object], why: str
) -> None:
    point = _points(tmp_path)[0]
    path = tmp_path / "cell.json"
    path.write_text(json.dumps(_stored(point, **change)))
    assert judge(path, point, "a" * 64) == f"with a result file that is not reusable ({why})"


@pytest.mark.parametrize(
    "throughput", [[], {"method": "aiperf", "output_tokens_per_s_per_gpu": "fast"}]
)
def test_an_agentic_result_file_of_the_wrong_shape_runs_the_point_again(
    tmp_path: Path, throughput: object
) -> None:
    point = _points(tmp_path, agentic=True)[0]
    path = tmp_path / "point.json"
    path.write_text(json.dumps(_stored(point, verdict="passed", throughput=throughput)))
    assert str(judge(path, point, "a" * 64)).startswith(
        "with a result file that is not reusable ('throughput"
    )


def test_a_result_of_the_other_kind_is_another_item_s(tmp_path: Path) -> None:
    point = _points(tmp_path, agentic=True)[0]
    path = tmp_path / "point.json"
    path.write_text(json.dumps(with_fields(CELL, {"id": point.id})))
    assert judge(path, point, "a" * 64) == "with another item's result file"


@pytest.mark.parametrize("word", ["pass", "passed"])
@pytest.mark.parametrize("kind", ["speedbench", "agentic"])
def test_a_passed_result_is_reused_whichever_word_its_file_was_written_with(
    tmp_path: Path, kind: str, word: str
) -> None:
    point = _points(tmp_path, agentic=kind == "agentic")[0]
    path = tmp_path / "stored.json"
    path.write_text(json.dumps(_stored(point, verdict=word)))
    assert isinstance(judge(path, point, "a" * 64), Reuse)
    assert judge(path, point, "b" * 64) == "whose dataset changed (sha256 differs)"
    path.write_text(json.dumps(_stored(point, verdict=word.replace("pass", "fail"))))
    assert judge(path, point, "a" * 64) == "that did not pass last time"


def test_a_result_file_that_is_a_pipe_or_nests_too_deep_runs_the_cell_again(
    tmp_path: Path,
) -> None:
    point = _points(tmp_path)[0]
    path = tmp_path / "cell.json"
    os.mkfifo(path)
    assert judge(path, point, "a" * 64) == (
        "with a result file that is not reusable (is a pipe, not a regular file; give a file)"
    )
    path.unlink()
    path.write_text("{" + '"a": {' * 50_000 + "}" * 50_001)
    assert judge(path, point, "a" * 64) == (
        "with a result file that is not reusable (nested too deeply to be a result record)"
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"requests.wall_s": 1e-320}, "'requests.wall_s' is 1e-320, not a time"),
        ({"requests.wall_s": -1.5}, "'requests.wall_s': Input should be greater than or equal"),
    ],
)
def test_a_passed_cell_with_a_broken_figure_is_not_reused(
    tmp_path: Path, fields: dict[str, Any], problem: str
) -> None:
    point = _points(tmp_path)[0]
    path = tmp_path / "cell.json"
    path.write_text(json.dumps(_stored(point, al=1.5, **fields)))
    why = judge(path, point, "a" * 64)
    assert isinstance(why, str) and why.startswith("with a result file that is not reusable (")
    assert problem in why


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"throughput.output_tokens_per_s_per_gpu": math.nan}, "'throughput.aiperf.output_tok"),
        ({"latency_ms.ttft.p99": math.inf}, "'latency_ms.ttft.p99': Input should be a finite"),
        ({"aiperf.output_tokens_per_s": -50.0}, "'aiperf.output_tokens_per_s': Input should be"),
    ],
)
def test_a_passed_agentic_point_with_a_broken_figure_is_not_reused(
    tmp_path: Path, fields: dict[str, Any], problem: str
) -> None:
    point = _points(tmp_path, agentic=True)[0]
    path = tmp_path / "point.json"
    path.write_text(json.dumps(_stored(point)))
    assert isinstance(judge(path, point, "a" * 64), Reuse), "the sample itself is reusable"
    path.write_text(json.dumps(_stored(point, **fields)))
    why = judge(path, point, "a" * 64)
    assert isinstance(why, str) and why.startswith("with a result file that is not reusable (")
    assert problem in why
