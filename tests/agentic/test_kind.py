from __future__ import annotations

from pathlib import Path

import pytest
from results.samples import cell, point

from pytest_infx.agentic.kind import KIND
from pytest_infx.results.layout import Layout


def test_a_point_is_kept_under_agentic_and_keyed_by_its_variant(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert KIND.result_path(layout, "a[tp1-c2]") == layout.point("a[tp1-c2]")
    facts = KIND.row(point(point={"tp": 1, "concurrency": 2, "variant": "hicache"}))
    assert (facts.benchmark, facts.cell, facts.dataset) == ("agentic", "hicache", "builtin-traces")
    assert KIND.row(point(traces_sha256=None)).dataset == "hub-traces"


def test_a_point_s_headline_is_its_output_rate_per_gpu() -> None:
    assert KIND.figure(point()) == "50.0 output tok/s/GPU"
    assert KIND.metrics(point())["output_tput_per_gpu"] == 50.0
    assert "tput_per_gpu" not in KIND.metrics(point()), "aiperf's own figures have no total"


def test_another_kind_s_record_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"is a speedbench record, not an AgentX point's"):
        KIND.row(cell())


def test_the_end_of_run_table_has_the_point() -> None:
    assert KIND.title == "infx agentic"
    lines = KIND.table([point()])
    assert lines[0] == "a" and lines[3].split()[:3] == ["1", "2", "50.0"]
