#!/usr/bin/env python3
"""Client ceiling of the fixed-seq-len client: requests/s and frames/s it sustains against an
instant completions stand-in, beside vLLM's own benchmark client on the same stand-in.

The stand-in (client_overhead.py's, answering ``/v1/completions`` in vLLM's text-completion
frames) runs in its own process and writes each whole response at once, so the client is the
only bottleneck. Each client sends ``--requests`` requests of ``--frames`` frames at each
concurrency after a warm-up of 4 x concurrency requests.

    python benchmarks/fixed_seq_len_ceiling.py [--requests 4000] [--frames 16]
        [--concurrency 32 256] [--vllm-python PY --vllm-tokenizer DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client_overhead import VLLM_DRIVER, InstantServer, _frame, serve

from pytest_infx.fixedseq.client import FixedClientConfig, run_requests_sync
from pytest_infx.fixedseq.prompts import RandomRequest


def _chunk(text: str | None, **extra: Any) -> dict[str, Any]:
    choices = [] if text is None else [{"index": 0, "text": text, "logprobs": None}]
    return {"id": "cmpl-0", "object": "text_completion", "model": "m", "choices": choices, **extra}


class CompletionServer(InstantServer):
    route = b"POST /v1/completions"

    @classmethod
    def configure(cls, frames: int, ttft_s: float, itl_s: float) -> None:
        cls.frames, cls.ttft_s, cls.itl_s = frames, ttft_s, itl_s
        cls.head = (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        cls.token = _frame(_chunk(" tok"))
        cls.stamped = json.dumps(_chunk("T=%.9f;"), separators=(",", ":"))
        usage = {"prompt_tokens": 8, "completion_tokens": frames, "total_tokens": 8 + frames}
        done = b"data: [DONE]\n\n"
        cls.end = (
            _frame(_chunk(None, usage=usage))
            + f"{len(done):x}\r\n".encode()
            + done
            + b"\r\n0\r\n\r\n"
        )


def run_ours(url: str, requests: int, frames: int, concurrency: int) -> dict[str, float]:
    config = FixedClientConfig(url, "m", concurrency=concurrency, warmups=4 * concurrency)
    batch = [RandomRequest("write a function that adds two numbers", 8, frames, ())] * requests
    outcome = run_requests_sync(config, batch)
    failed = [o for o in outcome.outputs if not o.success]
    if failed:
        raise SystemExit(f"our client: {len(failed)} requests failed, first: {failed[0].error}")
    received = sum(o.frames for o in outcome.outputs)
    return {"req_s": requests / outcome.duration_s, "frames_s": received / outcome.duration_s}


def run_vllm(
    python: str, tokenizer: str, url: str, requests: int, frames: int, concurrency: int
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        argv = [
            python, "-c", VLLM_DRIVER,
            "--backend", "openai", "--base-url", url, "--endpoint", "/v1/completions",
            "--model", "m", "--tokenizer", tokenizer,
            "--dataset-name", "random", "--random-input-len", "8",
            "--random-output-len", str(frames), "--random-range-ratio", "0",
            "--num-prompts", str(requests), "--max-concurrency", str(concurrency),
            "--request-rate", "inf", "--ignore-eos", "--num-warmups", str(4 * concurrency),
            "--save-result", "--result-dir", out, "--result-filename", "vllm.json",
            "--disable-tqdm",
        ]  # fmt: skip
        env = {**os.environ, "VLLM_USE_RUST_BENCH": "0", "no_proxy": "*", "NO_PROXY": "*"}
        done = subprocess.run(
            argv, check=False, capture_output=True, text=True, env=env, timeout=1800
        )
        if done.returncode != 0:
            raise SystemExit(f"vLLM's client failed ({done.returncode}):\n{done.stderr[-3000:]}")
        data = json.loads((Path(out) / "vllm.json").read_text())
    rate = float(data["request_throughput"])
    return {"req_s": rate, "frames_s": rate * (frames + 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    ap.add_argument("--vllm-python", help="python of an environment with vLLM installed")
    ap.add_argument("--vllm-tokenizer", help="local tokenizer directory for vLLM's client")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        CompletionServer.configure(args.frames, 0.0, 0.0)
        serve(CompletionServer)
        return 0
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", f"--frames={args.frames}"],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    rows: list[tuple[str, int, dict[str, float]]] = []
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        time.sleep(0.2)
        for conc in args.concurrency:
            rows.append(("infx", conc, run_ours(url, args.requests, args.frames, conc)))
            if args.vllm_python:
                theirs = run_vllm(
                    args.vllm_python, args.vllm_tokenizer, url, args.requests, args.frames, conc
                )
                rows.append(("vllm", conc, theirs))
    finally:
        server.kill()
        server.wait()
    print(f"{args.requests} requests of {args.frames} frames, instant completions stand-in")
    for name, conc, figures in rows:
        print(
            f"  {name:<5} c={conc:<4} {figures['req_s']:>8.0f} req/s"
            f" {figures['frames_s']:>10.0f} frames/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
