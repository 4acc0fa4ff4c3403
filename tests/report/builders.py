"""Result folders for report tests, written by the plugin's own result-writing code.

A SPEED-Bench cell goes through the real checks, AL summary, record builder, golden comparison
and writers; an AgentX point through aiperf's export parser, the gate and the record builder.
Only the server and the client pass are replaced by values, so the files have every field a
sweep writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from e2e.helpers import golden_text, recipe, write_recipe

from pytest_infx.agentic.gate import check_requests
from pytest_infx.agentic.record import PointIdentity, result_record
from pytest_infx.agentic.results import parse_export
from pytest_infx.golden.compare import CompareOptions, compare_curves
from pytest_infx.golden.curve import Curve
from pytest_infx.golden.io import load_curve
from pytest_infx.kinds import KINDS
from pytest_infx.launch.shared import ServerHandle
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand
from pytest_infx.results.files import write_result
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import CellRecord, EngineInfo, PointRecord, ServerInfo
from pytest_infx.speedbench import al as al_mod
from pytest_infx.speedbench import checks, curves
from pytest_infx.speedbench.cell import CellOutcome, CellSettings
from pytest_infx.speedbench.client import (
    PassResult,
    RequestError,
    RequestRecord,
    RequestSampling,
    RequestSpecMetrics,
)
from pytest_infx.speedbench.dataset import Dataset, default_dataset_path, load_dataset
from pytest_infx.speedbench.metrics import SpecCounters, delta
from pytest_infx.speedbench.record import cell_record, golden_summary

AGENTIC_DATA = Path(__file__).resolve().parents[1] / "agentic" / "data"
STEPS = 100


@dataclass
class Folder:
    """A results folder plus the golden folder its cells were compared with."""

    root: Path

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def golden(self) -> Path:
        return self.root / "golden"

    def commit_golden(self, name: str, cells: Mapping[str, Mapping[int, float]]) -> Curve:
        self.golden.mkdir(parents=True, exist_ok=True)
        path = self.golden / f"{name}.yaml"
        path.write_text(golden_text(cells))
        return load_curve(path)

    def points(self, key: str, curve: str, ks: tuple[int, ...]) -> dict[str, Point]:
        data = recipe(key, record=self.root / "starts.jsonl", draft_lengths=ks, golden=curve)
        path = write_recipe(self.root / "recipes", data)
        return {p.id: p for p in expand(load_file(path))}

    def server(self, label: str) -> ServerHandle:
        log = self.results / "logs" / f"{label}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"INFO starting {label}\nINFO Application startup complete.\n")
        return ServerHandle(
            key=label,
            label=label,
            base_url="http://127.0.0.1:8000",
            port=8000,
            pid=1,
            pgid=1,
            log_path=log,
            gpu_ids=(),
            argv=("vllm", "serve", label),
            generation=1,
        )


def _dataset() -> Dataset:
    found = load_dataset(default_dataset_path(), category="coding")
    return Dataset(found.name, found.path, found.category, found.sha256, found.rows[:4])


def _outcome(point: Point, al: float, *, failed_request: bool) -> CellOutcome:
    """A client pass whose counters and per-request figures both give ``al`` (two requests a
    little above, two a little below, so the cell has a standard error)."""
    assert point.draft_length is not None and point.thinking is not None
    thinking = point.thinking == "thinking_on"
    accepted = round((al - 1.0) * STEPS)
    spread = (2, -2, 1, -1)
    records = []
    for index, row in enumerate(_dataset().rows):
        error = RequestError("http", "HTTP 500", 500) if failed_request and index == 0 else None
        records.append(
            RequestRecord(
                question_id=row.question_id,
                content="" if thinking or error else "def f(): pass",
                reasoning="def f(): pass" if thinking and not error else "",
                completion_tokens=None if error else 64,
                prompt_tokens=20,
                ttft_s=0.05,
                latency_s=0.5,
                finish_reason=None if error else "length",
                spec=None
                if error
                else RequestSpecMetrics(
                    source="vllm",
                    num_steps=STEPS,
                    num_accepted=accepted + spread[index],
                    num_drafted=STEPS * point.draft_length,
                    mean_acceptance_length=1 + (accepted + spread[index]) / STEPS,
                ),
                error=error,
                sent_at=0.0,
            )
        )
    used = [r.spec for r in records if r.spec is not None]
    before = SpecCounters(engine="vllm", drafts=0.0, draft_tokens=0.0, accepted=0.0)
    after = SpecCounters(
        engine="vllm",
        drafts=float(sum(s.num_steps for s in used)),
        draft_tokens=float(sum(s.num_drafted or 0 for s in used)),
        accepted=float(sum(s.num_accepted for s in used)),
        accepted_per_pos=tuple(float(sum(s.num_accepted for s in used)) for _ in range(1)),
    )
    counters = delta(before, after)
    rendered = "<|im_start|>assistant\n" + ("<think>\n" if thinking else "")
    reasons = checks.check_cell(
        records=records,
        expected=len(records),
        counters=counters,
        k=point.draft_length,
        thinking=thinking,
        rendered=rendered,
    )
    settings = CellSettings(
        base_url="http://127.0.0.1:8000",
        model="m",
        engine="vllm",
        draft_length=point.draft_length,
        thinking=thinking,
        chat_template_kwargs={"enable_thinking": thinking},
        max_tokens=64,
        concurrency=4,
        sampling=RequestSampling(),
        request_timeout_s=60,
    )
    return CellOutcome(
        settings,
        _dataset(),
        rendered,
        None,
        before,
        after,
        counters,
        PassResult(tuple(records), 0.0, 1.0),
        al_mod.summarize(counters, [r.spec for r in records if r.spec is not None]),
        tuple(reasons),
    )


def write_al_cell(
    folder: Folder,
    point: Point,
    al: float,
    golden: Curve,
    *,
    failed_request: bool = False,
) -> CellRecord:
    """What SpeedbenchCell.run writes: the cell record (compared when it has an AL) and the
    recipe's measured matrix."""
    outcome = _outcome(point, al, failed_request=failed_request)
    server = folder.server(f"{point.recipe_key}-k{point.draft_length}")
    engine = EngineInfo(name="vllm", version="0.33.0+fake")
    summary = None
    if outcome.al is not None:
        assert point.thinking is not None and point.draft_length is not None
        measured = Curve(
            name=golden.name,
            model_key=golden.model_key,
            modes={point.thinking: {point.draft_length: outcome.al}},
        )
        se = outcome.summary.standard_error or 0.0
        comparison = compare_curves(
            golden,
            measured,
            CompareOptions(stderr={(point.thinking, point.draft_length): se}, partial=True),
        )
        summary = golden_summary(golden.name, comparison, passed=comparison.ok)
    record = cell_record(point, server, outcome, engine, summary)
    write_result(Layout(folder.results), record, KINDS)
    header = curves.provenance(point, record.dataset, engine)
    curves.write_matrix(Layout(folder.results), point, header)
    return record


