from pathlib import Path

import pytest

from pytest_infx.textio import NotUtf8Error, read_utf8


def test_utf8_text_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("key: café\n", encoding="utf-8")
    assert read_utf8(path) == "key: café\n"


def test_a_bad_byte_is_named_with_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(b"key: a\nmodel: caf\xe9\n")
    with pytest.raises(NotUtf8Error) as info:
        read_utf8(path)
    assert (info.value.line, info.value.column, info.value.byte) == (2, 11, 0xE9)
    assert str(info.value) == f"{path}:2:11: not valid UTF-8 (byte 0xe9); save the file as UTF-8"
