"""ATOM points end to end against the ATOM stand-in, started by pytest-infx's own ATOM adapter
with ATOM's argv: a SPEED-Bench cell (AL from ATOM's counters, result file, golden comparison),
and a fixed-seq-len and an AgentX point with the golden curve's AL forced."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from pytest_infx.launch.ports import free_port

from .conftest import TOKENIZER, Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import CURVE, MODES

FAKE_ATOM = Path(__file__).resolve().with_name("fake_atom.py")
KEY = "fake-cpu-atom"


def atom_recipe(sweep: Sweep, *, draft_length: int) -> Path:
    path = sweep.add(KEY, draft_lengths=(draft_length,), speculative={"method": "mtp"})
    data = yaml.safe_load(path.read_text())
    data["engine"]["name"] = "atom"
    data["engine"]["command"] = [sys.executable, str(FAKE_ATOM), "--record", str(sweep.record)]
    data["engine"]["args"] = {"kv_cache_dtype": "fp8", "block-size": 16}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_an_atom_cell_runs_end_to_end(sweep: Sweep) -> None:
    atom_recipe(sweep, draft_length=2)
    al = expected_al(DEFAULT_PATTERN, 2)
    sweep.commit_golden({m: {2: al} for m in MODES})
    result = sweep.run()
    result.assert_outcomes(passed=len(MODES))
    for mode in MODES:
        cell = sweep.cell(f"{KEY}[k2-{mode}]")
        assert cell["engine"]["name"] == "atom"
        assert cell["al"] == round(al, 2)
        assert cell["counters"]["delta"]["drafts"] > 0
        assert cell["verdict"] == "pass"
    (argv,) = [json.loads(line)["argv"] for line in sweep.record.read_text().splitlines()]
    assert argv[argv.index("--method") + 1] == "mtp"
    assert argv[argv.index("--num-speculative-tokens") + 1] == "2"
    assert "-tp" in argv and "--server-port" in argv and "--host" not in argv


def test_a_drifted_atom_curve_fails_the_cell(sweep: Sweep) -> None:
    atom_recipe(sweep, draft_length=2)
    sweep.commit_golden({m: {2: expected_al(DEFAULT_PATTERN, 2) + 0.5} for m in MODES})
    result = sweep.run()
    result.assert_outcomes(failed=len(MODES))
    assert sweep.cell(f"{KEY}[k2-thinking_off]")["verdict"] == "fail"


def test_an_atom_fixed_seq_len_point_runs_with_the_golden_al_forced(sweep: Sweep) -> None:
    path = atom_recipe(sweep, draft_length=2)
    data = yaml.safe_load(path.read_text())
    del data["speedbench"]
    data["model"]["path"] = str(TOKENIZER)
    data["fixed-seq-len"] = {
        "points": [{"tp": 1, "isl": 64, "osl": 8, "concurrency": [2]}],
        "speculative": {"method": "mtp", "draft-length": 2, "golden": CURVE},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    sweep.commit_golden({m: {2: 2.5} for m in MODES})
    result = sweep.run("-m", "fixed_seq_len")
    result.assert_outcomes(passed=1)
    (argv,) = [json.loads(line)["argv"] for line in sweep.record.read_text().splitlines()]
    assert argv[argv.index("--spec-decode-acceptance-length") + 1] == "2.5"
    point = json.loads(
        (sweep.results / "fixed-seq-len" / f"{KEY}[tp1-isl64-osl8-c2].json").read_text()
    )
    assert point["verdict"] == "pass" and point["requests"]["completed"] == 20


@pytest.mark.engine
def test_an_atom_agentic_point_runs_with_the_golden_al_forced(
    aiperf_installed: None, sweep: Sweep, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNNER_NAME", raising=False)
    path = sweep.add_agentic("fake-atom-agentic", [2], free_port("127.0.0.1"))
    data = yaml.safe_load(path.read_text())
    data["engine"] = {
        "name": "atom",
        "version": "0.1.0",
        "command": [sys.executable, str(FAKE_ATOM), "--record", str(sweep.record)],
        "port": data["engine"]["port"],
        "ready-timeout": 30,
        "args": {"kv_cache_dtype": "fp8", "enable-prefix-caching": True},
    }
    data["agentic"]["speculative"] = {"method": "mtp", "draft-length": 3, "golden": CURVE}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    sweep.commit_golden({m: {3: 2.5} for m in MODES})
    result = sweep.run("-m", "agentic")
    result.assert_outcomes(passed=1)
    (argv,) = [json.loads(line)["argv"] for line in sweep.record.read_text().splitlines()]
    assert argv[argv.index("--spec-decode-acceptance-length") + 1] == "2.5"
    assert "--enable-prefix-caching" in argv
    record = json.loads((sweep.results / "agentic" / "fake-atom-agentic[tp1-c2].json").read_text())
    agg = json.loads((sweep.results / record["inferencex_result"]).read_text())
    assert agg["conc"] == 2 and agg["framework"] == "atom"
