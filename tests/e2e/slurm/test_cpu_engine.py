"""A real CPU recipe sweep through Slurm: the worker job serves the embedded vLLM and must
measure the ALs a local run measures (the committed golden values, which local runs reproduce
to the digit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .cluster import Cluster

pytestmark = pytest.mark.engine

RECIPE = "recipes/smollm2-bf16-cpu-vllm-ngram.yaml"
GOLDEN = "golden/smollm2_ngram.yaml"


def test_ngram_cells_through_slurm_match_the_local_golden_curve(
    pytestconfig: pytest.Config, slurm_cluster: Cluster, tmp_path: Path
) -> None:
    root = pytestconfig.rootpath
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "pytest", RECIPE, "-m", "speedbench", "-k", "k1"]
    argv += ["--gpu", "cpu", "--infx-slurm", "1", "--infx-results", str(results)]
    argv += ["-p", "no:cacheprovider", "-p", "no:randomly", "-rA"]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    golden = yaml.safe_load((root / GOLDEN).read_text())["smollm2-135m-instruct"]
    cells = sorted((results / "cells").glob("*.json"))
    assert [p.stem for p in cells] == [
        f"smollm2-bf16-cpu-vllm-ngram[k1-{mode}]" for mode in ("thinking_off", "thinking_on")
    ]
    for path in cells:
        cell = json.loads(path.read_text())
        mode = cell["point"]["thinking"]
        assert cell["verdict"] == "pass", cell["reasons"]
        assert round(cell["al"], 2) == golden[mode][1], (mode, cell["al"])
    assert "@infx-" in done.stdout, "the items did not run on an xdist worker"
