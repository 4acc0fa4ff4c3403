"""Which of a host's test files can hold a ``lint``-marked test (or one of other markers).

``pytest -m lint`` is the command people type before a pull request, so it must not import
every test module of the repository only to deselect its tests: a module is imported only when
its source can mark a test ``lint`` (``pytest.mark.lint``, ``add_marker("lint")``, ``getattr(
pytest.mark, "lint")``), or when a conftest above it can, since a conftest hook may mark any
test. The check reads the bytes, which costs far less than the import it saves and can never be
stale. ``pytest -m speedbench`` and the plan command skip modules the same way, for the
recipe markers.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from pytest_infx.files.textio import read_input


@functools.lru_cache(maxsize=8)
def _marks(names: frozenset[str]) -> re.Pattern[bytes]:
    alternatives = b"|".join(re.escape(name.encode()) for name in sorted(names))
    name = rb"(?:" + alternatives + rb")"
    quoted = rb"[\"']" + name + rb"[\"']"
    return re.compile(
        rb"mark\s*\.\s*" + name + rb"\b"
        rb"|add_marker\(\s*"
        + quoted
        + rb"|getattr\(\s*(?:pytest\s*\.\s*)?mark\s*,\s*"
        + quoted
        + rb"|Mark\(\s*"
        + quoted
    )


LINT: frozenset[str] = frozenset({"lint"})


def can_mark(path: Path, names: frozenset[str]) -> bool:
    """Whether the file's source can mark a test with one of ``names`` (an unreadable file
    counts as yes, so pytest reports it as it would)."""
    try:
        return _marks(names).search(read_input(path)) is not None
    except OSError:
        return True


def can_mark_lint(path: Path) -> bool:
    return can_mark(path, LINT)


def _conftest_marks(folder: Path, stop: Path, names: frozenset[str]) -> bool:
    while True:
        conftest = folder / "conftest.py"
        if conftest.is_file() and can_mark(conftest, names):
            return True
        if folder == stop or folder.parent == folder:
            return False
        folder = folder.parent


def skippable(path: Path, rootpath: Path, names: frozenset[str] = LINT) -> bool:
    """Whether a run selecting only ``names``-marked tests may leave this test module
    unimported: a Python file other than a conftest, which cannot mark a test with one of them
    and has no conftest above it (up to the rootdir) that can."""
    if path.suffix != ".py" or path.name == "conftest.py" or not path.is_file():
        return False
    if can_mark(path, names):
        return False
    stop = rootpath if path.is_relative_to(rootpath) else Path(path.anchor)
    return not _conftest_marks(path.parent, stop, names)
