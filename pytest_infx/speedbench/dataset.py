"""SPEED-Bench prompt sets: load a prepared JSONL file, select a category, pin its hash.

The hub copy of SPEED-Bench holds placeholder rows for prompts whose licence forbids
redistribution; a run over those measures acceptance on a constant string, so they are rejected
with the command that rebuilds the real rows.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_infx.files.textio import NotUtf8Error, decode_utf8, read_input

PLACEHOLDER = "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH"
PREPARE_HINT = (
    "prepare the real rows with NeMo-Skills: python nemo_skills/dataset/speed-bench/prepare.py "
    "--config qualitative --output_dir DIR, then point at DIR/qualitative.jsonl"
)


class DatasetError(ValueError):
    """A prompt file that cannot be used; the message names the file, the line and the fix."""


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    content: str

    def as_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class Prompt:
    question_id: str
    category: str
    messages: tuple[Message, ...]

    def messages_json(self) -> list[dict[str, str]]:
        """The OpenAI chat `messages` value, sent as is so the server renders the template."""
        return [m.as_json() for m in self.messages]


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    path: Path
    category: str | None
    sha256: str
    rows: tuple[Prompt, ...]

    def __len__(self) -> int:
        return len(self.rows)


def default_dataset_path() -> Path:
    """The small original coding set shipped with the plugin, for runs without SPEED-Bench data."""
    return Path(__file__).resolve().parent.parent / "data" / "speedbench" / "qualitative.jsonl"


def load_dataset(
    path: Path | str,
    *,
    category: str | None,
    expected_rows: int | None = None,
    name: str | None = None,
) -> Dataset:
    """Load `path` and keep the rows of `category` (all rows when None).

    `expected_rows` is a floor, not an exact count: SPEED-Bench has 80 rows per category and a
    shorter selection means a partial preparation, which would silently shift the AL.
    """
    file = Path(path)
    try:
        raw = read_input(file)
    except FileNotFoundError:
        raise DatasetError(f"{file}: dataset file not found; {PREPARE_HINT}") from None
    except OSError as exc:
        raise DatasetError(f"{file}: cannot read the dataset file: {exc.strerror}") from None
    try:
        text = decode_utf8(file, raw)
    except NotUtf8Error as exc:
        raise DatasetError(f"{exc}; {PREPARE_HINT}") from None
    if not text.strip():
        raise DatasetError(
            f"{file}: the dataset file is empty (no prompt rows, one JSON object per line); "
            f"{PREPARE_HINT}"
        )

    rows: list[Prompt] = []
    categories: dict[str, int] = {}
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        prompt = _parse_row(file, lineno, line)
        categories[prompt.category] = categories.get(prompt.category, 0) + 1
        if category is not None and prompt.category != category:
            continue
        _reject_placeholder(file, lineno, prompt)
        if prompt.question_id in seen:
            raise DatasetError(
                f"{file}:{lineno}: question_id {prompt.question_id!r} repeats line "
                f"{seen[prompt.question_id]}; each prompt must appear once"
            )
        seen[prompt.question_id] = lineno
        rows.append(prompt)

    if not rows:
        found = ", ".join(f"{c} ({n})" for c, n in sorted(categories.items())) or "none"
        what = f"no rows in category {category!r}" if category is not None else "no rows"
        raise DatasetError(f"{file}: {what}; categories in the file: {found}")
    if expected_rows is not None and len(rows) < expected_rows:
        raise DatasetError(
            f"{file}: category {category!r} has {len(rows)} rows, expected at least "
            f"{expected_rows}; the file looks partially prepared ({PREPARE_HINT})"
        )
    return Dataset(
        name=name if name is not None else file.stem,
        path=file,
        category=category,
        sha256=hashlib.sha256(raw).hexdigest(),
        rows=tuple(rows),
    )


def _parse_row(file: Path, lineno: int, line: str) -> Prompt:
    where = f"{file}:{lineno}"
    try:
        obj: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise DatasetError(f"{where}: the JSON nests too deep to read") from None
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(obj).__name__}")

    qid = obj.get("question_id")
    if isinstance(qid, bool) or not isinstance(qid, str | int) or str(qid) == "":
        raise DatasetError(f"{where}: missing or invalid field 'question_id' (a non-empty string)")
    cat = obj.get("category")
    if not isinstance(cat, str) or not cat:
        raise DatasetError(f"{where}: missing or invalid field 'category' (a non-empty string)")

    if "messages" in obj:
        messages = _parse_messages(where, obj["messages"])
    elif "turns" in obj:
        messages = _parse_turns(where, obj["turns"])
    else:
        raise DatasetError(
            f"{where}: missing field 'messages' (a list of {{role, content}}) or 'turns'"
        )
    return Prompt(question_id=str(qid), category=cat, messages=messages)


def _parse_messages(where: str, value: object) -> tuple[Message, ...]:
    if not isinstance(value, list) or not value:
        raise DatasetError(f"{where}: field 'messages' must be a non-empty list")
    out: list[Message] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise DatasetError(f"{where}: field 'messages[{i}]' must be an object")
        role, content = item.get("role"), item.get("content")
        if not isinstance(role, str) or not role:
            raise DatasetError(f"{where}: missing or invalid field 'messages[{i}].role'")
        if not isinstance(content, str):
            raise DatasetError(f"{where}: missing or invalid field 'messages[{i}].content'")
        out.append(Message(role=role, content=content))
    return tuple(out)


def _parse_turns(where: str, value: object) -> tuple[Message, ...]:
    """The hub's `turns` layout; like `vllm bench` and SGLang, only the first turn is sent."""
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise DatasetError(f"{where}: field 'turns' must be a non-empty list of strings")
    return (Message(role="user", content=value[0]),)


def _reject_placeholder(file: Path, lineno: int, prompt: Prompt) -> None:
    if any(PLACEHOLDER in m.content for m in prompt.messages):
        raise DatasetError(
            f"{file}:{lineno}: question_id {prompt.question_id!r} is a placeholder row "
            f"('{PLACEHOLDER}'); the hub copy does not hold these prompts; {PREPARE_HINT}"
        )
