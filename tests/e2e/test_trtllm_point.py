"""A TensorRT-LLM fixed-seq-len point end to end against the trtllm-serve stand-in: pytest-infx's
own TensorRT-LLM adapter writes the LLM-API options file, starts the server with it, forces the
golden curve's AL as TensorRT-LLM counts it (AL - 1), and writes InferenceX's result files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from pytest_infx.launch.ports import free_port

from .conftest import TOKENIZER, Sweep
from .helpers import CURVE, MODES, recipe, write_recipe

FAKE_TRTLLM = Path(__file__).resolve().with_name("fake_trtllm.py")
KEY = "fake-cpu-trtllm"
OPTIONS = {"kv_cache_config": {"free_gpu_memory_fraction": 0.8}, "print_iter_log": True}


def _add(sweep: Sweep) -> Path:
    data = recipe(KEY, record=sweep.record, port=free_port("127.0.0.1"))
    del data["speedbench"]
    data["model"]["path"] = str(TOKENIZER)
    data["engine"] = {
        "name": "trtllm",
        "version": "1.3.0rc14",
        "command": [sys.executable, str(FAKE_TRTLLM), "--record", str(sweep.record)],
        "port": data["engine"]["port"],
        "ready-timeout": 30,
        "args": {"backend": "pytorch", "max_seq_len": 2048, "extra_llm_api_options": OPTIONS},
    }
    data["fixed-seq-len"] = {
        "points": [{"tp": 1, "isl": 64, "osl": 8, "concurrency": [1, 2]}],
        "speculative": {"method": "mtp", "draft-length": 3, "golden": CURVE},
    }
    return write_recipe(sweep.recipes, data)


def test_a_trtllm_point_runs_with_its_options_file_and_forced_acceptance(sweep: Sweep) -> None:
    _add(sweep)
    sweep.commit_golden({m: {3: 2.5} for m in MODES})
    result = sweep.run("-m", "fixed_seq_len")
    result.assert_outcomes(passed=2)
    (start,) = [json.loads(line) for line in sweep.record.read_text().splitlines()]
    assert start["llm_api_options"] == {
        **OPTIONS,
        "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 3},
    }
    assert start["forced"] == "1.5"
    argv = start["argv"]
    options_file = Path(argv[argv.index("--extra_llm_api_options") + 1])
    assert yaml.safe_load(options_file.read_text()) == start["llm_api_options"]
    for conc in (1, 2):
        point = json.loads(
            (sweep.results / "fixed-seq-len" / f"{KEY}[tp1-isl64-osl8-c{conc}].json").read_text()
        )
        assert point["verdict"] == "pass"
        agg = json.loads((sweep.results / point["inferencex_result"]).read_text())
        assert agg["framework"] == "trt" and agg["conc"] == conc


def test_the_plan_shows_the_options_file(sweep: Sweep) -> None:
    _add(sweep)
    sweep.commit_golden({m: {3: 2.5} for m in MODES})
    result = sweep.pytester.runpytest("--gpu", "cpu", "--collect-only", "-q", "--infx-plan")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "    argv: * --extra_llm_api_options '{files}/extra-llm-api-options.yaml'",
            "    env: TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.5",
            "    file {files}/extra-llm-api-options.yaml:",
            "      kv_cache_config:",
            "        free_gpu_memory_fraction: 0.8",
            "      print_iter_log: true",
            "      speculative_config:",
            "        decoding_type: MTP",
            "        num_nextn_predict_layers: 3",
        ]
    )


@pytest.mark.engine
def test_a_trtllm_agentic_point_admits_twice_its_concurrency_through_max_batch_size(
    aiperf_installed: None, sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    path = sweep.add_agentic("fake-trtllm-agentic", [2], free_port("127.0.0.1"))
    data = yaml.safe_load(path.read_text())
    data["engine"] = {
        "name": "trtllm",
        "version": "1.3.0rc14",
        "command": [sys.executable, str(FAKE_TRTLLM), "--record", str(sweep.record)],
        "port": data["engine"]["port"],
        "ready-timeout": 30,
        "args": {"backend": "pytorch", "extra_llm_api_options": OPTIONS},
    }
    data["agentic"]["speculative"] = {"method": "mtp", "draft-length": 3, "golden": CURVE}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    sweep.commit_golden({m: {3: 2.5} for m in MODES})
    result = sweep.run("-m", "agentic")
    result.assert_outcomes(passed=1)
    (start,) = [json.loads(line) for line in sweep.record.read_text().splitlines()]
    argv = start["argv"]
    assert argv[argv.index("--max_batch_size") + 1] == "4" and start["forced"] == "1.5"
    record = json.loads(
        (sweep.results / "agentic" / "fake-trtllm-agentic[tp1-c2].json").read_text()
    )
    agg = json.loads((sweep.results / record["inferencex_result"]).read_text())
    assert agg["conc"] == 2 and agg["framework"] == "trt"
