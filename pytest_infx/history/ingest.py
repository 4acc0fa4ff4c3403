"""``infx db ingest``: result files written earlier, ours or InferenceX's, into the history.

Three shapes are read. Our result records (``cells/*.json``, ``agentic/*.json`` of a results
folder). InferenceX's processed fixed-seq-len results: one ``agg_<RESULT_FILENAME>.json`` per
point, or ``results_bmk``'s ``agg_bmk.json``, a list of them. InferenceX's AgentX aggregates,
whose figures sit under ``request_metrics``. Each row gets the natural key a run would have
given it, so an ingest run twice adds nothing, and a row InferenceX would drop (no successful
request) is skipped with its reason, never stored as a zero that could become a baseline.

Identity comes from content, never from how the files are named or found: the engine version
from the image (digest-aware), an InferenceX row's item from its config and point (its file
name ends with the runner instance and the recipe fingerprint, which differ night to night),
and the run from the digests of the files read (the same files named one by one, as a folder,
or copied elsewhere are one run). A multinode row keys on its prefill and decode sizes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pytest_infx.files import strictjson
from pytest_infx.files.numbers import NumberError, count
from pytest_infx.files.strictjson import RepeatedKeyError
from pytest_infx.files.textio import InputFileError, read_input
from pytest_infx.hardware import gpu_type
from pytest_infx.history.metrics import of_inferencex
from pytest_infx.history.rows import row_of
from pytest_infx.history.store import PointRow, RunStamp, Store
from pytest_infx.images import version_of
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.kind import Kinds
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import NewerRecordError, RecordError, parse_record
from pytest_infx.results.verdict import Verdict

AGENTIC_SCENARIO = "agentic-coding"


@dataclass
class Tally:
    """What an ingest did, by outcome (``added``, ``unchanged``, ``updated``, ``kept``) and
    the files or rows it skipped, with why."""

    outcomes: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Rows or files with a figure, count or key that is not what its field needs: bad input,
    unlike a skipped row, so ``infx db ingest`` ends non-zero when there is one."""

    def lines(self) -> list[str]:
        counts = ", ".join(
            f"{self.outcomes.get(name, 0)} {name}"
            for name in ("added", "unchanged", "updated", "kept")
        )
        refused = f", {len(self.refused)} refused" if self.refused else ""
        lines = [f"{counts}, {len(self.skipped)} skipped{refused}"]
        lines += [f"  skipped {reason}" for reason in self.skipped]
        lines += [f"  refused {reason}" for reason in self.refused]
        return lines


def files(paths: Iterable[Path]) -> Iterator[Path]:
    """The JSON files under each path, in a stable order; a path that is a file is taken as
    it is. In one of our results folders only the records are read: the InferenceX aggregate
    beside an AgentX record is the same point, and aiperf's exports are no results."""
    for path in paths:
        if not path.is_dir():
            yield path
            continue
        ours = Layout(path)
        if ours.holds_results():
            yield from sorted(p for p in ours.cells.glob("*.json") if p.is_file())
            yield from sorted(p for p in ours.agentic.glob("*.json") if p.is_file())
            yield from sorted(p for p in ours.fixed_seq_len.glob("*.json") if p.is_file())
        else:
            yield from sorted(
                p for p in path.rglob("*.json") if p.is_file() and not p.name.startswith(".")
            )


def default_stamp(
    paths: Sequence[Path], found: Sequence[Path], *, branch: str, commit: str
) -> RunStamp:
    """The run an ingest files its rows under when none is named: one id per set of file
    contents (so the same data read again, however its files are named or found, is the same
    run), dated by the newest of the files ``found``."""
    digests = sorted({_digest(path) for path in found})
    digest = hashlib.sha256("\n".join(digests).encode()).hexdigest()[:12]
    newest = max((p.stat().st_mtime for p in found if p.exists()), default=0.0)
    return RunStamp(
        run_id=f"ingest-{digest}",
        attempt=1,
        branch=branch,
        commit=commit,
        started=datetime.fromtimestamp(newest, UTC),
        machine="ingest",
        plugin_version="ingest",
    )


