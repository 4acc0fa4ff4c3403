#!/usr/bin/env python3
"""Our fixed-seq-len client beside vLLM's own benchmark client, against one real CPU server.

The embedded engine (vLLM on the CPU, SmolLM2-135M) serves both; each round runs the two
clients one after the other, in alternating order, with the same load: ``--prompts-per-conc``
x concurrency prompts of exactly ``--isl`` tokens (range ratio 1 in ours, 0 in vLLM's, which
reads the ratio as a +/- band), ``--osl`` output tokens forced with ``ignore_eos``, 2 x
concurrency warm-up requests, the completions endpoint. The prompts differ (each client draws
its own random token ids); the figures compared are output throughput and median TPOT, each the
median over the rounds after ``--warm-rounds`` (the engine's first requests run slower).

    python benchmarks/fixed_seq_len_clients.py [--isl 256] [--osl 32] [--concurrency 4]
        [--prompts-per-conc 10] [--rounds 5] [--warm-rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client_overhead import VLLM_DRIVER

from pytest_infx.engines import vllm_cpu
from pytest_infx.fixedseq.client import FixedClientConfig, run_requests_sync
from pytest_infx.fixedseq.prompts import HubTokenizer, random_prompts
from pytest_infx.fixedseq.results import RunInfo, raw_result
from pytest_infx.launch.ports import free_port
from pytest_infx.launch.process import GUARD


def start(engine: vllm_cpu.VllmCpuEngine, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port("127.0.0.1")
    argv = [
        *vllm_cpu.server_command(engine),
        "--model", str(engine.model_dir),
        "--served-model-name", "m",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--max-model-len", "2048",
        "--enforce-eager",
        "--dtype", "float32",
    ]  # fmt: skip
    guarded = [sys.executable, "-I", "-S", str(GUARD), "--parent-pid", str(os.getpid()), "--"]
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [*guarded, *argv],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=vllm_cpu.server_env(),
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the server was not ready in 600 s; see {log}")


def ours(args: argparse.Namespace, engine: vllm_cpu.VllmCpuEngine, url: str) -> dict[str, float]:
    conc = args.concurrency
    prompts = random_prompts(
        HubTokenizer.load(engine.model_dir),
        input_len=args.isl,
        output_len=args.osl,
        num_prompts=args.prompts_per_conc * conc,
        range_ratio=1.0,
        seed=0,
    )
    config = FixedClientConfig(url, "m", concurrency=conc, warmups=2 * conc)
    outcome = run_requests_sync(config, prompts.requests)
    info = RunInfo("m", "m", len(prompts.requests), conc, backend="vllm")
    raw = raw_result(info, prompts.requests, outcome)
    return _figures(raw)


def theirs(args: argparse.Namespace, engine: vllm_cpu.VllmCpuEngine, url: str) -> dict[str, float]:
    conc = args.concurrency
    with tempfile.TemporaryDirectory() as out:
        argv = [
            str(engine.python), "-c", VLLM_DRIVER,
            "--backend", "openai",
            "--base-url", url,
            "--endpoint", "/v1/completions",
            "--model", "m",
            "--tokenizer", str(engine.model_dir),
            "--dataset-name", "random",
            "--random-input-len", str(args.isl),
            "--random-output-len", str(args.osl),
            "--random-range-ratio", "0",
            "--num-prompts", str(args.prompts_per_conc * conc),
            "--max-concurrency", str(conc),
            "--request-rate", "inf",
            "--ignore-eos",
            "--num-warmups", str(2 * conc),
            "--percentile-metrics", "ttft,tpot,itl,e2el",
            "--metric-percentiles", "50,90,99",
            "--seed", "0",
            "--save-result",
            "--result-dir", out,
            "--result-filename", "vllm.json",
            "--disable-tqdm",
        ]  # fmt: skip
        env = {**os.environ, "VLLM_USE_RUST_BENCH": "0", "no_proxy": "*", "NO_PROXY": "*"}
        done = subprocess.run(
            argv, check=False, capture_output=True, text=True, env=env, timeout=1800
        )
        if done.returncode != 0:
            raise SystemExit(f"vLLM's client failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return _figures(json.loads((Path(out) / "vllm.json").read_text()))


def _figures(raw: dict[str, Any]) -> dict[str, float]:
    return {
        "output_tok_s": float(raw["output_throughput"]),
        "median_tpot_ms": float(raw["median_tpot_ms"]),
        "median_ttft_ms": float(raw["median_ttft_ms"]),
        "completed": float(raw["completed"]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isl", type=int, default=256)
    ap.add_argument("--osl", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--prompts-per-conc", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warm-rounds", type=int, default=1)
    args = ap.parse_args()
    from pytest_infx.engines import embedded

    engine = embedded.ensure()
    assert isinstance(engine, vllm_cpu.VllmCpuEngine)
    with tempfile.TemporaryDirectory() as folder:
        proc, url = start(engine, Path(folder) / "server.log")
        rows: dict[str, list[dict[str, float]]] = {"infx": [], "vllm": []}
        try:
            for round_no in range(args.warm_rounds + args.rounds):
                order = ("infx", "vllm") if round_no % 2 == 0 else ("vllm", "infx")
                warm = round_no < args.warm_rounds
                for name in order:
                    run = ours if name == "infx" else theirs
                    figures = run(args, engine, url)
                    if not warm:
                        rows[name].append(figures)
                    print(f"round {round_no + 1}{' (warm-up)' if warm else ''} {name}: {figures}")
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(60)
    prompts = args.prompts_per_conc * args.concurrency
    print(
        f"isl {args.isl}, osl {args.osl}, concurrency {args.concurrency}, {prompts} prompts, "
        f"median of {args.rounds} rounds"
    )
    medians = {
        name: {key: statistics.median(r[key] for r in found) for key in found[0]}
        for name, found in rows.items()
    }
    for name, figures in medians.items():
        shown = ", ".join(f"{key} {value:.2f}" for key, value in figures.items())
        print(f"  {name}: {shown}")
    for key in ("output_tok_s", "median_tpot_ms", "median_ttft_ms"):
        ratio = medians["infx"][key] / medians["vllm"][key]
        print(f"  infx/vllm {key}: {ratio:.3f} ({(ratio - 1) * 100:+.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
