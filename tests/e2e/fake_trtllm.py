#!/usr/bin/env python3
"""A stand-in for TensorRT-LLM's ``trtllm-serve``, which needs NVIDIA GPUs, started by the plugin
as the real one would be (without ``mpirun``, which only starts it as one MPI rank).

What it takes and sends follows TensorRT-LLM as far as pytest-infx reads it:

- argv: the model first, then click options in snake case (``--host``, ``--port``,
  ``--tp_size``, ``--ep_size``, ``--backend``, ``--max_seq_len``, ``--max_batch_size``, ...);
  ``--extra_llm_api_options`` and ``--config`` are one option naming a YAML file of LLM-API
  options, read at start: a missing file or one that is not a mapping stops the server, as the
  real one stops on its options. ``speculative_config`` gives the draft length
  (``num_nextn_predict_layers`` for MTP, ``max_draft_len`` for the EAGLE family).
- ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS``: the draft tokens every step accepts (AL - 1);
  0 or unset is no forcing.
- ``/health``, ``/v1/models`` and streamed chat and text completions in OpenAI's shapes, as the
  vLLM stand-in sends them (``fake_vllm.py``); a request may name any model.
- ``/metrics``: a JSON list of per-iteration stats (``iter``, numbered from the server's start,
  and ``specDecodingStats`` with ``numDraftTokens``, ``numAcceptedTokens``,
  ``numRequestsWithDraftTokens``, ``acceptanceLength``), each read draining what it returns;
  stats are queued only when the LLM-API options set ``enable_iter_perf_stats``, and the queue
  keeps the newest ``iter_stats_max_iterations`` (1000 unless set), dropping older ones.

The start record (``--record``) carries the options and the forced value it read.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

try:
    from .fake_vllm import (
        Engine,
        Options,
        UsageError,
        flag_pairs,
        parse_argv,
        record_start,
        say,
        serve,
    )
except ImportError:
    # run as a script, beside fake_vllm.py rather than inside the tests package
    from fake_vllm import (  # type: ignore[no-redef, import-not-found]
        Engine,
        Options,
        UsageError,
        flag_pairs,
        parse_argv,
        record_start,
        say,
        serve,
    )

FORCE_ENV = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"
OWN_FLAGS = ("record", "accept", "step-delay", "start-delay", "fault")


def click_flags(argv: Sequence[str]) -> tuple[str, dict[str, str | None]]:
    """The model argument and the options, ``--name value`` or ``--name=value`` or bare; the
    stand-in's own options (``--record FILE``) may come before the model, as its command's."""
    flags: dict[str, str | None] = {}
    start = 0
    while start + 1 < len(argv) and argv[start].lstrip("-") in OWN_FLAGS:
        flags[argv[start].lstrip("-")] = argv[start + 1]
        start += 2
    if start >= len(argv) or argv[start].startswith("-"):
        raise UsageError("Missing argument 'MODEL'")
    model = argv[start]
    flags.update(flag_pairs(argv[start + 1 :]))
    return model, flags


def llm_api_options(flags: Mapping[str, str | None]) -> dict[str, Any]:
    path = flags.get("extra_llm_api_options") or flags.get("config")
    if path is None:
        return {}
    try:
        loaded = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise UsageError(f"cannot read the LLM-API options {path}: {exc}") from None
    if not isinstance(loaded, dict):
        raise UsageError(f"{path}: the LLM-API options must be a mapping")
    return loaded


def draft_length(options: Mapping[str, Any]) -> int | None:
    spec = options.get("speculative_config")
    if not isinstance(spec, dict):
        return None
    k = spec.get("num_nextn_predict_layers", spec.get("max_draft_len"))
    if not isinstance(k, int) or k < 1:
        raise UsageError(f"speculative_config gives no draft length: {spec}")
    return k


def parse_trtllm(argv: Sequence[str], environ: Mapping[str, str]) -> tuple[Options, dict[str, Any]]:
    model, flags = click_flags(argv)
    if flags.get("port") is None:
        raise UsageError("--port is required")
    own = [f"--{name}={value}" for name, value in flags.items() if name in OWN_FLAGS]
    options = parse_argv(["--port", str(flags["port"]), *own])
    api = llm_api_options(flags)
    k = draft_length(api)
    forced = float(environ.get(FORCE_ENV, "0") or "0")
    pattern = options.pattern
    if k is not None and forced:
        pattern = (min(int(forced), k),)
    options = replace(
        options,
        host=flags.get("host") or "localhost",
        model=model,
        served_name=model,
        any_model=True,
        k=k,
        spec_method=(api.get("speculative_config") or {}).get("decoding_type"),
        pattern=pattern,
    )
    return options, {"llm_api_options": api, "forced": environ.get(FORCE_ENV)}


class TrtllmEngine(Engine):
    """Per-iteration stats, queued as steps run and drained by each ``/metrics`` read."""

    def __init__(self, options: Options, api: Mapping[str, Any]) -> None:
        super().__init__(options)
        self.queued = api.get("enable_iter_perf_stats") is True
        self.limit = int(api.get("iter_stats_max_iterations") or 1000)
        self.iterations: list[dict[str, Any]] = []
        self.count = 0

    def step(self, accepted: int) -> None:
        super().step(accepted)
        k = self.options.k or 0
        with self.lock:
            self.count += 1
            if not self.queued:
                return
            self.iterations.append(
                {
                    "iter": self.count,
                    "specDecodingStats": {
                        "numDraftTokens": k,
                        "numAcceptedTokens": accepted,
                        "numRequestsWithDraftTokens": 1,
                        "acceptanceLength": 1.0 + accepted,
                    },
                }
            )
            del self.iterations[: -self.limit]

    def metrics(self) -> str:
        with self.lock:
            drained, self.iterations = self.iterations, []
        return json.dumps(drained)


def main(argv: Sequence[str]) -> int:
    try:
        options, read = parse_trtllm(argv, os.environ)
    except UsageError as exc:
        sys.stderr.write(f"trtllm-serve: error: {exc}\n")
        return 2
    record_start(options, argv, read)
    say(f"INFO trtllm-serve stand-in, model {options.model!r}, draft length {options.k}")

    return serve(TrtllmEngine(options, read["llm_api_options"]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
