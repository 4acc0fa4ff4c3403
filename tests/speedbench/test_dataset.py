from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.speedbench.dataset import (
    PLACEHOLDER,
    DatasetError,
    Message,
    default_dataset_path,
    load_dataset,
)


def row(qid: str, category: str = "coding", text: str = "write code") -> dict[str, Any]:
    return {
        "question_id": qid,
        "category": category,
        "messages": [{"role": "user", "content": text}],
    }


def write(tmp_path: Path, rows: list[Any], name: str = "qualitative.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_shipped_set_loads_as_coding_prompts() -> None:
    path = default_dataset_path()
    ds = load_dataset(path, category="coding", expected_rows=24)
    assert ds.category == "coding"
    assert 24 <= len(ds) <= 40
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len({p.question_id for p in ds.rows}) == len(ds)
    assert all(p.messages[0].role == "user" and p.messages[0].content for p in ds.rows)
    assert all(PLACEHOLDER not in p.messages[0].content for p in ds.rows)


def test_category_selection_and_hash(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), row("b", "math"), row("c")])
    ds = load_dataset(path, category="coding", name="sb")
    assert [p.question_id for p in ds.rows] == ["a", "c"]
    assert ds.name == "sb"
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len(load_dataset(path, category=None)) == 3


def test_hub_turns_become_a_user_message(tmp_path: Path) -> None:
    path = write(tmp_path, [{"question_id": 7, "category": "coding", "turns": ["first", "second"]}])
    (prompt,) = load_dataset(path, category="coding").rows
    assert prompt.question_id == "7"
    assert prompt.messages == (Message("user", "first"),)
    assert prompt.messages_json() == [{"role": "user", "content": "first"}]


def test_missing_file_says_how_to_prepare(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"not found.*prepare\.py --config qualitative"):
        load_dataset(tmp_path / "nope.jsonl", category="coding")


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), "", '{"question_id": "b",'])
    with pytest.raises(DatasetError, match=rf"{path.name}:3: invalid JSON"):
        load_dataset(path, category="coding")


@pytest.mark.parametrize("missing", ["question_id", "category", "messages"])
def test_missing_field_names_file_line_and_field(tmp_path: Path, missing: str) -> None:
    bad = row("b")
    del bad[missing]
    path = write(tmp_path, [row("a"), bad])
    with pytest.raises(DatasetError, match=rf"{path.name}:2: missing.*'{missing}'"):
        load_dataset(path, category="coding")


def test_bad_message_shape_is_named(tmp_path: Path) -> None:
    bad = row("b")
    bad["messages"] = [{"role": "user"}]
    path = write(tmp_path, [bad])
    with pytest.raises(DatasetError, match=r":1: .*'messages\[0\]\.content'"):
        load_dataset(path, category="coding")


def test_placeholder_rows_are_rejected_with_the_prepare_command(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), row("b", text=f"x {PLACEHOLDER} y")])
    with pytest.raises(DatasetError) as info:
        load_dataset(path, category="coding")
    message = str(info.value)
    assert f"{path.name}:2" in message
    assert "placeholder" in message
    assert "nemo_skills/dataset/speed-bench/prepare.py --config qualitative --output_dir" in message


def test_placeholders_outside_the_selection_do_not_matter(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), row("b", "math", PLACEHOLDER)])
    assert len(load_dataset(path, category="coding")) == 1


def test_empty_category_lists_what_exists(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), row("b", "math")])
    with pytest.raises(
        DatasetError, match=r"no rows in category 'writing'.*coding \(1\), math \(1\)"
    ):
        load_dataset(path, category="writing")


def test_too_few_rows_is_an_error_only_when_asked(tmp_path: Path) -> None:
    path = write(tmp_path, [row(str(i)) for i in range(3)])
    assert len(load_dataset(path, category="coding")) == 3
    assert len(load_dataset(path, category="coding", expected_rows=3)) == 3
    with pytest.raises(DatasetError, match=r"has 3 rows, expected at least 80"):
        load_dataset(path, category="coding", expected_rows=80)


def test_repeated_question_id_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), row("a")])
    with pytest.raises(DatasetError, match=r":2: question_id 'a' repeats line 1"):
        load_dataset(path, category="coding")


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_file_says_it_is_empty_and_how_to_prepare_one(tmp_path: Path, text: str) -> None:
    path = tmp_path / "qualitative.jsonl"
    path.write_text(text)
    with pytest.raises(DatasetError) as info:
        load_dataset(path, category="coding")
    message = str(info.value)
    assert message.startswith(f"{path}: the dataset file is empty")
    assert "prepare.py --config qualitative" in message


def test_a_file_that_is_not_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "qualitative.jsonl"
    path.write_bytes(json.dumps(row("a")).encode() + b"\n" + b'{"question_id": "b\xff"}\n')
    with pytest.raises(DatasetError, match=rf"^{path}:2:19: not valid UTF-8 \(byte 0xff\)"):
        load_dataset(path, category="coding")


def test_a_deeply_nested_row_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), "[" * 100_000 + "]" * 100_000])
    with pytest.raises(DatasetError, match=rf"{path.name}:2: the JSON nests too deep"):
        load_dataset(path, category="coding")


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_dataset_is_an_error_naming_it(special: str) -> None:
    with pytest.raises(DatasetError, match=rf"^{special}: .*is a character device, not a regular"):
        load_dataset(special, category="coding")


def test_a_dataset_over_the_limit_names_the_variable_that_raises_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, [row(str(n), text="x" * 1000) for n in range(1200)])
    monkeypatch.setenv("INFX_MAX_INPUT_MB", "1")
    with pytest.raises(DatasetError, match=r"larger than 1 MiB; raise \$INFX_MAX_INPUT_MB"):
        load_dataset(path, category="coding")
    monkeypatch.setenv("INFX_MAX_INPUT_MB", "2")
    assert len(load_dataset(path, category="coding")) == 1200
