"""An AgentX point's measurement without pytest: its passes and what fails it beyond its own
gate. The pytest side (kept record, item message, problems in the history row) is
tests/plugin/run/test_kinds.py and tests/plugin/run/test_agentic_repeats.py; the whole chain
through the real aiperf is tests/e2e/test_agentic_servers.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipes.conftest import repository_points

from pytest_infx.agentic.measure import agentic_of, passes, traces_sha256
from pytest_infx.agentic.runner import AgenticRun
from pytest_infx.agentic.traces import default_traces_path, load_traces
from pytest_infx.recipes.points import Point


def _first(kind: str) -> Point:
    return next(p for p in repository_points().values() if p.kind == kind)


def _run(folder: Path) -> AgenticRun:
    return AgenticRun(
        aiperf=Path("aiperf"),
        url="http://127.0.0.1:1",
        model="m",
        tokenizer="m",
        concurrency=2,
        duration_s=10,
        artifact_dir=folder,
        traces=folder,
    )


def test_one_pass_keeps_the_point_s_folder_and_more_get_one_each(tmp_path: Path) -> None:
    base = _run(tmp_path / "a[tp1-c2]")
    assert passes(base, 1) == [base]
    assert [run.artifact_dir.name for run in passes(base, 3)] == ["pass-1", "pass-2", "pass-3"]
    assert all(run.artifact_dir.parent == base.artifact_dir for run in passes(base, 2))


def test_the_shipped_traces_are_the_data_a_stored_point_must_have() -> None:
    builtin = next(
        p for p in repository_points().values() if p.agentic and p.agentic.traces == "builtin"
    )
    assert traces_sha256(builtin) == load_traces(default_traces_path()).sha256
    assert traces_sha256(_first("speedbench")) is None


def test_a_point_of_another_kind_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"is a speedbench point, not an AgentX point"):
        agentic_of(_first("speedbench"))
