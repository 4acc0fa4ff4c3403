import os
from pathlib import Path

import pytest

from pytest_infx.files.textio import LIMIT_VAR, NotUtf8Error, input_limit, read_utf8


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


@pytest.mark.parametrize(
    ("special", "kind"),
    [("/dev/zero", "a character device"), ("/dev/urandom", "a character device")],
)
def test_a_device_is_refused_without_reading_it(special: str, kind: str) -> None:
    with pytest.raises(OSError) as info:
        read_utf8(Path(special))
    assert str(info.value) == f"{special}: is {kind}, not a regular file; give a file"


def test_a_pipe_or_a_folder_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="is a pipe, not a regular file"):
        read_utf8(fifo)
    with pytest.raises(OSError, match="is a folder, not a regular file"):
        read_utf8(tmp_path)


def test_a_file_over_the_limit_is_refused_until_the_user_raises_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("x" * (2 << 20))
    monkeypatch.setenv(LIMIT_VAR, "1")
    with pytest.raises(OSError, match=rf"is larger than 1 MiB; raise \${LIMIT_VAR}"):
        read_utf8(path)
    monkeypatch.setenv(LIMIT_VAR, "3")
    assert len(read_utf8(path)) == 2 << 20
    monkeypatch.setenv(LIMIT_VAR, "lots")
    with pytest.raises(OSError, match=rf"\${LIMIT_VAR}: 'lots' is not a size"):
        read_utf8(path)


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-inf"])
def test_an_input_limit_that_is_not_a_finite_size_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(LIMIT_VAR, value)
    with pytest.raises(OSError) as info:
        input_limit()
    assert str(info.value) == (
        f"${LIMIT_VAR}: {value!r} is not a size; give a positive number of MiB"
    )
