#!/usr/bin/env python3
"""A stand-in for ATOM's OpenAI server (``python3 -m atom.entrypoints.openai_server``), which
runs only on AMD GPUs, started by the plugin as the real one would be.

What it takes and sends follows ATOM's source as far as pytest-infx reads it:

- argv: ``--model``, ``--server-port`` and ``-tp`` / ``--tensor-parallel-size``; speculation by
  ``--method`` and ``--num-speculative-tokens`` (and ``--draft-model``); forced acceptance by
  ``--spec-decode-acceptance-length AL`` in [1, k+1] or ``--spec-decode-acceptance-rate R``
  = (AL-1)/k, never both (ROCm/ATOM#1948); any other flag in kebab or snake case, as ATOM's
  parser takes both. There is no ``--host`` and no served-model name: a request may name any
  model. It binds loopback only, where ATOM binds every address.
- ``/metrics`` (``atom/entrypoints/openai/metrics.py``): the counters
  ``atom:mtp_draft_tokens_total``, ``atom:mtp_accepted_tokens_total`` (draft tokens only, the
  bonus token is not counted) and ``atom:mtp_decode_steps_total{accepted_tokens="j"}``, and the
  gauges ``atom:mtp_acceptance_rate`` and ``atom:mtp_average_tokens_per_forward`` (the AL).
- ``/health``, ``/v1/models`` and streamed chat and text completions in OpenAI's shapes, as the
  vLLM stand-in sends them (``fake_vllm.py``), without per-request speculative figures.

Acceptance is fake_vllm's pattern (``--accept``); under forced acceptance every step accepts
AL-1 drafts on average, spread evenly over a short cycle.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

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

FLAGS_WITH_VALUE = ("record", "accept", "step-delay", "start-delay", "fault")


def normalised(argv: Sequence[str]) -> list[tuple[str, str | None]]:
    """ATOM's spellings as ``(kebab-name, value)``: ``-tp N``, ``--a_b v``, ``--a-b=v``, bare."""
    doubled = ["-" + t if t.startswith("-") and not t.startswith("--") else t for t in argv]
    return [(name.replace("_", "-"), value) for name, value in flag_pairs(doubled)]


def forced_pattern(accepted: float) -> tuple[int, ...]:
    """Accepted drafts per step in a cycle whose mean is ``accepted``."""
    share = Fraction(accepted).limit_denominator(8)
    steps = share.denominator
    return tuple(int((i + 1) * share) - int(i * share) for i in range(steps))


def parse_atom(argv: Sequence[str]) -> Options:
    flags = dict(normalised(argv))
    for required in ("model", "server-port"):
        if not flags.get(required):
            raise UsageError(f"--{required} is required")
    tp = flags.get("tp") or flags.get("tensor-parallel-size") or "1"
    if not tp.isdigit():
        raise UsageError(f"-tp needs a whole number, got {tp!r}")
    length, rate = (
        flags.get("spec-decode-acceptance-length"),
        flags.get("spec-decode-acceptance-rate"),
    )
    if length is not None and rate is not None:
        raise UsageError(
            "--spec-decode-acceptance-length and --spec-decode-acceptance-rate are mutually"
            " exclusive"
        )
    own = [f"--{name}={value}" for name, value in flags.items() if name in FLAGS_WITH_VALUE]
    options = parse_argv(["--port", str(flags["server-port"]), *own])
    k: int | None = None
    if flags.get("method"):
        tokens = flags.get("num-speculative-tokens") or ""
        if not tokens.isdigit() or int(tokens) < 1:
            raise UsageError(f"--num-speculative-tokens needs a whole number >= 1, got {tokens!r}")
        k = int(tokens)
    pattern = options.pattern
    if k is not None and (length is not None or rate is not None):
        al = float(length) if length is not None else 1 + float(rate or 0) * k
        if not 1 <= al <= k + 1:
            raise UsageError(f"--spec-decode-acceptance-length {al} is outside [1, {k + 1}]")
        pattern = forced_pattern(al - 1)
    return replace(
        options,
        model=flags["model"] or "model",
        served_name=flags["model"] or "model",
        any_model=True,
        k=k,
        spec_method=flags.get("method"),
        pattern=pattern,
    )


class AtomEngine(Engine):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self.steps: dict[int, int] = {}

    def step(self, accepted: int) -> None:
        super().step(accepted)
        with self.lock:
            self.steps[accepted] = self.steps.get(accepted, 0) + 1

    def metrics(self) -> str:
        lines: list[str] = []
        with self.lock:
            if self.options.k is None:
                return "\n"
            for name, value in (
                ("atom:mtp_draft_tokens_total", self.draft_tokens),
                ("atom:mtp_accepted_tokens_total", self.accepted),
            ):
                lines += [f"# TYPE {name} counter", f"{name} {float(value)!r}"]
            lines.append("# TYPE atom:mtp_decode_steps_total counter")
            lines += [
                f'atom:mtp_decode_steps_total{{accepted_tokens="{j}"}} {float(n)!r}'
                for j, n in sorted(self.steps.items())
            ]
            steps = sum(self.steps.values())
            rate = self.accepted / self.draft_tokens if self.draft_tokens else 0.0
            per_forward = 1 + self.accepted / steps if steps else 0.0
            for gauge, reading in (
                ("atom:mtp_acceptance_rate", rate),
                ("atom:mtp_average_tokens_per_forward", per_forward),
            ):
                lines += [f"# TYPE {gauge} gauge", f"{gauge} {reading!r}"]
        return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    try:
        options = parse_atom(argv)
    except UsageError as exc:
        sys.stderr.write(f"atom openai_server: error: {exc}\n")
        return 2
    record_start(options, argv)
    say(f"INFO ATOM stand-in, model {options.model!r}, method {options.spec_method}")

    return serve(AtomEngine(options))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
