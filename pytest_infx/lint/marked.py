"""Which of a host's test files can hold a ``lint``-marked test.

``pytest -m lint`` is the command people type before a pull request, so it must not import
every test module of the repository only to deselect its tests: a module is imported only when
its source can mark a test ``lint`` (``pytest.mark.lint``, ``add_marker("lint")``, ``getattr(
pytest.mark, "lint")``), or when a conftest above it can, since a conftest hook may mark any
test. The check reads the bytes, which costs far less than the import it saves and can never be
stale.
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_infx.files.textio import read_input

_MARKS = re.compile(
    rb"mark\s*\.\s*lint\b"
    rb"|add_marker\(\s*[\"']lint[\"']"
    rb"|getattr\(\s*(?:pytest\s*\.\s*)?mark\s*,\s*[\"']lint[\"']"
    rb"|Mark\(\s*[\"']lint[\"']"
)


def can_mark_lint(path: Path) -> bool:
    """Whether the file's source can mark a test ``lint`` (an unreadable file counts as yes,
    so pytest reports it as it would)."""
    try:
        return _MARKS.search(read_input(path)) is not None
    except OSError:
        return True


def _conftest_marks(folder: Path, stop: Path) -> bool:
    while True:
        conftest = folder / "conftest.py"
        if conftest.is_file() and can_mark_lint(conftest):
            return True
        if folder == stop or folder.parent == folder:
            return False
        folder = folder.parent


def skippable(path: Path, rootpath: Path) -> bool:
    """Whether ``pytest -m lint`` may leave this test module unimported: a Python file other
    than a conftest, which cannot mark a test ``lint`` and has no conftest above it (up to
    the rootdir) that can."""
    if path.suffix != ".py" or path.name == "conftest.py" or not path.is_file():
        return False
    if can_mark_lint(path):
        return False
    stop = rootpath if path.is_relative_to(rootpath) else Path(path.anchor)
    return not _conftest_marks(path.parent, stop)
