"""A finished sweep as its result files hold it: the input of the plots and the HTML report.

Everything is read back from ``--infx-results`` rather than taken from live objects, so the
report of a sweep is the same whether it ran on one process, under xdist, or partly in an
earlier run whose cells were reused, and it can be rebuilt later from a copied results folder.
A file that cannot be read is kept as a problem to show, never a reason to drop the report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_infx.files.contained import OutsideFolderError
from pytest_infx.golden.compare import DEFAULT_TOLERANCE, DEFAULT_Z
from pytest_infx.golden.curve import Curve
from pytest_infx.golden.io import GoldenFileError
from pytest_infx.golden.store import GoldenNotFoundError, GoldenStore
from pytest_infx.results import verdict as vocabulary
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import (
    CellRecord,
    FixedRecord,
    PointRecord,
    Record,
    RecordError,
    read_record,
)
from pytest_infx.results.verdict import Status, Verdict

LOG_TAIL_BYTES = 4096
LAST_WORD_BYTES = 65536
"""Where the launcher's stop line is looked for: an engine's teardown after it runs to a few
dozen lines, longer than the tail the report shows."""
_STOPPED = re.compile(r"^guard: .*; stopping its process group$")
"""The line the launcher's guard writes into the log when it stops the server."""
_TEARDOWN_NOISE = re.compile(r"resource_tracker")


@dataclass(frozen=True, kw_only=True)
class AlCell:
    """One SPEED-Bench cell; ``al`` is None when the cell failed its checks. Only the session
    knows, the files do not: ``ran`` whether this run had the item (None when the report is
    rebuilt from a folder), ``reused`` why it did not measure it (``--infx-resume`` took its
    passed result from an earlier run, whose file and server log these are)."""

    id: str
    k: int
    mode: str
    al: float | None
    standard_error: float | None
    verdict: Verdict
    reasons: tuple[str, ...]
    golden_ok: bool | None
    completed: int | None
    total: int | None
    file: Path
    log: Path | None
    ran: bool | None = None
    reused: str | None = None

    @property
    def status(self) -> Status:
        """pass, fail (its checks failed: no AL) or drift (out of golden tolerance)."""
        if self.verdict is not Verdict.PASS and self.al is None:
            return Status.FAIL
        if self.golden_ok is False:
            return Status.DRIFT
        return Status.PASS if self.verdict is Verdict.PASS else Status.FAIL


@dataclass(frozen=True, kw_only=True)
class AlRecipe:
    """The cells of one SPEED-Bench recipe with the golden curve they were compared with."""

    key: str
    cells: tuple[AlCell, ...]
    curve_name: str | None
    golden: Curve | None
    golden_problem: str | None
    tolerance: float
    z: float = DEFAULT_Z

    def allowed(self, cell: AlCell) -> float:
        """The half-width a cell was allowed: the tolerance plus z standard errors."""
        return self.tolerance + self.z * (cell.standard_error or 0.0)

    def golden_al(self, cell: AlCell) -> float | None:
        if self.golden is None or not self.golden.has(cell.mode, cell.k):
            return None
        return self.golden.al(cell.mode, cell.k)


@dataclass(frozen=True, kw_only=True)
class AgenticPoint:
    """One AgentX point; ``interactivity`` (tokens/s one user sees) is None without a TPOT.
    ``ran`` and ``reused`` are as on :class:`AlCell`."""

    id: str
    tp: int
    concurrency: int
    throughput_per_gpu: float | None
    interactivity: float | None
    ttft_p50_ms: float | None
    failed: int
    total: int
    verdict: Verdict
    reasons: tuple[str, ...]
    submission_valid: bool | None
    file: Path
    log: Path | None
    ran: bool | None = None
    reused: str | None = None
    lengths: str | None = None
    """A fixed-seq-len point's ``ISL/OSL``; None for an AgentX point."""
    power_w: float | None = None
    """Its GPUs' mean power while it measured; None without GPU telemetry."""
    tokens_per_joule: float | None = None


