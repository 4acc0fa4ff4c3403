"""What makes a fixed-seq-len point's measurement unusable, before any figure is compared: a
request that failed, fewer completed than sent, an output of no tokens, or an output shorter
than asked although ``ignore_eos`` forbids the engine to stop early (a server that ignores
the flag measures shorter requests, and its throughput would read high). An output whose text
is empty is not one: with ``ignore_eos`` a small model may keep generating special tokens,
which the server leaves out of the text but counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_infx.fixedseq.client import Output
from pytest_infx.fixedseq.prompts import RandomRequest

SHOWN_ERRORS = 3


@dataclass(frozen=True)
class Checked:
    sent: int
    completed: int
    failed: int
    empty: int
    short: int
    errors: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.problems


def check(requests: Sequence[RandomRequest], outputs: Sequence[Output]) -> Checked:
    failed = [o for o in outputs if not o.success]
    done = [(r, o) for r, o in zip(requests, outputs, strict=False) if o.success]
    empty = sum(1 for _, o in done if not o.output_tokens)
    short = [(r, o) for r, o in done if 0 < (o.output_tokens or 0) < r.output_len]
    errors = tuple(dict.fromkeys(o.error for o in failed))[:SHOWN_ERRORS]
    problems: list[str] = []
    if failed:
        problems.append(f"{len(failed)} of {len(requests)} requests failed: {'; '.join(errors)}")
    if len(outputs) < len(requests):
        problems.append(f"only {len(outputs)} of {len(requests)} requests were sent")
    if empty:
        problems.append(f"{empty} requests returned no output tokens")
    if short:
        r, o = short[0]
        problems.append(
            f"{len(short)} requests ended before their output length although ignore_eos was "
            f"sent (e.g. {o.output_tokens} of {r.output_len} tokens); check that the engine "
            "honours ignore_eos and that max-model-len leaves room for ISL + OSL"
        )
    return Checked(
        sent=len(requests),
        completed=len(done),
        failed=len(failed),
        empty=empty,
        short=len(short),
        errors=errors,
        problems=tuple(problems),
    )
