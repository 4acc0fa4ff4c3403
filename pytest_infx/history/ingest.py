"""``infx db ingest``: result files written earlier, ours or InferenceX's, into the history.

Three shapes are read. Our result records (``cells/*.json``, ``agentic/*.json`` of a results
folder). InferenceX's processed fixed-seq-len results: one ``agg_<RESULT_FILENAME>.json`` per
point, or ``results_bmk``'s ``agg_bmk.json``, a list of them. InferenceX's AgentX aggregates,
whose figures sit under ``request_metrics``. Each row gets the natural key a run would have
given it, so an ingest run twice adds nothing, and a row InferenceX would drop (no successful
request) is skipped with its reason, never stored as a zero that could become a baseline.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pytest_infx.files.textio import InputFileError, read_input
from pytest_infx.hardware import gpu_type
from pytest_infx.history.metrics import of_inferencex
from pytest_infx.history.rows import row_of
from pytest_infx.history.store import PointRow, RunStamp, Store
from pytest_infx.results.layout import Layout
from pytest_infx.results.records import ConfigInfo, RecordError, parse_record
from pytest_infx.results.verdict import Verdict

AGENTIC_SCENARIO = "agentic-coding"


@dataclass
class Tally:
    """What an ingest did, by outcome (``added``, ``unchanged``, ``updated``, ``kept``) and
    the files or rows it skipped, with why."""

    outcomes: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        counts = ", ".join(
            f"{self.outcomes.get(name, 0)} {name}"
            for name in ("added", "unchanged", "updated", "kept")
        )
        lines = [f"{counts}, {len(self.skipped)} skipped"]
        lines += [f"  skipped {reason}" for reason in self.skipped]
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
    """The run an ingest files its rows under when none is named: one id per set of paths
    given (so running it again finds the same run), dated by the newest of the files ``found``
    in them."""
    resolved = sorted(str(path.resolve()) for path in paths)
    digest = hashlib.sha256("\n".join(resolved).encode()).hexdigest()[:12]
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


def ingest(store: Store, found: Iterable[Path], stamp: RunStamp) -> Tally:
    """Store the rows of the result files ``found`` (see :func:`files`) under ``stamp``."""
    tally = Tally()
    run = store.add_run(stamp)
    for path in found:
        try:
            data = json.loads(read_input(path))
        except (OSError, InputFileError, ValueError, RecursionError) as exc:
            tally.skipped.append(f"{path}: not a JSON file we can read ({exc})")
            continue
        for row in rows_of(path, data, tally):
            tally.outcomes[store.put(run, row)] += 1
    return tally


def rows_of(path: Path, data: object, tally: Tally) -> Iterator[PointRow]:
    """The rows one file holds; what cannot be a row is added to ``tally.skipped``."""
    if isinstance(data, list):
        for index, entry in enumerate(data):
            where = f"{path}[{index}]"
            if not isinstance(entry, Mapping):
                tally.skipped.append(f"{where}: not an object")
                continue
            row = _inferencex_row(entry, where, _item(entry), tally)
            if row is not None:
                yield row
        return
    if not isinstance(data, Mapping):
        tally.skipped.append(f"{path}: holds a JSON {type(data).__name__}, not a result")
        return
    if "fingerprint" in data and "server" in data:
        try:
            yield row_of(parse_record(data))
        except (RecordError, ValueError) as exc:
            tally.skipped.append(f"{path}: {exc}")
        return
    name = path.stem.removeprefix("agg_")
    row = _inferencex_row(data, str(path), name, tally)
    if row is not None:
        yield row


def _item(entry: Mapping[str, object]) -> str:
    """A name for a row of ``agg_bmk.json``, which has no file name of its own: InferenceX's
    result name fields, in its order."""
    parts = [
        str(entry.get("infmax_model_prefix") or entry.get("model_prefix") or "model"),
        str(entry.get("precision", "")),
        str(entry.get("framework", "")),
        f"tp{entry.get('tp', 1)}-ep{entry.get('ep', 1)}-dpa{entry.get('dp_attention', 'false')}",
        f"spec-{entry.get('spec_decoding', 'none')}",
        f"isl{entry.get('isl', 0)}-osl{entry.get('osl', 0)}",
        f"conc{entry.get('conc', 0)}",
        str(entry.get("hw", "")),
    ]
    return "_".join(parts)


def _int(value: object, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return default


def _inferencex_row(
    data: Mapping[str, object], where: str, item: str, tally: Tally
) -> PointRow | None:
    missing = [name for name in ("hw", "framework", "precision", "tp", "conc") if name not in data]
    if missing:
        tally.skipped.append(f"{where}: not a result we know (no {', '.join(missing)})")
        return None
    for counter in ("num_requests_successful", "completed"):
        if counter in data and _int(data.get(counter), -1) == 0:
            tally.skipped.append(f"{where}: no successful request, so no measurement")
            return None
    metrics = of_inferencex(data)
    if not metrics:
        tally.skipped.append(f"{where}: no figure the history keeps")
        return None
    agentic = data.get("scenario_type") == AGENTIC_SCENARIO or "request_metrics" in data
    image = str(data.get("image") or "")
    tp = max(1, _int(data.get("tp"), 1))
    config = ConfigInfo(
        model_prefix=str(data.get("infmax_model_prefix") or data.get("model_prefix") or ""),
        hardware=gpu_type(str(data["hw"])),
        framework=str(data["framework"]),
        engine_version=image.rsplit(":", 1)[-1] if ":" in image else image,
        precision=str(data["precision"]),
        spec_method=str(data.get("spec_decoding") or "none"),
        tp=tp,
        ep=max(1, _int(data.get("ep"), 1)),
        pp=max(1, _int(data.get("pp"), 1)),
        dcp=max(1, _int(data.get("dcp_size"), 1)),
        pcp=max(1, _int(data.get("pcp_size"), 1)),
        dp_attention=str(data.get("dp_attention", "false")).lower() == "true",
    )
    return PointRow(
        config=config,
        kind="agentic" if agentic else "fixed-seq-len",
        conc=max(1, _int(data.get("conc"), 1)),
        cell="",
        item=item,
        recipe=str(data.get("model") or ""),
        dataset="agentic-traces" if agentic else "random",
        status=Verdict.PASS,
        metrics=metrics,
        isl=0 if agentic else _int(data.get("isl")),
        osl=0 if agentic else _int(data.get("osl")),
        offload_mode=str(data.get("kv_offloading") or "none"),
    )