@dataclass(frozen=True, kw_only=True)
class AgenticRecipe:
    key: str
    points: tuple[AgenticPoint, ...]

    def by_tp(self) -> dict[int, list[AgenticPoint]]:
        groups: dict[int, list[AgenticPoint]] = {}
        for point in sorted(self.points, key=lambda p: (-p.tp, p.concurrency)):
            groups.setdefault(point.tp, []).append(point)
        return groups

    def arms(self) -> dict[str, list[AgenticPoint]]:
        """Points by TP, lengths and variant (``TP8``, ``TP8 ep8-dpa-hicache``, ``TP4
        1024/8192``): the arms of one TP are different servers or loads, so a throughput curve
        runs through one arm's concurrencies only."""
        groups: dict[str, list[AgenticPoint]] = {}
        order = sorted(
            self.points, key=lambda p: (-p.tp, p.lengths or "", _variant(p.id), p.concurrency)
        )
        for point in order:
            name = " ".join(n for n in (f"TP{point.tp}", point.lengths, _variant(point.id)) if n)
            groups.setdefault(name, []).append(point)
        return groups


_VARIANT = re.compile(r"\[tp\d+-c\d+-([^\]]+)\]$")


def _variant(item_id: str) -> str:
    found = _VARIANT.search(item_id)
    return found.group(1) if found else ""


@dataclass(frozen=True, kw_only=True)
class ServerLog:
    """``last`` is the server's last word: the last line before the launcher stopped it
    (``stopped``), so an engine's own teardown (vLLM's ``EngineDeadError`` on a clean shutdown,
    the resource tracker's leak warnings) never stands in the report as what the server said
    last; without a stop, the last line that is not such a warning."""

    path: Path
    size: int
    tail: tuple[str, ...]
    last: str = ""
    stopped: bool = False


@dataclass(frozen=True, kw_only=True)
class ItemOutcome:
    """What pytest said about one recipe item (the report keeps items that left no file);
    ``reused`` is the resume reason of an item whose stored result stood in for a run."""

    id: str
    recipe: str
    outcome: str
    reason: str
    file: str | None = None
    reused: str | None = None


@dataclass(frozen=True, kw_only=True)
class Sweep:
    results: Path
    al: tuple[AlRecipe, ...]
    agentic: tuple[AgenticRecipe, ...]
    logs: tuple[ServerLog, ...]
    outcomes: tuple[ItemOutcome, ...] = ()
    problems: tuple[str, ...] = field(default=())
    fixed: tuple[AgenticRecipe, ...] = ()
    """The fixed-seq-len points, by recipe, in the AgentX points' terms."""

    def without_file(self) -> list[ItemOutcome]:
        """Items pytest ran that left no result file (a server that never started, say)."""
        written = {c.id for r in self.al for c in r.cells} | {
            p.id for r in (*self.agentic, *self.fixed) for p in r.points
        }
        return [o for o in self.outcomes if o.id not in written]


class _Session:
    """What this run's outcomes say about a result file's item."""

    def __init__(self, outcomes: tuple[ItemOutcome, ...]) -> None:
        self.ids = {o.id for o in outcomes}
        self.reused = {o.id: o.reused for o in outcomes if o.reused is not None}

    def ran(self, item_id: str) -> bool | None:
        return item_id in self.ids if self.ids else None


def _json_files(folder: Path) -> list[Path]:
    """Every ``*.json`` entry, files or not: one that is a pipe or a folder is a problem the
    report shows, not a result that silently is not there."""
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _load(path: Path, problems: list[str]) -> Record | None:
    try:
        return read_record(path)
    except (OSError, RecordError) as exc:
        problems.append(f"{exc}; it is left out of the report")
        return None


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _log_of(record: Record, layout: Layout) -> Path | None:
    return layout.log(record.server.log) if record.server.log else None


def _verdict(record: Record) -> Verdict:
    """A missing word is shown as a failure: nothing but a pass reads as one."""
    return vocabulary.read(record.verdict) or Verdict.FAIL


