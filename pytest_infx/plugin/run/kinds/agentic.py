"""The pytest side of an AgentX point: replay traces through aiperf, keep the result, gate it,
and stand in for it with its stored result when ``--infx-resume`` reuses it.

The result file is written before the gate runs, so a point that fails its error-rate gate still
leaves its numbers for the dashboard and the reviewer.

Collection takes each item's function from this module's kind before any recipe is validated,
so what a point needs to run (aiperf, the traces, InferenceX's aggregate) is imported inside
the functions that run it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_infx.plugin.output.summary import AGENTIC_PROPERTY
from pytest_infx.plugin.run.kinds.base import StandsInWithRecord

if TYPE_CHECKING:
    from pytest_infx.agentic.record import PointIdentity
    from pytest_infx.agentic.results import AgenticResult
    from pytest_infx.agentic.runner import AgenticRun
    from pytest_infx.launch import ServerHandle
    from pytest_infx.plugin.collect.items import Runnable
    from pytest_infx.plugin.run.session import Run
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point
    from pytest_infx.recipes.schema import Agentic
    from pytest_infx.results.identity import ConfigIdentity
    from pytest_infx.results.records import InferencexThroughput, PointRecord, Record

BUILTIN_TRACES = "builtin"


def agentic_path(run: Run, point: Point) -> Path:
    return run.layout.artifacts(point.id)


def traces_sha256(point: Point) -> str | None:
    """The digest of the shipped traces a point replays; a hub corpus is pinned by its name,
    which the point's fingerprint covers; a SPEED-Bench cell replays none."""
    from pytest_infx.agentic.traces import default_traces_path, load_traces

    agentic = point.agentic
    if agentic is None or agentic.traces != BUILTIN_TRACES:
        return None
    return load_traces(default_traces_path()).sha256


