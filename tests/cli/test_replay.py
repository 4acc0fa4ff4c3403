"""One point replayed from a checkout: the shape a checkout needs, the runner its launcher is
picked by, and what a replay records even when the step never ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_infx.cli.replay import (
    CheckoutError,
    check_checkout,
    replay,
    runner_node,
    speculative_decoding,
    sweep,
    workflow_inputs,
)

WORKFLOW = """\
env:
  TP: ${{ inputs.tp }}
jobs:
  b:
    steps:
      - env:
          RUNNER_NAME: ${{ runner.name }}
        run: bash ./runners/launch_${RUNNER_NAME%%_*}.sh
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def checkout(root: Path, launcher: str) -> Path:
    write(root / ".github/workflows/benchmark-tmpl.yml", WORKFLOW)
    write(root / "configs/amd-master.yaml", "{}\n")
    write(root / "configs/runners.yaml", "labels:\n  mi355x: [mi355x-a_00, mi355x-b_00]\n")
    write(root / "benchmarks/benchmark_lib.sh", "\n")
    write(
        root / "utils/matrix_logic/generate_sweep_configs.py",
        "import sys, json\nprint(json.dumps({'points': [{'tp': 2, 'argv': sys.argv[1:]}]}))\n",
    )
    write(root / "runners/launch_mi355x-a.sh", launcher)
    return root


def test_the_first_missing_part_of_a_checkout_is_named(tmp_path: Path) -> None:
    root = checkout(tmp_path, "\n")
    (root / "benchmarks/benchmark_lib.sh").unlink()
    with pytest.raises(CheckoutError, match=r"no benchmarks/benchmark_lib\.sh\); give the root"):
        check_checkout(root)


def test_the_sweep_is_the_generators_over_the_master_configs(tmp_path: Path) -> None:
    root = checkout(tmp_path, "\n")
    [point] = sweep(root)
    assert point["argv"][-1] == "configs/amd-master.yaml"
    assert point["argv"][:3] == ["full-sweep", "--single-node", "--no-evals"]


def test_the_launcher_is_the_first_runner_of_the_label(tmp_path: Path) -> None:
    assert runner_node(checkout(tmp_path, "\n"), "mi355x") == "mi355x-a_00"
    with pytest.raises(CheckoutError, match="no runner for label 'h100'"):
        runner_node(tmp_path, "h100")


def test_a_step_that_never_ends_is_stopped_and_what_it_ran_is_kept(tmp_path: Path) -> None:
    launcher = (
        "export PORT=8000\n"
        "vllm serve m --tensor-parallel-size $TP &\n"
        "python3 utils/bench_serving/benchmark_serving.py --num-prompts 3\n"
        "while :; do /bin/sleep 1; done\n"
    )
    done = replay(checkout(tmp_path, launcher), {"runner": "mi355x", "tp": 2}, timeout=5)
    assert done.returncode is None
    assert done.server is not None
    assert done.server["argv"] == ["vllm", "serve", "m", "--tensor-parallel-size", "2"]
    assert done.server["env"]["PORT"] == "8000"
    assert "TP" not in done.server["env"]
    assert done.client is not None
    assert done.client["argv"][-2:] == ["--num-prompts", "3"]
    assert json.dumps(done.calls)


def test_each_master_key_lists_the_speculative_decoding_of_its_search_spaces(
    tmp_path: Path,
) -> None:
    root = checkout(tmp_path, "\n")
    write(
        root / "configs/amd-master.yaml",
        "a:\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      search-space:\n"
        "      - {tp: 8, conc-list: [1]}\n"
        "b-mtp:\n  scenarios:\n    agentic-coding:\n    - search-space:\n"
        "      - {tp: 8, spec-decoding: mtp, conc-list: [1]}\n",
    )
    assert speculative_decoding(root) == {"a": {"none"}, "b-mtp": {"mtp"}}


def test_a_point_is_passed_to_the_workflow_as_run_sweep_passes_it() -> None:
    backend = {"name": "hicache", "ratio": 2}
    inputs = workflow_inputs({"tp": 8, "kv-offload-backend": backend, "router": {"a": 1}})
    assert inputs["tp"] == 8
    assert inputs["kv-offload-backend"] == "hicache"
    assert json.loads(inputs["kv-offload-backend-metadata"]) == backend
    assert json.loads(inputs["router"]) == {"a": 1}