def _al_cell(path: Path, record: CellRecord, layout: Layout, session: _Session) -> AlCell:
    golden = record.golden
    return AlCell(
        id=record.id,
        k=record.point.draft_length,
        mode=record.point.thinking,
        al=_finite(record.al),
        standard_error=_finite(record.al_standard_error),
        verdict=_verdict(record),
        reasons=tuple(record.reasons),
        golden_ok=None if golden is None else golden.ok,
        completed=record.requests.completed,
        total=record.requests.total,
        file=path,
        log=_log_of(record, layout),
        ran=session.ran(record.id),
        reused=session.reused.get(record.id),
    )


def _agentic_point(
    path: Path, record: PointRecord, layout: Layout, session: _Session
) -> AgenticPoint:
    ttft = record.latency_ms.ttft
    power, per_joule = _power(record)
    return AgenticPoint(
        id=record.id,
        tp=record.tp,
        concurrency=record.concurrency,
        throughput_per_gpu=_finite(record.throughput.output_tokens_per_s_per_gpu),
        interactivity=_finite(record.interactivity_tokens_per_s_per_user),
        ttft_p50_ms=None if ttft is None else _finite(ttft.p50),
        failed=record.requests.failed,
        total=record.requests.total,
        verdict=_verdict(record),
        reasons=tuple(record.reasons),
        submission_valid=record.submission_valid,
        file=path,
        log=_log_of(record, layout),
        ran=session.ran(record.id),
        reused=session.reused.get(record.id),
        power_w=power,
        tokens_per_joule=per_joule,
    )


def _power(record: PointRecord | FixedRecord) -> tuple[float | None, float | None]:
    """Mean GPU power and output tokens per joule, where the point has GPU telemetry."""
    telemetry = record.gpu_telemetry
    if telemetry is None:
        return None, None
    return _finite(telemetry.mean_power_w), _finite(telemetry.output_tokens_per_joule)


def _fixed_point(
    path: Path, record: FixedRecord, layout: Layout, session: _Session
) -> AgenticPoint:
    figures = record.figures
    ttft = figures.get("median_ttft")
    power, per_joule = _power(record)
    return AgenticPoint(
        id=record.id,
        tp=record.point.tp,
        concurrency=record.point.concurrency,
        throughput_per_gpu=_finite(figures.get("output_tput_per_gpu")),
        interactivity=_finite(figures.get("median_intvty")),
        ttft_p50_ms=None if ttft is None else _finite(ttft * 1000.0),
        failed=record.requests.failed,
        total=record.requests.sent,
        verdict=_verdict(record),
        reasons=tuple(record.reasons),
        submission_valid=None,
        file=path,
        log=_log_of(record, layout),
        ran=session.ran(record.id),
        reused=session.reused.get(record.id),
        lengths=f"{record.point.isl}/{record.point.osl}",
        power_w=power,
        tokens_per_joule=per_joule,
    )


def _golden(
    store: GoldenStore, name: str | None, problems: list[str], source: str, field: str
) -> tuple[Curve | None, str | None]:
    if name is None:
        return None, "no cell of this recipe names its golden curve (none reached the comparison)"
    try:
        return store.get(name, source=source, field=field), None
    except (GoldenNotFoundError, GoldenFileError, OutsideFolderError) as exc:
        problems.append(str(exc))
        return None, str(exc)


def _al_recipe(
    layout: Layout,
    key: str,
    rows: list[tuple[Path, CellRecord]],
    store: GoldenStore,
    curves: Mapping[str, str],
    session: _Session,
    problems: list[str],
) -> AlRecipe:
    cells = tuple(
        sorted(
            (_al_cell(p, d, layout, session) for p, d in rows),
            key=lambda c: (c.mode != "thinking_off", c.k),
        )
    )
    goldens = [d.golden for _, d in rows if d.golden is not None]
    named = next(((p, d.golden.curve) for p, d in rows if d.golden and d.golden.curve), None)
    name = named[1] if named else curves.get(key)
    source, field = (str(named[0]), "golden.curve") if named else (key, "speedbench.golden")
    curve, problem = _golden(store, name, problems, source, field)
    tolerances = [_finite(g.tolerance) for g in goldens]
    known = [t for t in tolerances if t is not None]
    if known:
        tolerance = known[0]
    elif curve is not None and curve.header.tolerance is not None:
        tolerance = curve.header.tolerance
    else:
        tolerance = DEFAULT_TOLERANCE
    return AlRecipe(
        key=key,
        cells=cells,
        curve_name=name,
        golden=curve,
        golden_problem=problem,
        tolerance=tolerance,
    )


