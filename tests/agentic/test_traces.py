from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_infx.agentic.traces import TraceError, default_traces_path, load_traces


def test_shipped_traces_are_a_small_multi_turn_set() -> None:
    traces = load_traces(default_traces_path())
    assert 12 <= traces.sessions <= 20
    files = sorted(default_traces_path().glob("*.json"))
    for file in files:
        data = json.loads(file.read_text())
        assert 2 <= len(data["requests"]) <= 5, file.name
        assert all(turn["out"] <= 64 for turn in data["requests"]), file.name
        assert data["totals"]["task"], file.name
    assert traces.turns == sum(len(json.loads(f.read_text())["requests"]) for f in files)
    assert len(traces.sha256) == 64


def test_digest_changes_with_content(tmp_path: Path) -> None:
    source = next(iter(sorted(default_traces_path().glob("*.json"))))
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    first = load_traces(tmp_path).sha256
    copy.write_text(copy.read_text().replace('"out": ', '"out":  '))
    assert load_traces(tmp_path).sha256 != first


def _trace(**changes: object) -> dict[str, object]:
    turn = {"t": 0.0, "type": "s", "model": "m", "in": 100, "out": 8, "hash_ids": [1, 2]}
    trace: dict[str, object] = {
        "id": "x",
        "models": ["m"],
        "block_size": 64,
        "hash_id_scope": "local",
        "requests": [turn],
    }
    return trace | changes


@pytest.mark.parametrize(
    ("trace", "needle"),
    [
        (_trace(requests=[]), "requests must be a non-empty list"),
        (_trace(block_size=0), "block_size must be a positive integer"),
        (_trace(hash_id_scope="global"), "hash_id_scope must be 'local'"),
        ({"id": "x"}, "missing key\\(s\\) models, block_size, hash_id_scope, requests"),
        (_trace(requests=[{"t": 0, "type": "q", "in": 1, "out": 1}]), "requests\\[0\\]: type"),
        (_trace(requests=[{"t": 0, "type": "s", "in": 0, "out": 1}]), "'in' must be a token"),
        (
            _trace(requests=[{"t": 0, "type": "s", "in": 10, "out": 1, "hash_ids": [1, 2]}]),
            "fill at most 1 blocks of 64, got 2",
        ),
        (
            _trace(
                requests=[
                    {"t": 5, "type": "s", "in": 10, "out": 1},
                    {"t": 1, "type": "s", "in": 10, "out": 1},
                ]
            ),
            "requests\\[1\\]: t=1 is earlier",
        ),
    ],
)
def test_bad_traces_name_file_and_entry(tmp_path: Path, trace: object, needle: str) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(trace))
    with pytest.raises(TraceError, match=f"{file}: .*{needle}|{file}: {needle}"):
        load_traces(tmp_path)


def test_invalid_json_and_duplicates(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{\n  nope")
    with pytest.raises(TraceError, match=r"a\.json:2: not valid JSON"):
        load_traces(tmp_path)
    (tmp_path / "a.json").write_text(json.dumps(_trace()))
    (tmp_path / "b.json").write_text(json.dumps(_trace()))
    with pytest.raises(TraceError, match=r"b\.json: trace id 'x' is already used by .*a\.json"):
        load_traces(tmp_path)
    with pytest.raises(TraceError, match="no such trace file or directory"):
        load_traces(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TraceError, match=r"no \*\.json trace files"):
        load_traces(empty)
