"""Local multi-turn coding traces for AgentX replay.

On a connected GPU node the AgentX scenario replays a pinned public corpus. Offline (CPU runs, CI)
aiperf replays a local directory of Weka-format trace files instead (``--custom-dataset-type
weka_trace``), which is the same loader the public corpus goes through, so the replay semantics
(sessions, turn timing, shared prefixes) are identical. aiperf checks the files itself, but its
errors come from deep inside its dataset service after a 20-second start-up; checking here first
gives a message naming the file and entry before anything is launched.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_infx.files.textio import read_input

_TURN_TYPES = ("n", "s")
_REQUIRED_TRACE_KEYS = ("id", "models", "block_size", "hash_id_scope", "requests")


class TraceError(ValueError):
    """A trace file that aiperf's Weka loader would reject; the message names file and entry."""


@dataclass(frozen=True, kw_only=True)
class TraceSet:
    """What a trace directory holds, for result provenance."""

    path: Path
    sessions: int
    turns: int
    sha256: str


def default_traces_path() -> Path:
    """The trace set shipped with the plugin: 16 original coding sessions of 2 to 5 turns."""
    return Path(__file__).resolve().parent.parent / "data" / "agentic" / "traces"


def load_traces(path: Path) -> TraceSet:
    """Check a trace file or directory of ``*.json`` traces and summarise it.

    The digest covers file names and bytes in sorted order, so it identifies the corpus the way a
    public dataset name does.
    """
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise TraceError(f"{path}: no *.json trace files in this directory")
    elif path.is_file():
        files = [path]
    else:
        raise TraceError(f"{path}: no such trace file or directory")
    digest = hashlib.sha256()
    seen: dict[str, Path] = {}
    turns = 0
    for file in files:
        try:
            raw = read_input(file)
        except OSError as exc:
            raise TraceError(f"{file}: cannot read the trace: {exc.strerror}") from None
        digest.update(file.name.encode() + b"\0" + raw)
        trace_id, n = _check_trace(file, raw)
        if trace_id in seen:
            raise TraceError(f"{file}: trace id {trace_id!r} is already used by {seen[trace_id]}")
        seen[trace_id] = file
        turns += n
    return TraceSet(path=path, sessions=len(files), turns=turns, sha256=digest.hexdigest())


def _check_trace(file: Path, raw: bytes) -> tuple[str, int]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{file}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TraceError(f"{file}: a trace file holds one JSON object, got {type(data).__name__}")
    missing = [key for key in _REQUIRED_TRACE_KEYS if key not in data]
    if missing:
        raise TraceError(f"{file}: missing key(s) {', '.join(missing)} (Weka trace format)")
    if data["hash_id_scope"] != "local":
        raise TraceError(f"{file}: hash_id_scope must be 'local', got {data['hash_id_scope']!r}")
    block = data["block_size"]
    if not isinstance(block, int) or block <= 0:
        raise TraceError(f"{file}: block_size must be a positive integer, got {block!r}")
    requests = data["requests"]
    if not isinstance(requests, list) or not requests:
        raise TraceError(f"{file}: requests must be a non-empty list of turns")
    previous_t = 0.0
    for index, turn in enumerate(requests):
        _check_turn(f"{file}: requests[{index}]", turn, block)
        if turn["t"] < previous_t:
            raise TraceError(
                f"{file}: requests[{index}]: t={turn['t']} is earlier than the turn before "
                f"({previous_t}); turns are listed in time order"
            )
        previous_t = turn["t"]
    return str(data["id"]), len(requests)


def _check_turn(where: str, turn: Any, block: int) -> None:
    if not isinstance(turn, dict):
        raise TraceError(f"{where}: a turn is a JSON object, got {type(turn).__name__}")
    if turn.get("type") not in _TURN_TYPES:
        raise TraceError(
            f"{where}: type must be 's' (streaming) or 'n' (normal), got {turn.get('type')!r}"
        )
    for key in ("in", "out"):
        value = turn.get(key)
        if not isinstance(value, int) or value < 1:
            raise TraceError(f"{where}: {key!r} must be a token count >= 1, got {value!r}")
    t = turn.get("t")
    if not isinstance(t, int | float) or isinstance(t, bool) or t < 0:
        raise TraceError(f"{where}: 't' must be seconds from session start >= 0, got {t!r}")
    hash_ids = turn.get("hash_ids", [])
    if not isinstance(hash_ids, list) or not all(isinstance(h, int) for h in hash_ids):
        raise TraceError(f"{where}: hash_ids must be a list of integers")
    most = -(-turn["in"] // block)
    if len(hash_ids) > most:
        raise TraceError(
            f"{where}: {turn['in']} input tokens fill at most {most} blocks of {block}, "
            f"got {len(hash_ids)} hash_ids"
        )