def _tail(path: Path, limit: int = LOG_TAIL_BYTES) -> tuple[str, ...]:
    """The whole lines of the last ``limit`` bytes."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return ()
    lines = data.decode("utf-8", errors="replace").splitlines()
    if size > limit and lines:
        lines = lines[1:]
    return tuple(lines)


def last_word(lines: tuple[str, ...]) -> tuple[str, bool]:
    """The server's last line and whether the launcher stopped it (see :class:`ServerLog`)."""
    for index in range(len(lines) - 1, -1, -1):
        if _STOPPED.match(lines[index]):
            said = [line for line in lines[:index] if line.strip()]
            return (said[-1] if said else lines[index]), True
    said = [line for line in lines if line.strip() and not _TEARDOWN_NOISE.search(line)]
    return (said[-1] if said else ""), False


def server_logs(layout: Layout) -> tuple[ServerLog, ...]:
    folder = layout.logs
    if not folder.is_dir():
        return ()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    found = []
    for path in files:
        last, stopped = last_word(_tail(path, LAST_WORD_BYTES))
        tail = _tail(path)[-20:]
        found.append(
            ServerLog(path=path, size=path.stat().st_size, tail=tail, last=last, stopped=stopped)
        )
    return tuple(found)


def read_sweep(
    results: Path,
    golden_root: Path,
    *,
    recipes: Iterable[str] | None = None,
    curves: Mapping[str, str] | None = None,
    outcomes: Iterable[ItemOutcome] = (),
) -> Sweep:
    """The sweep under ``results``; ``recipes`` limits it to the recipe keys of this run (an
    old recipe's files in a reused results folder are not this run's news), and ``curves``
    names a recipe's golden curve when none of its cells got as far as the comparison; an
    outcome's ``reused`` reason marks its cell or point as taken from an earlier run."""
    layout = Layout(results)
    wanted = None if recipes is None else set(recipes)
    outcomes = tuple(outcomes)
    session = _Session(outcomes)
    problems: list[str] = []
    al_rows: dict[str, list[tuple[Path, CellRecord]]] = {}
    agentic_rows: dict[str, list[AgenticPoint]] = {}
    for path in _json_files(layout.cells):
        cell = _load(path, problems)
        if isinstance(cell, CellRecord) and (wanted is None or cell.recipe in wanted):
            al_rows.setdefault(cell.recipe, []).append((path, cell))
    for path in _json_files(layout.agentic):
        point = _load(path, problems)
        if isinstance(point, PointRecord) and (wanted is None or point.recipe in wanted):
            agentic_rows.setdefault(point.recipe, []).append(
                _agentic_point(path, point, layout, session)
            )
    fixed_rows: dict[str, list[AgenticPoint]] = {}
    for path in _json_files(layout.fixed_seq_len):
        found = _load(path, problems)
        if isinstance(found, FixedRecord) and (wanted is None or found.recipe in wanted):
            fixed_rows.setdefault(found.recipe, []).append(
                _fixed_point(path, found, layout, session)
            )
    store = GoldenStore(golden_root)
    return Sweep(
        results=results,
        al=tuple(
            _al_recipe(layout, key, rows, store, curves or {}, session, problems)
            for key, rows in sorted(al_rows.items())
        ),
        agentic=tuple(
            AgenticRecipe(key=key, points=tuple(points))
            for key, points in sorted(agentic_rows.items())
        ),
        logs=server_logs(layout),
        outcomes=outcomes,
        problems=tuple(problems),
        fixed=tuple(
            AgenticRecipe(key=key, points=tuple(points))
            for key, points in sorted(fixed_rows.items())
        ),
    )
