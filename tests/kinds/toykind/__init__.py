"""A fourth kind of benchmark, from outside pytest-infx: ``toy`` sends a number of streamed
completions at each concurrency of its block and keeps their output rate.

It is what a team adding a kind (an evaluation, say) writes: one package, offered to
pytest-infx through the ``pytest_infx_kinds`` hook, using pytest-infx's public values only
(the recipe's point, the run's server and measuring context, ``KindRecord``): it needs neither
pytest nor the session. Nothing in ``pytest_infx`` names it.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_infx.recipes.blocks import PointSpec
from pytest_infx.results.kind import RowFacts
from pytest_infx.results.records import (
    KindRecord,
    PointCoordinates,
    Record,
    ServerInfo,
)

if TYPE_CHECKING:
    from pytest_infx.launch import ServerHandle
    from pytest_infx.recipes.points import Point
    from pytest_infx.recipes.schema import Recipe
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.measure import MeasureContext

NAME = "toy"
FIELDS = {"concurrency", "requests", "max-tokens"}


def _block(block: Mapping[str, Any]) -> tuple[list[int], int, int]:
    unknown = sorted(set(block) - FIELDS)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}; a toy block has {sorted(FIELDS)}")
    concurrency = block.get("concurrency")
    if not isinstance(concurrency, list) or not all(
        isinstance(c, int) and c >= 1 for c in concurrency
    ):
        raise ValueError("'concurrency' must be a list of positive integers")
    return concurrency, int(block.get("requests", 4)), int(block.get("max-tokens", 8))


def _record(record: Record) -> KindRecord:
    if not isinstance(record, KindRecord) or record.kind != NAME:
        raise TypeError(f"{record.id} is a {record.kind} record, not a toy point's")
    return record


def _stream(base_url: str, model: str, max_tokens: int) -> int:
    """One streamed completion; its output tokens, one per frame with text."""
    body = {
        "model": model,
        "prompt": "count with me",
        "max_tokens": max_tokens,
        "stream": True,
        "ignore_eos": True,
    }
    request = urllib.request.Request(
        f"{base_url}/v1/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    tokens = 0
    with urllib.request.urlopen(request, timeout=60) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[len("data: ") :]).get("choices") or []
            tokens += sum(1 for choice in choices if choice.get("text"))
    return tokens


class ToyKind:
    """Every face of the toy kind, as the ``pytest_infx_kinds`` hook offers it."""

    name = NAME
    title = "infx toy"

    def points(self, block: Mapping[str, Any], recipe: Recipe) -> Sequence[PointSpec]:
        concurrency, _, _ = _block(block)
        return [PointSpec(f"c{c}", recipe.tp, c) for c in sorted(set(concurrency))]

    def material(self, block: Mapping[str, Any]) -> Mapping[str, Any]:
        return {name: value for name, value in block.items() if name != "concurrency"}

    def result_path(self, layout: Layout, item_id: str) -> Path:
        return layout.root / NAME / f"{item_id}.json"

    def row(self, record: Record) -> RowFacts:
        toy = _record(record)
        return RowFacts(
            benchmark=NAME, dataset="count-with-me", conc=toy.point.concurrency, cell=""
        )

    def metrics(self, record: Record) -> dict[str, float]:
        return dict(_record(record).figures)

    def figure(self, record: Record) -> str:
        return f"{_record(record).figures['output_tput_per_gpu']:.1f} output tok/s/GPU"

    def client_settings(self, point: Point) -> dict[str, Any]:
        _, requests, max_tokens = _block(point.recipe.kinds[NAME])
        return {"stream": True, "requests": requests, "max_tokens": max_tokens}

    def table(self, records: Sequence[Record]) -> list[str]:
        return [f"{r.id}  {self.figure(r)}" for r in sorted(records, key=lambda r: r.id)]

    def measure(self, point: Point, server: ServerHandle, context: MeasureContext) -> Record:
        _, requests, max_tokens = _block(point.recipe.kinds[NAME])
        model = point.recipe.model.served_name

        def one(_: int) -> int:
            tokens = _stream(server.base_url, model, max_tokens)
            context.request_done(tokens, ok=tokens == max_tokens)
            return tokens

        with context.measuring(server, point), context.counting(point, requests):
            start = time.monotonic()
            with ThreadPoolExecutor(point.concurrency) as pool:
                counts = list(pool.map(one, range(requests)))
            duration = time.monotonic() - start
        short = sum(1 for n in counts if n < max_tokens)
        return KindRecord(
            kind=NAME,
            id=point.id,
            recipe=point.recipe_key,
            fingerprint=point.fingerprint,
            server=ServerInfo.of(server),
            verdict="fail" if short else "pass",
            reasons=[f"{short} of {requests} requests ended short"] if short else [],
            model=model,
            gpu=point.runner,
            point=PointCoordinates(tp=point.tp, concurrency=point.concurrency),
            figures={"output_tput_per_gpu": sum(counts) / duration / point.tp},
            details={"requests": requests, "output_tokens": sum(counts)},
        )

    def properties(self, record: Record) -> list[tuple[str, object]]:
        return [("output_tput_per_gpu", _record(record).figures["output_tput_per_gpu"])]

    def data_sha256(self, point: Point) -> str | None:
        return None


TOY = ToyKind()
