from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.helpers import recipe, write_recipe

from pytest_infx.plugin.run.resume import judge
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all
from pytest_infx.results.reuse import Reuse

KEY = "fake-cpu-vllm"


def test_a_missing_broken_or_foreign_result_file_is_not_reused(tmp_path: Path) -> None:
    write_recipe(tmp_path / "recipes", recipe(KEY, record=tmp_path / "starts.jsonl"))
    point, other = expand_all(load_tree(tmp_path / "recipes"))
    path = tmp_path / "cell.json"
    assert judge(path, point, None) == "without a result file"
    path.write_text('{"id": ')
    assert str(judge(path, point, None)).startswith(
        "with a result file that is not reusable (it does not parse: "
    )
    path.write_text(json.dumps({"id": other.id, "fingerprint": other.fingerprint}))
    assert judge(path, point, None) == "with another item's result file"
    stored = {"id": point.id, "fingerprint": point.fingerprint, "verdict": "pass", "al": 1.5}
    stored["engine"] = {"name": "vllm"}
    path.write_text(json.dumps({**stored, "dataset": {"sha256": "a" * 64}}))
    reuse = judge(path, point, "a" * 64)
    assert isinstance(reuse, Reuse) and reuse.reason(tmp_path) == "reused from cell.json: AL 1.50"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"dataset": []}, "'dataset' is not a mapping"),
        ({"dataset": "qualitative"}, "'dataset' is not a mapping"),
        ({"engine": [1]}, "'engine' is not a mapping"),
        ({"engine": None}, "'engine' is missing"),
        ({"al": "1.5"}, "'al' is not a number"),
        ({"al": True}, "'al' is not a number"),
        ({"al_standard_error": [0.1]}, "'al_standard_error' is not a number"),
    ],
)
def test_a_result_file_of_the_wrong_shape_runs_the_cell_again(
    tmp_path: Path, change: dict[str, object], why: str
) -> None:
    write_recipe(tmp_path / "recipes", recipe(KEY, record=tmp_path / "starts.jsonl"))
    point = expand_all(load_tree(tmp_path / "recipes"))[0]
    stored = {
        "id": point.id,
        "fingerprint": point.fingerprint,
        "verdict": "pass",
        "al": 1.5,
        "dataset": {"sha256": "a" * 64},
        "engine": {"name": "vllm"},
    }
    path = tmp_path / "cell.json"
    path.write_text(json.dumps({**stored, **change}))
    assert judge(path, point, "a" * 64) == f"with a result file that is not reusable ({why})"


@pytest.mark.parametrize("throughput", [[], {"output_tokens_per_s_per_gpu": "fast"}])
def test_an_agentic_result_file_of_the_wrong_shape_runs_the_point_again(
    tmp_path: Path, throughput: object
) -> None:
    data = recipe(KEY, record=tmp_path / "starts.jsonl")
    data.pop("speedbench")
    data["agentic"] = {"points": [{"tp": 1, "concurrency": [1]}]}
    write_recipe(tmp_path / "recipes", data)
    point = expand_all(load_tree(tmp_path / "recipes"))[0]
    path = tmp_path / "point.json"
    path.write_text(
        json.dumps(
            {
                "id": point.id,
                "fingerprint": point.fingerprint,
                "verdict": "passed",
                "throughput": throughput,
            }
        )
    )
    assert str(judge(path, point, None)).startswith("with a result file that is not reusable (")


@pytest.mark.parametrize("word", ["pass", "passed"])
@pytest.mark.parametrize("kind", ["speedbench", "agentic"])
def test_a_passed_result_is_reused_whichever_word_its_file_was_written_with(
    tmp_path: Path, kind: str, word: str
) -> None:
    data = recipe(KEY, record=tmp_path / "starts.jsonl")
    if kind == "agentic":
        data.pop("speedbench")
        data["agentic"] = {"points": [{"tp": 1, "concurrency": [1]}], "traces": "builtin"}
    write_recipe(tmp_path / "recipes", data)
    point = expand_all(load_tree(tmp_path / "recipes"))[0]
    stored = {"id": point.id, "fingerprint": point.fingerprint, "kind": kind, "al": 1.5}
    stored |= {"engine": {"name": "vllm"}, "dataset": {"sha256": "a" * 64}}
    stored |= {"traces_sha256": "a" * 64, "throughput": {"output_tokens_per_s_per_gpu": 9.5}}
    path = tmp_path / "stored.json"
    path.write_text(json.dumps({**stored, "verdict": word}))
    assert isinstance(judge(path, point, "a" * 64), Reuse)
    path.write_text(json.dumps({**stored, "verdict": word.replace("pass", "fail")}))
    assert judge(path, point, "a" * 64) == "that did not pass last time"