def _digest(path: Path) -> str:
    """A file's sha256, or its name where it cannot be read (the ingest then skips it)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return f"unreadable:{path.name}"


def ingest(store: Store, found: Iterable[Path], stamp: RunStamp, kinds: Kinds) -> Tally:
    """Store the rows of the result files ``found`` (see :func:`files`) under ``stamp``; our
    records are read by their ``kinds``."""
    tally = Tally()
    run = store.add_run(stamp)
    for path in found:
        try:
            data = strictjson.loads(read_input(path))
        except RepeatedKeyError as exc:
            tally.refused.append(f"{path}: {exc}")
            continue
        except (OSError, InputFileError, ValueError, RecursionError) as exc:
            tally.skipped.append(f"{path}: not a JSON file we can read ({exc})")
            continue
        for row in rows_of(path, data, tally, kinds):
            tally.outcomes[store.put(run, row)] += 1
    return tally


def rows_of(path: Path, data: object, tally: Tally, kinds: Kinds) -> Iterator[PointRow]:
    """The rows one file holds; what cannot be a row is added to ``tally.skipped``, and one of
    our records that is broken (a figure that is no measurement, a field of the wrong type) to
    ``tally.refused``, as a bad InferenceX row is; a record of a newer version, or of one before
    records carried their config, is skipped."""
    if isinstance(data, list):
        for index, entry in enumerate(data):
            where = f"{path}[{index}]"
            if not isinstance(entry, Mapping):
                tally.skipped.append(f"{where}: not an object")
                continue
            row = _inferencex_row(entry, where, tally)
            if row is not None:
                yield row
        return
    if not isinstance(data, Mapping):
        tally.skipped.append(f"{path}: holds a JSON {type(data).__name__}, not a result")
        return
    if "fingerprint" in data and "server" in data:
        try:
            record = parse_record(data)
        except NewerRecordError as exc:
            tally.skipped.append(f"{path}: {exc}")
            return
        except RecordError as exc:
            tally.refused.append(f"{path}: {exc}; fix or remove this file")
            return
        if record.kind not in kinds:
            tally.skipped.append(
                f"{path}: a record of the kind {record.kind!r}, which another package provides"
                " to pytest runs; its points are stored as they run"
            )
            return
        try:
            yield row_of(record, kinds)
        except ValueError as exc:
            tally.skipped.append(f"{path}: {exc}")
        return
    row = _inferencex_row(data, str(path), tally)
    if row is not None:
        yield row


def _item(entry: Mapping[str, object]) -> str:
    """A row's item: InferenceX's result name fields in its order, from the row's config and
    point, with the GPU type rather than the runner instance (``b200-nv_3``) it ran on, so one
    point's nightly rows from any runner are one item."""
    multinode = _multinode(entry)
    sizes = (
        multinode[0]
        if multinode is not None
        else f"tp{entry.get('tp', 1)}-ep{entry.get('ep', 1)}-dpa"
        f"{str(entry.get('dp_attention', 'false')).lower()}"
    )
    parts = [
        str(entry.get("infmax_model_prefix") or entry.get("model_prefix") or "model"),
        str(entry.get("precision", "")),
        str(entry.get("framework", "")),
        sizes,
        f"spec-{entry.get('spec_decoding', 'none')}",
        f"isl{entry.get('isl', 0)}-osl{entry.get('osl', 0)}",
        f"conc{entry.get('conc', 0)}",
        gpu_type(str(entry.get("hw", ""))),
    ]
    return "_".join(parts)


