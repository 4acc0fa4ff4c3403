"""The session context recipe items share: the server pool, the embedded engine, the loaded
datasets and the settings.

It lives apart from the fixtures that hand it out so the item modules can name its type without
importing the fixtures, which import them back.
"""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar, cast

import pytest

from pytest_infx.plugin.stash import NO_SERVER, PREFLIGHT, REF
from pytest_infx.plugin.state import Folders, RunState
from pytest_infx.results.files import write_result
from pytest_infx.results.layout import Layout
from pytest_infx.settings import Settings

if TYPE_CHECKING:
    from pytest_infx.engines.embedded import EmbeddedEngine
    from pytest_infx.engines.registry import EngineRegistry
    from pytest_infx.history.gate import BaselineVerdict
    from pytest_infx.launch import ServerHandle, ServerPool
    from pytest_infx.launch.telemetry import Sampler
    from pytest_infx.plugin.output.activity import Tracker
    from pytest_infx.plugin.run.history import History
    from pytest_infx.prepare.preflight import Datasets
    from pytest_infx.recipes.points import Point
    from pytest_infx.results.identity import ConfigIdentity
    from pytest_infx.results.kind import Kinds
    from pytest_infx.results.records import Record

R = TypeVar("R", bound="Record")

CLOSE_WAIT_XDIST_S = 600.0


