"""The fixed-seq-len kind as its users run it, against the vLLM stand-in: the items and their
marker, the files InferenceX reads, the end-of-run table, the checks that fail a point, resume
and the baseline gate. The real engine runs the same kind in tests/e2e/test_main_job.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.launch.ports import free_port

from .conftest import TOKENIZER, Sweep
from .helpers import recipe, write_recipe

KEY = "fake-fixed"
IDS = [f"{KEY}[tp1-isl64-osl8-c1]", f"{KEY}[tp1-isl64-osl8-c2]", f"{KEY}[tp1-isl128-osl4-c2]"]


def _add(sweep: Sweep, *extra: str, faults: tuple[str, ...] = (), **block: Any) -> Path:
    data = recipe(KEY, record=sweep.record, extra=extra, faults=faults, port=free_port("127.0.0.1"))
    del data["speedbench"]
    data["model"]["path"] = str(TOKENIZER)
    data["fixed-seq-len"] = {
        "points": [
            {"tp": 1, "isl": 64, "osl": 8, "concurrency": [1, 2]},
            {"tp": 1, "isl": 128, "osl": 4, "concurrency": [2]},
        ],
        **block,
    }
    data["tolerance"] = {"output_tput_per_gpu": "-20%"}
    return write_recipe(sweep.recipes, data)


def _record(sweep: Sweep, item_id: str) -> dict[str, Any]:
    path = sweep.results / "fixed-seq-len" / f"{item_id}.json"
    return dict(json.loads(path.read_text()))


def test_the_marker_selects_one_item_per_tp_lengths_and_concurrency(sweep: Sweep) -> None:
    _add(sweep)
    sweep.add("fake-speedbench")
    result = sweep.pytester.runpytest("--gpu", "cpu", "-m", "fixed_seq_len", "--collect-only", "-q")
    listed = [line.split("::", 1)[1] for line in result.outlines if "::" in line]
    assert sorted(listed) == sorted(IDS)


def test_a_sweep_writes_inferencex_s_files_and_one_server_serves_every_point(
    sweep: Sweep,
) -> None:
    _add(sweep, "--step-delay", "0.001")
    result = sweep.run("-m", "fixed_seq_len")
    result.assert_outcomes(passed=3)
    assert len(sweep.record.read_text().splitlines()) == 1, "the points share their server"
    result.stdout.fnmatch_lines(["*infx fixed-seq-len*", f"{IDS[1]}*20/20*"])
    point = _record(sweep, IDS[1])
    assert point["verdict"] == "pass"
    assert point["requests"] == {
        "sent": 20, "completed": 20, "failed": 0, "empty": 0, "short": 0, "warmups": 4
    }  # fmt: skip
    raw = json.loads((sweep.results / point["raw_result"]).read_text())
    agg = json.loads((sweep.results / point["inferencex_result"]).read_text())
    assert point["inferencex_result"].split("/")[-1] == "agg_" + point["raw_result"].split("/")[-1]
    assert raw["num_prompts"] == 20 and raw["max_concurrency"] == 2 and raw["completed"] == 20
    assert all(51 <= n <= 64 for n in raw["input_lens"]) and set(raw["output_lens"]) <= {6, 7, 8}
    assert agg["output_tput_per_gpu"] == pytest.approx(raw["output_throughput"])
    assert point["figures"]["median_tpot"] == agg["median_tpot"] > 0
    assert (agg["isl"], agg["osl"], agg["conc"], agg["hw"]) == (64, 8, 2, "cpu")
    assert raw["benchmark_end_time_unix"] > raw["benchmark_start_time_unix"] > 0
    assert (agg["power_valid"], agg["power_metric_schema_version"]) == (0, 2)
    assert agg["recipe_fingerprint"] and agg["std_intvty"] > 0
    raw_path = sweep.results / point["raw_result"]
    power = json.loads(raw_path.with_name(f"power_validation_{raw_path.name}").read_text())
    assert power["benchmark_result"] == raw_path.name
    assert power["reasons"] == ["telemetry_file_missing"]


def test_an_engine_that_stops_early_fails_the_point_and_keeps_its_numbers(sweep: Sweep) -> None:
    _add(sweep, faults=("ignore-eos-off",))
    result = sweep.run("-m", "fixed_seq_len", "-k", "c1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*requests ended before their output length although ignore_eos*"])
    point = _record(sweep, IDS[0])
    assert point["verdict"] == "fail" and point["requests"]["short"] == 10
    assert (sweep.results / point["inferencex_result"]).is_file()


def test_failed_requests_fail_the_point_by_name(sweep: Sweep) -> None:
    _add(sweep, faults=("fail-requests=3",), **{"warmups-per-concurrency": 0})
    result = sweep.run("-m", "fixed_seq_len", "-k", "c1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*3 of 10 requests failed: HTTP 500*stand-in failure*"])


def test_resume_reuses_a_passed_point_and_measures_the_rest(sweep: Sweep) -> None:
    _add(sweep)
    sweep.run("-m", "fixed_seq_len", "-k", "c1").assert_outcomes(passed=1)
    again = sweep.run("-m", "fixed_seq_len", "--infx-resume")
    outcomes = again.parseoutcomes()
    assert (outcomes["passed"], outcomes["reused"]) == (2, 1)
    again.stdout.fnmatch_lines(
        ["*-c1?: reused from fixed-seq-len/*-c1?.json: * output tok/s/GPU", "1 cell reused, 2 run*"]
    )
    assert len(sweep.record.read_text().splitlines()) == 2


def test_a_slower_run_fails_the_baseline_gate_beyond_the_recipe_s_tolerance(
    sweep: Sweep,
) -> None:
    _add(sweep, "--step-delay", "0.002")
    first = sweep.run("-m", "fixed_seq_len", "-k", "c1", "--infx-branch", "main")
    first.assert_outcomes(passed=1)
    _add(sweep, "--step-delay", "0.05")
    second = sweep.run("-m", "fixed_seq_len", "-k", "c1", "--infx-baseline", "main")
    second.assert_outcomes(failed=1)
    second.stdout.fnmatch_lines(
        ["*: output_tput_per_gpu * vs baseline * (-*%, allowed 20%) beyond its tolerance*"]
    )
    second.stdout.fnmatch_lines(
        ["*infx baseline*", "fake-fixed*c1*", "*output_tput_per_gpu (tok/s/gpu) * 20% *FAIL"]
    )


def test_the_chart_draws_each_point_over_its_result_from_the_run_before(sweep: Sweep) -> None:
    _add(sweep)
    sweep.run("-m", "fixed_seq_len", "-k", "c2").assert_outcomes(passed=2)
    page = (sweep.results / "report.html").read_text()
    assert "Grey, dashed" not in page, "a first run has nothing earlier to draw"
    again = sweep.run("-m", "fixed_seq_len")
    again.assert_outcomes(passed=3)
    page = (sweep.results / "report.html").read_text()
    assert "Grey, dashed: 2 of these points as an earlier run measured them" in page


NVIDIA_SMI = """#!/bin/sh
case "$1" in
  --query-gpu=index,name,memory.total) echo "0, NVIDIA H200, 143771 MiB" ;;
  --query-gpu=index,memory.used) echo "0, 0 MiB" ;;
  --query-gpu=index,power.draw,temperature.gpu,utilization.gpu,memory.used)
    echo "0, 650.00 W, 55, 95 %, 120000 MiB" ;;
  *) exit 2 ;;
