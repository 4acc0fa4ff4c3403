from __future__ import annotations

from pathlib import Path

from pytest_infx.results.layout import Layout


def test_every_file_lies_where_the_results_page_says(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    item = "qwen3-8b-h200-vllm-eagle3[k3-thinking_on]"
    assert layout.cell(item) == tmp_path / "cells" / f"{item}.json"
    assert (
        layout.matrix("qwen3-8b-h200-vllm-eagle3") == tmp_path / "qwen3-8b-h200-vllm-eagle3.al.yaml"
    )
    assert layout.point("a[tp8-c64]") == tmp_path / "agentic" / "a[tp8-c64].json"
    assert layout.artifacts("a[tp8-c64]") == tmp_path / "agentic" / "a[tp8-c64]"
    assert layout.inferencex("dsr1_fp8_tp8_conc64") == (
        tmp_path / "agentic" / "inferencex" / "dsr1_fp8_tp8_conc64.json"
    )
    assert layout.logs == tmp_path / "logs"
    assert (
        layout.server_log("qwen3-8b-0a1b2c3d", 2) == tmp_path / "logs" / "qwen3-8b-0a1b2c3d-2.log"
    )
    assert layout.plot("a", "al") == tmp_path / "plots" / "a.al.png"
    assert layout.plot("a", "agentic") == tmp_path / "plots" / "a.agentic.png"
    assert layout.report == tmp_path / "report.html"
    assert layout.drift == tmp_path / "drift-summary.md"
    assert layout.progress("run-1") == tmp_path / ".progress-run-1"


def test_a_recipe_s_cell_files_are_its_own_only(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert layout.cell_files("a") == []
    for item in ("a[k1-thinking_off]", "a[k2-thinking_off]", "ab[k1-thinking_off]", "a-b[k1-x]"):
        layout.cell(item).parent.mkdir(parents=True, exist_ok=True)
        layout.cell(item).write_text("{}")
    (layout.cells / "a[k1-thinking_off].json.tmp").write_text("")
    assert [p.name for p in layout.cell_files("a")] == [
        "a[k1-thinking_off].json",
        "a[k2-thinking_off].json",
    ]


def test_a_log_named_by_a_copied_folder_s_record_is_found_in_its_logs(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "copy")
    recorded = "/runner/work/infx-results/logs/srv-1.log"
    assert layout.log(recorded) == Path(recorded)
    layout.logs.mkdir(parents=True)
    (layout.logs / "srv-1.log").write_text("up\n")
    assert layout.log(recorded) == layout.logs / "srv-1.log"


def test_paths_are_named_relative_to_the_folder_when_inside_it(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert layout.relative(layout.inferencex("x")) == "agentic/inferencex/x.json"
    assert layout.relative(tmp_path.parent / "elsewhere.json") == str(
        tmp_path.parent / "elsewhere.json"
    )


def test_a_folder_holds_results_once_it_has_cells_or_points(tmp_path: Path) -> None:
    assert not Layout(tmp_path).holds_results()
    (tmp_path / "agentic").mkdir()
    assert Layout(tmp_path).holds_results()
