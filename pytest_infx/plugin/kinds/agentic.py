"""The pytest side of an AgentX point: replay traces through aiperf, keep the result, gate it.

The result file is written before the gate runs, so a point that fails its error-rate gate still
leaves its numbers for the dashboard and the reviewer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_infx.agentic.aggregate import RECORDS_NAME, build_aggregate, headline, load_records
from pytest_infx.agentic.gate import check_requests
from pytest_infx.agentic.record import result_record
from pytest_infx.agentic.results import AgenticResult, ExportError
from pytest_infx.agentic.runner import CONSOLE_LOG_NAME, AgenticRun, AgenticRunError, run_aiperf
from pytest_infx.agentic.shape import PointShape, shape_of
from pytest_infx.agentic.traces import default_traces_path, load_traces
from pytest_infx.envs.aiperf import ensure_aiperf
from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.launch import ServerHandle
from pytest_infx.plugin.summary import AGENTIC_PROPERTY
from pytest_infx.recipes.points import Point

if TYPE_CHECKING:
    from pytest_infx.plugin.run import Run

BUILTIN_TRACES = "builtin"


def agentic_path(run: Run, point: Point) -> Path:
    return run.layout.artifacts(point.id)


def traces_sha256(point: Point) -> str | None:
    """The digest of the shipped traces a point replays; a hub corpus is pinned by its name,
    which the point's fingerprint covers."""
    agentic = point.recipe.agentic
    assert agentic is not None
    if agentic.traces != BUILTIN_TRACES:
        return None
    return load_traces(default_traces_path()).sha256


@dataclass
class AgenticPoint:
    point: Point
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest

    def aiperf_run(self) -> AgenticRun:
        point = self.point
        agentic = point.recipe.agentic
        assert agentic is not None
        builtin = agentic.traces == BUILTIN_TRACES
        ratio = agentic.trajectory_start_ratio
        return AgenticRun(
            aiperf=ensure_aiperf(progress=self.run_ctx.say).aiperf,
            url=self.server.base_url,
            model=point.recipe.model.served_name,
            tokenizer=self.run_ctx.model_dir(point),
            concurrency=point.concurrency,
            duration_s=agentic.duration,
            artifact_dir=agentic_path(self.run_ctx, point),
            public_dataset=None if builtin else agentic.traces,
            traces=default_traces_path() if builtin else None,
            seed=agentic.seed,
            gpus=self.shape().num_gpus,
            trajectory_start_ratio=(ratio[0], ratio[1]) if ratio else None,
            trace_idle_gap_cap_s=agentic.trace_idle_gap_cap,
            warmup_grace_period_s=agentic.warmup_grace_period,
            failed_request_threshold=agentic.failed_request_threshold,
            max_context_length=point.recipe.model.max_model_len,
            request_count=agentic.request_count,
            num_dataset_entries=None if builtin else agentic.num_dataset_entries,
        )

    def shape(self) -> PointShape:
        """InferenceX's view of the point; a CPU point counts as TP GPU-equivalents."""
        return shape_of(self.point)

    def inferencex(self, run: AgenticRun, result: AgenticResult) -> tuple[str, dict[str, Any]]:
        """Write InferenceX's aggregate of this point under its InferenceX name; returns the
        path relative to the results folder and our throughput block."""
        shape = self.shape()
        recipe = self.point.recipe
        found = load_records(run.artifact_dir / RECORDS_NAME)
        export = json.loads(result.export_path.read_text(encoding="utf-8"))
        agg = build_aggregate(
            found, export, shape, model=recipe.model.hub_id, image=recipe.engine.image
        )
        layout = self.run_ctx.layout
        path = layout.inferencex(shape.result_filename)
        atomic_write_json(path, agg)
        return layout.relative(path), headline(agg, num_gpus=shape.num_gpus) or {}

    def identity(self) -> dict[str, Any]:
        point = self.point
        engine = point.recipe.engine
        return {
            "id": point.id,
            "recipe": point.recipe_key,
            "model": point.recipe.model.hub_id,
            "engine": f"{engine.name} {engine.version or ''}".strip(),
            "image": engine.image,
            "tp": point.tp,
            "concurrency": point.concurrency,
            "gpu": point.runner,
        }

    def run(self) -> None:
        __tracebackhide__ = True
        agentic = self.point.recipe.agentic
        assert agentic is not None
        say = self.run_ctx.say
        run = self.aiperf_run()
        console = str(run.artifact_dir / CONSOLE_LOG_NAME)
        progress = self.run_ctx.progress.doing(
            "point", self.point.id, duration_s=agentic.duration, log=console
        )
        try:
            with progress:
                result = run_aiperf(run, on_line=lambda line: say(f"aiperf: {line}"))
        except AgenticRunError as exc:
            pytest.fail(f"aiperf did not finish for {self.point.id}:\n{exc}", pytrace=False)
        verdict = check_requests(result, threshold=agentic.failed_request_threshold)
        identity = self.identity()
        infx_file: str | None = None
        throughput: dict[str, Any] | None = None
        records_error: str | None = None
        try:
            infx_file, throughput = self.inferencex(run, result)
        except ExportError as exc:
            records_error = str(exc)
        record = result_record(identity, result, verdict=verdict, throughput=throughput or None)
        record["inferencex_result"] = infx_file
        record["id"] = self.point.id
        record["fingerprint"] = self.point.fingerprint
        record["traces_sha256"] = traces_sha256(self.point)
        record["server"] = {
            "argv": list(self.server.argv),
            "port": self.server.port,
            "log": str(self.server.log_path),
        }
        self.run_ctx.keep(record)
        node = self.request.node
        node.user_properties.append(("completed", result.completed))
        node.user_properties.append(("failed", result.failed))
        per_gpu = record["throughput"]
        node.user_properties.append(
            ("output_tokens_per_s_per_gpu", per_gpu["output_tokens_per_s_per_gpu"])
        )
        if "total_tokens_per_s_per_gpu" in per_gpu:
            node.user_properties.append(
                ("total_tokens_per_s_per_gpu", per_gpu["total_tokens_per_s_per_gpu"])
            )
        node.user_properties.append((AGENTIC_PROPERTY, record))
        if not verdict.passed:
            pytest.fail(f"{self.point.id}: {verdict.message}", pytrace=False)
        if records_error is not None:
            pytest.fail(f"{self.point.id}: {records_error}", pytrace=False)
        if result.exit_code != 0:
            pytest.fail(
                f"{self.point.id}: aiperf exited with {result.exit_code} after writing its "
                f"results; see {run.artifact_dir / CONSOLE_LOG_NAME}",
                pytrace=False,
            )