esac
"""


def test_a_point_on_a_gpu_records_its_gpus_power_and_energy(
    sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = sweep.root / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "nvidia-smi"
    tool.write_text(NVIDIA_SMI)
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    path = _add(sweep, "--step-delay", "0.05")
    path.write_text(path.read_text().replace("runner: cpu", "runner: h200"))
    result = sweep.pytester.runpytest_subprocess(
        "--gpu", "h200", "--infx-results", str(sweep.results), "-m", "fixed_seq_len", "-k", "c2"
    )
    result.assert_outcomes(passed=2)
    point = _record(sweep, IDS[1])
    telemetry = point["gpu_telemetry"]
    assert telemetry["gpus"] == [0] and telemetry["samples"] >= 1
    assert telemetry["mean_power_w"] == 650.0 and telemetry["peak_temperature_c"] == 55.0
    assert telemetry["output_tokens_per_joule"] > 0
    assert telemetry["error"] is None
    rows = (sweep.results / telemetry["file"]).read_text().splitlines()
    assert rows[0] == "time_s,gpu,power_w,temperature_c,utilization_pct,memory_used_mib"
    assert rows[1].endswith(",0,650,55,95,120000")
    page = (sweep.results / "report.html").read_text()
    assert "<th>GPU W</th><th>tok/J</th>" in page
    assert '<td class="num">650</td>' in page


def test_a_point_measured_in_repeats_keeps_each_pass_and_their_median(sweep: Sweep) -> None:
    _add(sweep, "--step-delay", "0.001", repeats=3)
    result = sweep.run("-m", "fixed_seq_len", "-k", "c1", "-o", "infx_repeats=5")
    result.assert_outcomes(passed=1)
    point = _record(sweep, IDS[0])
    passes = point["passes"]
    assert len(passes) == 3, "the recipe's repeats win over the ini's"
    for name in ("tput_per_gpu", "median_ttft"):
        assert point["figures"][name] == sorted(each[name] for each in passes)[1]
    assert point["requests"]["sent"] == 10


def test_a_bad_repeats_in_the_ini_is_a_usage_error(sweep: Sweep) -> None:
    _add(sweep)
    result = sweep.run("-m", "fixed_seq_len", "-o", "infx_repeats=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini infx_repeats = '0': give a whole number above 0*"])
