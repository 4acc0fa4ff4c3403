"""Writing one item's result file, whatever its kind.

A record's kind decides where it lives, its item id the file name; the write is atomic, so a
reader (a resumed run, a hook, the report) never sees half a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.results.layout import AGENTIC, Layout

if TYPE_CHECKING:
    from pytest_infx.results.records import Record


def result_path(layout: Layout, record: Record) -> Path:
    if record.kind == AGENTIC:
        return layout.point(record.id)
    if record.kind == "fixed_seq_len":
        return layout.fixed_point(record.id)
    return layout.cell(record.id)


def write_result(layout: Layout, record: Record) -> Path:
    path = result_path(layout, record)
    atomic_write_json(path, record.as_json())
    return path
