"""A fourth kind of benchmark, from outside pytest-infx: ``toy`` sends a number of streamed
completions at each concurrency of its block and keeps their output rate.

It is what a team adding a kind (an evaluation, say) writes: one package, offered to
pytest-infx through the ``pytest_infx_kinds`` hook, using pytest-infx's public values only
(the recipe's point, the run's server, ``KindRecord``). Nothing in ``pytest_infx`` names it.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_infx.plugin.output.summary import RECORD_PROPERTY
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
    from pytest_infx.plugin.run.session import Run
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point
    from pytest_infx.recipes.schema import Recipe
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.reuse import Reuse

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


@dataclass
class ToyPoint:
    point: Point
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest

    def run(self) -> None:
        __tracebackhide__ = True
        point, run = self.point, self.run_ctx
        _, requests, max_tokens = _block(point.recipe.kinds[NAME])
        model = point.recipe.model.served_name
        start = time.monotonic()
        with run.measuring(self.server, point):
            with ThreadPoolExecutor(point.concurrency) as pool:
                counts = list(
                    pool.map(
                        lambda _: _stream(self.server.base_url, model, max_tokens),
                        range(requests),
                    )
                )
        duration = time.monotonic() - start
        short = sum(1 for n in counts if n < max_tokens)
        record = KindRecord(
            kind=NAME,
            id=point.id,
            recipe=point.recipe_key,
            fingerprint=point.fingerprint,
            server=ServerInfo.of(self.server),
            verdict="fail" if short else "pass",
            reasons=[f"{short} of {requests} requests ended short"] if short else [],
            model=point.recipe.model.served_name,
            gpu=point.runner,
            point=PointCoordinates(tp=point.tp, concurrency=point.concurrency),
            figures={"output_tput_per_gpu": sum(counts) / duration / point.tp},
            details={"requests": requests, "output_tokens": sum(counts)},
        )
        record = run.keep(record, point)
        attach(self.request.node, record)
        if short:
            pytest.fail(f"{point.id}: {record.reasons[0]}", pytrace=False)
        run.gate(self.request.node, record, point)


def attach(node: pytest.Item, record: Record) -> None:
    node.user_properties.append(
        ("output_tput_per_gpu", _record(record).figures["output_tput_per_gpu"])
    )
    node.user_properties.append((RECORD_PROPERTY, record.as_json()))


@dataclass
class ReusedToy:
    record: Record
    node: pytest.Item

    def run(self) -> None:
        attach(self.node, self.record)


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

    def fresh(
        self, point: Point, server: ServerHandle, run: Run, request: pytest.FixtureRequest
    ) -> ToyPoint:
        return ToyPoint(point, server, run, request)

    def reused(
        self, point: Point, reuse: Reuse, run: Run, request: pytest.FixtureRequest
    ) -> ReusedToy:
        return ReusedToy(reuse.record, request.node)

    def attach(self, node: pytest.Item, point: Point, record: Record) -> None:
        attach(node, record)

    def data_sha256(self, point: Point, datasets: Datasets) -> str | None:
        return None


TOY = ToyKind()
