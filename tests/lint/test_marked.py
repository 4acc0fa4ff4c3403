"""``pytest -m lint`` imports only the host's test modules that can hold a lint-marked test."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.lint.marked import can_mark_lint


@pytest.mark.parametrize(
    ("source", "marks"),
    [
        (b"@pytest.mark.lint\ndef test_x(): ...\n", True),
        (b"pytestmark = [pytest.mark . lint]\n", True),
        (b"item.add_marker('lint')\n", True),
        (b'getattr(pytest.mark, "lint")\n', True),
        (b"from pytest_infx.lint import items\nrun('-m', 'lint')\n", False),
        (b"@pytest.mark.linting\ndef test_x(): ...\n", False),
    ],
)
def test_which_sources_can_mark_lint(tmp_path: Path, source: bytes, marks: bool) -> None:
    path = tmp_path / "test_x.py"
    path.write_bytes(source)
    assert can_mark_lint(path) is marks