@dataclass
class MeasuredAgenticPoint:
    point: Point
    agentic: Agentic
    server: ServerHandle
    run_ctx: Run
    request: pytest.FixtureRequest

    def aiperf_run(self) -> AgenticRun:
        from pytest_infx.agentic.runner import AgenticRun
        from pytest_infx.agentic.traces import default_traces_path
        from pytest_infx.envs.aiperf import ensure_aiperf

        point = self.point
        agentic = self.agentic
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
            gpus=self.shape().gpus,
            trajectory_start_ratio=(ratio[0], ratio[1]) if ratio else None,
            trace_idle_gap_cap_s=agentic.trace_idle_gap_cap,
            warmup_grace_period_s=agentic.warmup_grace_period,
            failed_request_threshold=agentic.failed_request_threshold,
            max_context_length=point.recipe.model.max_model_len,
            request_count=agentic.request_count,
            num_dataset_entries=None if builtin else agentic.num_dataset_entries,
            apply_chat_template=agentic.chat_template,
        )

    def shape(self) -> ConfigIdentity:
        """InferenceX's view of the point; a CPU point counts as TP GPU-equivalents."""
        return self.run_ctx.identity(self.point)

    def aggregate(
        self, run: AgenticRun, result: AgenticResult
    ) -> tuple[dict[str, object], InferencexThroughput | None]:
        """InferenceX's aggregate of one aiperf pass and our throughput block computed from it;
        ExportError when aiperf's files cannot be read."""
        from pytest_infx.agentic.aggregate import (
            RECORDS_NAME,
            build_aggregate,
            headline,
            load_records,
        )
        from pytest_infx.agentic.record import kept

        shape = self.shape()
        found = load_records(run.artifact_dir / RECORDS_NAME)
        export = json.loads(result.export_path.read_text(encoding="utf-8"))
        agg = build_aggregate(found, export, shape)
        block = headline(agg, num_gpus=shape.gpus, requests_per_s=kept(result.request_rate))
        return agg, block

    def write_inferencex(self, agg: dict[str, object]) -> str:
        """Write InferenceX's aggregate under its InferenceX name; returns the path relative to
        the results folder."""
        from pytest_infx.files.atomic import atomic_write_json

        layout = self.run_ctx.layout
        path = layout.inferencex(self.shape().file_name())
        atomic_write_json(path, agg)
        return layout.relative(path)

    def passes(self, repeats: int) -> list[AgenticRun]:
        """One aiperf run per pass; a point measured more than once keeps each pass's files
        in a folder of its own under the point's."""
        base = self.aiperf_run()
        if repeats == 1:
            return [base]
        folder = base.artifact_dir
        return [replace(base, artifact_dir=folder / f"pass-{k}") for k in range(1, repeats + 1)]

    def measure(self, runs: list[AgenticRun]) -> list[AgenticResult]:
        __tracebackhide__ = True
        from pytest_infx.agentic.runner import CONSOLE_LOG_NAME, AgenticRunError, run_aiperf

        results: list[AgenticResult] = []
        with self.run_ctx.measuring(self.server, self.point):
            for run in runs:
                console = str(run.artifact_dir / CONSOLE_LOG_NAME)
                # aiperf's console (hundreds of lines, warnings on passing points) stays in its file
                self.run_ctx.say(f"aiperf: {self.point.id}: its output goes to {console}")
                progress = self.run_ctx.progress.doing(
                    "point", self.point.id, duration_s=self.agentic.duration, log=console
                )
                try:
                    with progress:
                        results.append(run_aiperf(run))
                except AgenticRunError as exc:
                    pytest.fail(f"aiperf did not finish for {self.point.id}:\n{exc}", pytrace=False)
        return results

    def identity(self) -> PointIdentity:
        from pytest_infx.agentic.record import PointIdentity
        from pytest_infx.results.records import ServerInfo

        point = self.point
        engine = point.recipe.engine
        return PointIdentity(
            id=point.id,
            recipe=point.recipe_key,
            model=point.recipe.model.hub_id,
            engine=f"{engine.name} {engine.version or ''}".strip(),
            image=engine.image,
            tp=point.tp,
            concurrency=point.concurrency,
            gpu=point.runner,
            fingerprint=point.fingerprint,
            traces_sha256=traces_sha256(point),
            server=ServerInfo.of(self.server),
            variant=point.variant,
        )

    def run(self) -> None:
        __tracebackhide__ = True
        from pytest_infx.agentic.gate import check_requests
        from pytest_infx.agentic.kind import KIND
        from pytest_infx.agentic.record import result_record, unmeasured, with_passes
        from pytest_infx.agentic.results import ExportError
        from pytest_infx.agentic.runner import CONSOLE_LOG_NAME
        from pytest_infx.results.passes import median_index

        agentic = self.agentic
        repeats = agentic.repeats or self.run_ctx.settings.history.repeats
        runs = self.passes(repeats)
        results = self.measure(runs)
        identity = self.identity()
        measured: list[tuple[dict[str, object] | None, str | None]] = []
        verdicts = [check_requests(r, threshold=agentic.failed_request_threshold) for r in results]
        records: list[PointRecord] = []
        for run, result, verdict in zip(runs, results, verdicts, strict=True):
            try:
                found, throughput = self.aggregate(run, result)
                measured.append((found, None))
            except ExportError as exc:
                throughput = None
                measured.append((None, str(exc)))
            records.append(result_record(identity, result, verdict=verdict, throughput=throughput))
        passes = [KIND.metrics(each) for each in records]
        chosen = median_index(passes, "output_tput_per_gpu")
        failing = (
            i
            for i, (record, result) in enumerate(zip(records, results, strict=True))
            if not record.passed or measured[i][1] is not None or result.exit_code != 0
        )
        chosen = next(failing, chosen)
        run, result, record = runs[chosen], results[chosen], records[chosen]
        console = str(run.artifact_dir / CONSOLE_LOG_NAME)
        verdict = verdicts[chosen]
        agg, records_error = measured[chosen]
        if agg is not None:
            record = record.model_copy(update={"inferencex_result": self.write_inferencex(agg)})
        if repeats > 1:
            record = with_passes(record, passes)
        broken = unmeasured(result)
        problems = ([] if records_error is None else [records_error]) + list(broken)
        if result.exit_code != 0:
            problems.append(
                f"aiperf exited with {result.exit_code} after writing its results; see "
                f"{run.artifact_dir / CONSOLE_LOG_NAME}"
            )
        record = self.run_ctx.keep(record, self.point, problems=problems)
        attach(self.request.node, record)
        if not verdict.passed:
            pytest.fail(f"{self.point.id}: {verdict.message}", pytrace=False)
        if broken:
            pytest.fail(f"{self.point.id}: " + "; ".join(broken), pytrace=False)
        if records_error is not None:
            pytest.fail(f"{self.point.id}: {records_error}", pytrace=False)
        if result.exit_code != 0:
            pytest.fail(
                f"{self.point.id}: aiperf exited with {result.exit_code} after writing its "
                f"results; its log {console} ends:\n" + "\n".join(result.console_tail),
                pytrace=False,
            )
        self.run_ctx.gate(self.request.node, record, self.point)


def attach(node: pytest.Item, record: Record) -> None:
    """The junit properties and the point the end-of-run table is built from."""
    from pytest_infx.results.records import InferencexThroughput, PointRecord

    assert isinstance(record, PointRecord)
    node.user_properties.append(("completed", record.requests.completed))
    node.user_properties.append(("failed", record.requests.failed))
    throughput = record.throughput
    node.user_properties.append(
        ("output_tokens_per_s_per_gpu", throughput.output_tokens_per_s_per_gpu)
    )
    if isinstance(throughput, InferencexThroughput):
        node.user_properties.append(
            ("total_tokens_per_s_per_gpu", throughput.total_tokens_per_s_per_gpu)
        )
    node.user_properties.append((AGENTIC_PROPERTY, record.as_json()))


def agentic_of(point: Point) -> Agentic:
    """The AgentX settings of a point the agentic fixture was given."""
    agentic = point.agentic
    if agentic is None:
        raise TypeError(f"{point.id} is a SPEED-Bench cell, not an AgentX point")
    return agentic


class AgenticItems(StandsInWithRecord):
    """An AgentX point: throughput of one TP and concurrency replaying agentic traces."""

    name = "agentic"
    attach_record = staticmethod(attach)

    def fresh(
        self, point: Point, server: ServerHandle, run: Run, request: pytest.FixtureRequest
    ) -> Runnable:
        return MeasuredAgenticPoint(point, agentic_of(point), server, run, request)

    def data_sha256(self, point: Point, datasets: Datasets) -> str | None:
        return traces_sha256(point)


AGENTIC = AgenticItems()