@dataclass
class Run:
    """What one pytest process shares between its items."""

    config: pytest.Config
    settings: Settings
    folders: Folders
    datasets: Datasets
    kinds: Callable[[], Kinds]
    """The run's kinds, built-in and provided, which a kept record is written and stored by
    (:func:`pytest_infx.plugin.kinds.result_kinds`)."""
    _pool: ServerPool | None = None
    _embedded: EmbeddedEngine | None = None
    _progress: Tracker | None = None
    _history: History | None = None
    _telemetry: dict[str, Sampler] = field(default_factory=dict)
    _judged: dict[str, BaselineVerdict | None] = field(default_factory=dict)
    """Each measured point's stopped GPU sampler, until its record is kept."""
    _identities: dict[str, ConfigIdentity] = field(default_factory=dict)

    def say(self, message: str) -> None:
        import pytest_infx.plugin.output.progress as progress

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if reporter is None or capture is None:
            print(f"infx: {message}", file=sys.stderr, flush=True)
            return
        with capture.global_and_fixture_disabled(), progress.paused(self.config):
            reporter.write_line(f"infx: {message}")

    @property
    def layout(self) -> Layout:
        """Where each file of the results folder lives."""
        return Layout(self.settings.results)

    @property
    def engines(self) -> EngineRegistry:
        """The run's engine adapters, its hook implementations' included."""
        import pytest_infx.plugin.options as options

        return options.engines(self.config)

    @property
    def progress(self) -> Tracker:
        """What this process is doing now, for the live progress lines."""
        if self._progress is None:
            from pytest_infx.plugin.output.activity import tracker_for

            self._progress = tracker_for(self.folders.progress, self.settings.progress)
        return self._progress

    @property
    def pool(self) -> ServerPool:
        if self._pool is None:
            from pytest_infx.launch import GpuLeaser, Registry, ServerPool, detect_gpus
            from pytest_infx.launch.gpus import amd_firmware_env, used_memory
            from pytest_infx.plugin.slurm.jobs import in_job, job_gpus

            slurm = self.settings.env.slurm
            devices = job_gpus(slurm) if self.settings.gpu_count is None else None
            if devices is None:
                devices = tuple(g.index for g in detect_gpus(override=self.settings.gpu_count))
            leaser = None
            if devices:
                leaser = GpuLeaser(self.folders.run / "gpus", len(devices), devices=devices)
            # a Slurm job's run folder is its own: no other process can be using its servers
            under_xdist = RunState.of(self.config).worker and not in_job(slurm)
            self._pool = ServerPool(
                self.folders.run / "servers",
                Registry(self.folders.run / "registry.jsonl"),
                self.layout.server_log,
                leaser,
                close_wait_s=CLOSE_WAIT_XDIST_S if under_xdist else 0.0,
                on_starting=lambda label, log: self.progress.begin("server", label, log=str(log)),
                gpu_memory=used_memory if self.settings.gpu_count is None else None,
                amd_env=amd_firmware_env() if self.settings.gpu_count is None else None,
            )
            for key, uses in self._expected().items():
                self._pool.expect(key, uses)
        return self._pool

    def _expected(self) -> Counter[str]:
        """Uses by the items that will ask for a server: not those that failed preflight, and
        not those whose stored result is reused."""
        uses: Counter[str] = Counter()
        for item in RunState.of(self.config).session_items:
            ref = item.stash.get(REF, None)
            if ref is None or item.stash.get(PREFLIGHT, []) or item.stash.get(NO_SERVER, False):
                continue
            uses[ref.server] += 1
        return uses

    def embedded(self) -> EmbeddedEngine:
        if self._embedded is None:
            from pytest_infx.engines import embedded as engine

            self._embedded = engine.ensure(progress=self.say)
        return self._embedded

    def acquire(self, point: Point, key: str, label: str) -> ServerHandle:
        """The point's server, under the server key and label its item was collected with (the
        key the pool expects uses of; the label its name is made from); the pool keeps it up
        until every expected item is done."""
        from pytest_infx.prepare import serving
        from pytest_infx.prepare.plan import launch_plan

        with self.progress.doing("preparing", point.id):
            engine = self.embedded() if point.recipe.engine.embedded else None
            if engine is not None:
                paths = serving.embedded_paths(point, engine)
            else:
                paths = serving.staged_paths(point, self.settings.roots)
            python = str(engine.python) if engine is not None else None
            plan = launch_plan(
                point, paths, self.settings.golden, embedded_python=python, engines=self.engines
            )
            spec = serving.to_spec(plan, paths, key=key, label=label)
        with self.progress.doing("waiting", spec.name):
            return self.pool.acquire(spec)

    @contextlib.contextmanager
    def measuring(self, server: ServerHandle, point: Point) -> Iterator[None]:
        """Hold the server for one measurement: items of one server measure one at a time, on
        whichever workers they run; the wait shows in the progress lines. The server's GPUs
        are sampled meanwhile, for the point's record (see :meth:`keep`)."""
        lock = self.pool.measure_lock(server)
        with self.progress.doing("waiting", server.label):
            lock.acquire()
        sampler = self._sampler(server, point)
        try:
            yield
        finally:
            if sampler is not None:
                sampler.stop()
                self._telemetry[point.id] = sampler
            lock.release()

    def _sampler(self, server: ServerHandle, point: Point) -> Sampler | None:
        """A sampler of the server's GPUs; none on the CPU or where the GPUs are a count the
        run was given rather than ones it found."""
        if not server.gpu_ids or self.settings.gpu_count is not None:
            return None
        from pytest_infx.hardware import gpu_vendor
        from pytest_infx.launch.telemetry import Sampler, reader_for

        vendor = gpu_vendor(point.recipe.runner)
        return Sampler(reader_for(vendor, server.gpu_ids), server.gpu_ids).start()

    def model_dir(self, point: Point) -> str:
        """The served checkpoint folder (aiperf reads its tokenizer from there)."""
        from pytest_infx.prepare import serving

        if point.recipe.engine.embedded:
            return serving.embedded_paths(point, self.embedded()).target
        return serving.staged_paths(point, self.settings.roots).target

    @property
    def history(self) -> History:
        if self._history is None:
            from pytest_infx.plugin.run.history import History, stamp

            self._history = History(self.settings, stamp(self.config, self.settings), self.kinds)
        return self._history

    def identity(self, point: Point) -> ConfigIdentity:
        """The point's config identity, named by this machine's runner when it has one; made
        once per point, for its files, its record and its history row."""
        if point.id not in self._identities:
            from pytest_infx.prepare.identity import identity_of

            self._identities[point.id] = identity_of(
                point, runner=self.settings.env.runner_name, engines=self.engines
            )
        return self._identities[point.id]

    def keep(self, record: R, point: Point, *, problems: Sequence[str] = ()) -> R:
        """Write an item's result file, tell the ``pytest_infx_result`` hooks (which get the
        file's JSON value, so a hook's change cannot reach the file), then write its row in
        the results history; every result of a run is kept here, the file first, so a
        database that is down loses nothing. The baseline gate is judged before the row is
        written, so the row holds the point's final verdict; ``problems`` fail a point whose
        record passed (an export that failed after it) in the row too. Returns the record as
        written, with its config identity (the kind's, else the point's made here)."""
        __tracebackhide__ = True
        if record.config is None:
            record = cast(R, record.model_copy(update={"config": self.identity(point)}))
        record = self._with_telemetry(record, point)
        path = write_result(self.layout, record, self.kinds())
        self.config.hook.pytest_infx_result(config=self.config, path=path, record=record.as_json())
        judged = None if problems else self.history.judge(record, point)
        self._judged[point.id] = judged
        self.history.put(record, judged, problems)
        return record

    def _with_telemetry(self, record: R, point: Point) -> R:
        """The record with its GPUs' summary, their samples written beside it."""
        taken = self._telemetry.pop(point.id, None)
        if taken is None:
            return record
        from pytest_infx.files.atomic import atomic_write_text
        from pytest_infx.results.records import GpuTelemetry

        path = self.layout.telemetry(point.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, taken.csv_text())
        telemetry = GpuTelemetry.of(
            taken.summary(),
            output_tokens_per_s=record.output_tokens_per_s,
            file=self.layout.relative(path),
        )
        return cast(R, record.model_copy(update={"gpu_telemetry": telemetry}))

    def gate(
        self,
        node: pytest.Item,
        record: Record,
        point: Point,
        verdict: BaselineVerdict | None = None,
    ) -> None:
        """The baseline gate, for a point that passed its own: the comparison goes on the
        item for the end-of-run table, and a metric past its tolerance fails the point. The
        verdict is the one ``keep`` stored (or ``verdict``, a reused point's)."""
        __tracebackhide__ = True
        from pytest_infx.plugin.output.summary import BASELINE_PROPERTY

        if verdict is None:
            verdict = self._judged.pop(point.id, None)
        if verdict is None:
            return
        node.user_properties.append((BASELINE_PROPERTY, verdict.to_wire()))
        if not verdict.passed:
            pytest.fail(verdict.message(), pytrace=False)

    def release(self, key: str) -> None:
        self.pool.release(key)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._progress is not None:
            self._progress.close()
        if self._history is not None:
            self._history.close()
