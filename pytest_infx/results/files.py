"""Writing and reading one item's result file, whatever its kind.

A record names its item (``id``) and its kind (``agentic``, else a SPEED-Bench cell), which is
all that decides where it lives; the write is atomic, so a reader (a resumed run, a hook, the
report) never sees half a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_infx.files.atomic import atomic_write_json
from pytest_infx.results.layout import AGENTIC, Layout


def result_path(layout: Layout, record: Mapping[str, Any]) -> Path:
    item_id = record.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise ValueError(f"a result record needs its item id as 'id', got {item_id!r}")
    if record.get("kind") == AGENTIC:
        return layout.point(item_id)
    return layout.cell(item_id)


def write_result(layout: Layout, record: Mapping[str, Any]) -> Path:
    path = result_path(layout, record)
    atomic_write_json(path, record)
    return path
