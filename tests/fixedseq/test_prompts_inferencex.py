"""Our prompts and processed file against InferenceX's own code, run unmodified from a checkout
named by ``$INFX_INFERENCEX_CHECKOUT``; skipped without one. ``benchmark_serving.py`` runs with
the embedded engine's python (it has transformers, NumPy and aiohttp) against a recording
server, and its prompts must be ours for the same tokenizer and seed (and worker count: 0 for its
own rule, as it runs on this machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_infx.fixedseq.prompts import HubTokenizer, random_prompts
from pytest_infx.fixedseq.results import processed
from pytest_infx.results.identity import ConfigIdentity

from .conftest import Server

INFERENCEX_VAR = "INFX_INFERENCEX_CHECKOUT"
TOKENIZER = Path(__file__).resolve().parents[1] / "agentic" / "data" / "tokenizer"
ISL, OSL, CONC = 64, 8, 2


def _checkout() -> Path:
    checkout = os.environ.get(INFERENCEX_VAR)
    if not checkout:
        pytest.skip(f"set {INFERENCEX_VAR} to an InferenceX checkout to compare with its code")
    return Path(checkout)


@pytest.mark.engine
def test_benchmark_serving_sends_our_prompts_and_process_result_makes_our_file(
    server: Server, tmp_path: Path
) -> None:
    checkout = _checkout()
    from pytest_infx.engines import embedded

    engine = embedded.ensure()
    argv = [
        str(engine.python), str(checkout / "utils" / "bench_serving" / "benchmark_serving.py"),
        "--backend", "vllm", "--base-url", server.url, "--endpoint", "/v1/completions",
        "--model", "m", "--tokenizer", str(TOKENIZER), "--dataset-name", "random",
        "--random-input-len", str(ISL), "--random-output-len", str(OSL),
        "--random-range-ratio", "0.8", "--num-prompts", str(10 * CONC),
        "--max-concurrency", str(CONC), "--request-rate", "inf", "--ignore-eos",
        "--num-warmups", str(2 * CONC), "--seed", "0",
        "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "90,99,99.9",
        "--save-result", "--result-dir", str(tmp_path), "--result-filename", "raw.json",
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    sent = [(str(b["prompt"]), b["max_tokens"]) for b in server.bodies[2 * CONC :]]
    ours = random_prompts(
        HubTokenizer.load(TOKENIZER),
        input_len=ISL,
        output_len=OSL,
        num_prompts=10 * CONC,
        range_ratio=0.8,
        seed=0,
        workers=0,
    )
    assert sorted(sent) == sorted((r.prompt, r.output_len) for r in ours.requests)

    raw = json.loads((tmp_path / "raw.json").read_text())
    env = {
        **os.environ, "RESULT_FILENAME": "raw", "RUNNER_TYPE": "cpu", "FRAMEWORK": "vllm",
        "PRECISION": "bf16", "TP": "1", "EP_SIZE": "1", "DP_ATTENTION": "false",
        "CONC": str(CONC), "ISL": str(ISL), "OSL": str(OSL), "MODEL": "m", "IMAGE": "",
        "MODEL_PREFIX": "m", "SPEC_DECODING": "none", "DISAGG": "false",
    }  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(checkout / "utils" / "process_result.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads((tmp_path / "agg_raw.json").read_text())
    identity = ConfigIdentity(
        runner="cpu", hardware="cpu", engine_version="0", image="", model="m", model_prefix="m",
        framework="vllm", precision="bf16", spec_method="none", isl=ISL, osl=OSL, tp=1, ep=1,
        dp_attention=False, conc=CONC,
    )  # fmt: skip
    mine = processed(identity, raw)
    figures = [k for k in theirs if k.endswith(("_per_gpu", "_ttft", "_tpot", "_itl", "_e2el"))]
    assert figures
    assert {k: mine.get(k) for k in figures} == pytest.approx({k: theirs[k] for k in figures})