def write_agentic_point(
    folder: Folder, key: str, tp: int, concurrency: int, *, errors: bool = False
) -> PointRecord:
    """What AgenticPoint.run writes, from aiperf's export with latencies scaled by concurrency
    (higher concurrency: more throughput per GPU, less interactivity per user)."""
    source = "profile_export_errors11.json" if errors else "profile_export_ok.json"
    data = json.loads((AGENTIC_DATA / source).read_text())
    scale = concurrency**0.5
    tags = (("inter_token_latency", scale), ("output_token_throughput", concurrency / scale))
    for tag, factor in tags:
        for stat, value in list(data[tag].items()):
            if isinstance(value, float):
                data[tag][stat] = value * factor
    export = folder.root / "exports" / f"{key}-tp{tp}-c{concurrency}.json"
    export.parent.mkdir(parents=True, exist_ok=True)
    export.write_text(json.dumps(data))
    result = parse_export(export, gpus=tp)
    server = ServerInfo.of(folder.server(f"{key}-tp{tp}"))
    point = PointIdentity(
        id=f"{key}[tp{tp}-c{concurrency}]",
        recipe=key,
        model="m",
        engine="vllm",
        image=None,
        tp=tp,
        concurrency=concurrency,
        gpu="cpu",
        fingerprint="0" * 16,
        traces_sha256=None,
        server=server,
    )
    record = result_record(point, result, verdict=check_requests(result))
    write_result(Layout(folder.results), record, KINDS)
    return record
