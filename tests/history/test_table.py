from __future__ import annotations

from pytest_infx.baseline_tolerance import MetricTolerance
from pytest_infx.history.gate import compare
from pytest_infx.history.table import html_section, markdown, text_lines

LIMITS = (MetricTolerance("tput_per_gpu", 0.05),)
FAILED = compare(
    "k[tp1-c4]",
    {"tput_per_gpu": 80.0, "median_ttft": 0.3, "acceptance_rate": 0.5},
    {"tput_per_gpu": 100.0, "median_ttft": 0.25, "acceptance_rate": 0.5},
    LIMITS,
    baseline_run="r1",
)
NONE = compare("k[tp1-c8]", {"tput_per_gpu": 1.0}, None, LIMITS, baseline_run=None)


def test_the_terminal_table_has_one_line_per_metric_in_inferencex_order() -> None:
    lines = text_lines([NONE, FAILED])
    assert lines[0] == "k[tp1-c4]  (baseline run r1)"
    assert lines[1].split() == ["metric", "baseline", "value", "delta", "allowed", "verdict"]
    assert lines[2].split() == ["tput_per_gpu", "(tok/s/gpu)", "100", "80", "-20.0%", "5%", "FAIL"]
    assert lines[3].split() == ["median_ttft", "(ms)", "250", "300", "+20.0%", "-"]
    assert lines[4] == "k[tp1-c8]: no baseline, passes"
    assert all(line == line.rstrip() for line in lines)
    assert not any("acceptance_rate" in line for line in lines)


def test_the_markdown_and_html_carry_the_same_rows() -> None:
    text = markdown([FAILED])
    assert "| tput_per_gpu (tok/s/gpu) | 100 | 80 | -20.0% | 5% | FAIL |" in text
    page = html_section([FAILED, NONE])
    assert '<tr class="fail"><td>tput_per_gpu (tok/s/gpu)</td>' in page
    assert "<code>k[tp1-c8]</code>: no baseline, passes" in page
    assert markdown([]) == "" and html_section([]) == ""