def _multinode(entry: Mapping[str, object]) -> tuple[str, int] | None:
    """A multinode row's prefill and decode sizes as one key part (``p1-tp8-ep8-dpafalse_d2-
    tp8-ep8-dpafalse``) and its GPUs; None for a single-node row."""
    multinode = str(entry.get("is_multinode", "false")).lower() == "true" or (
        "prefill_tp" in entry and "decode_tp" in entry and "tp" not in entry
    )
    if not multinode:
        return None
    parts = []
    for side in ("prefill", "decode"):
        workers = _count(entry, f"{side}_num_workers", 1)
        tp = _count(entry, f"{side}_tp", 1)
        ep = _count(entry, f"{side}_ep", 1)
        dpa = str(entry.get(f"{side}_dp_attention", "false")).lower()
        parts.append(f"{side[0]}{workers}-tp{tp}-ep{ep}-dpa{dpa}")
    gpus = _count(entry, "num_prefill_gpu", 0) + _count(entry, "num_decode_gpu", 0)
    return "_".join(parts), max(1, gpus)


def _count(data: Mapping[str, object], name: str, absent: int | None = None) -> int:
    """A count of the row; ``absent`` where the row has none (``None``: the count is needed)."""
    value = data.get(name)
    return absent if value is None and absent is not None else count(value, name)


def _name(data: Mapping[str, object], name: str) -> str:
    """A key field naming something (hardware, framework): a non-empty string, since a ``null``
    would be stored as the name ``None`` and become another point's identity."""
    value = data[name]
    if not isinstance(value, str) or not value.strip():
        raise NumberError(name, value, "a name (a non-empty string)")
    return value


def _inferencex_row(data: Mapping[str, object], where: str, tally: Tally) -> PointRow | None:
    """The row of one InferenceX result; a key field or figure that is not what it must be
    refuses the whole row (``tally.refused``, naming the field), so nothing of it is stored."""
    try:
        return _checked_row(data, where, _item(data), tally)
    except NumberError as exc:
        tally.refused.append(f"{where}: {exc}; fix or remove this entry")
        return None


def _checked_row(
    data: Mapping[str, object], where: str, item: str, tally: Tally
) -> PointRow | None:
    multinode = _multinode(data)
    needed: tuple[str, ...] = ("hw", "framework", "precision", "tp", "conc")
    if multinode is not None:
        needed = ("hw", "framework", "precision", "conc")
    missing = [name for name in needed if name not in data]
    if missing:
        tally.skipped.append(f"{where}: not a result we know (no {', '.join(missing)})")
        return None
    for counter in ("num_requests_successful", "completed"):
        if counter in data and count(data[counter], counter, least=0) == 0:
            tally.skipped.append(f"{where}: no successful request, so no measurement")
            return None
    metrics = of_inferencex(data)
    if not metrics:
        tally.skipped.append(f"{where}: no figure the history keeps")
        return None
    agentic = data.get("scenario_type") == AGENTIC_SCENARIO or "request_metrics" in data
    image = str(data.get("image") or "")
    config = ConfigIdentity(
        model_prefix=str(data.get("infmax_model_prefix") or data.get("model_prefix") or ""),
        hardware=gpu_type(_name(data, "hw")),
        framework=_name(data, "framework"),
        engine_version=version_of(image),
        precision=_name(data, "precision"),
        spec_method=str(data.get("spec_decoding") or "none"),
        tp=_count(data, "tp" if multinode is None else "decode_tp"),
        ep=_count(data, "ep", 1),
        pp=_count(data, "pp", 1),
        dcp=_count(data, "dcp_size", 1),
        pcp=_count(data, "pcp_size", 1),
        dp_attention=str(data.get("dp_attention", "false")).lower() == "true",
        disaggregated=None if multinode is None else multinode[0],
        disaggregated_gpus=None if multinode is None else multinode[1],
    )
    return PointRow(
        config=config,
        kind="agentic" if agentic else "fixed-seq-len",
        conc=_count(data, "conc"),
        cell="",
        item=item,
        recipe=str(data.get("model") or ""),
        dataset="agentic-traces" if agentic else "random",
        status=Verdict.PASS,
        metrics=metrics,
        isl=0 if agentic else _count(data, "isl", 0),
        osl=0 if agentic else _count(data, "osl", 0),
        offload_mode=str(data.get("kv_offloading") or "none"),
    )
