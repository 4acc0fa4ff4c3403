"""TensorRT-LLM SPEED-Bench cells end to end against the trtllm-serve stand-in: the server gets
``enable_iter_perf_stats`` in its LLM-API options, the cell reads the drained per-iteration stats
throughout its pass, and the AL summed from them meets the golden curve (or drifts from it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import MODES
from .test_trtllm_point import FAKE_TRTLLM, OPTIONS

KEY = "fake-cpu-trtllm-cell"


def trtllm_cell_recipe(sweep: Sweep, *, draft_length: int, options: dict[str, object]) -> Path:
    path = sweep.add(KEY, draft_lengths=(draft_length,), speculative={"method": "mtp"})
    data = yaml.safe_load(path.read_text())
    data["engine"]["name"] = "trtllm"
    data["engine"]["version"] = "1.3.0rc14"
    data["engine"]["command"] = [sys.executable, str(FAKE_TRTLLM), "--record", str(sweep.record)]
    data["engine"]["args"] = {"backend": "pytorch", "extra_llm_api_options": options}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_trtllm_cell_reads_its_al_from_the_iteration_stats(sweep: Sweep) -> None:
    trtllm_cell_recipe(sweep, draft_length=2, options=OPTIONS)
    al = expected_al(DEFAULT_PATTERN, 2)
    sweep.commit_golden({m: {2: al} for m in MODES})
    result = sweep.run()
    result.assert_outcomes(passed=len(MODES))
    for mode in MODES:
        cell = sweep.cell(f"{KEY}[k2-{mode}]")
        assert cell["engine"]["name"] == "trtllm"
        assert cell["al"] == round(al, 2)
        assert cell["counters"]["delta"]["drafts"] > 0
        assert cell["counters"]["delta"]["draft_tokens"] == 2 * cell["counters"]["delta"]["drafts"]
        assert cell["verdict"] == "pass"
    (start,) = [json.loads(line) for line in sweep.record.read_text().splitlines()]
    assert start["llm_api_options"]["enable_iter_perf_stats"] is True
    assert start["llm_api_options"]["speculative_config"]["num_nextn_predict_layers"] == 2


def test_a_drifted_trtllm_curve_fails_the_cell(sweep: Sweep) -> None:
    trtllm_cell_recipe(sweep, draft_length=2, options=OPTIONS)
    sweep.commit_golden({m: {2: expected_al(DEFAULT_PATTERN, 2) + 0.5} for m in MODES})
    result = sweep.run()
    result.assert_outcomes(failed=len(MODES))
    assert sweep.cell(f"{KEY}[k2-thinking_off]")["verdict"] == "fail"


def test_a_cell_whose_recipe_turns_the_iteration_stats_off_is_refused(sweep: Sweep) -> None:
    trtllm_cell_recipe(sweep, draft_length=2, options={**OPTIONS, "enable_iter_perf_stats": False})
    sweep.commit_golden({m: {2: 2.0} for m in MODES})
    result = sweep.run()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*enable_iter_perf_stats must stay on for SPEED-Bench points*"])
    assert not sweep.record.exists() or not sweep.record.read_text().strip()
