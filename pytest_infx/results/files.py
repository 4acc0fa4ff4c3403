"""Writing one item's result file, whatever its kind.

A record's kind decides where it lives, its item id the file name; the write is atomic, so a
reader (a resumed run, a hook, the report) never sees half a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.files.atomic import atomic_write_json

if TYPE_CHECKING:
    from pytest_infx.results.kind import Kinds
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.records import Record


def result_path(layout: Layout, record: Record, kinds: Kinds) -> Path:
    return kinds.of(record).result_path(layout, record.id)


def write_result(layout: Layout, record: Record, kinds: Kinds) -> Path:
    path = result_path(layout, record, kinds)
    atomic_write_json(path, record.as_json())
    return path
