from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_infx.lint.findings import Finding, Reporter, quote_lines


def test_render_reads_like_path_line_entry_message_hint() -> None:
    finding = Finding(
        "changelog-pr-link",
        "perf-changelog.yaml",
        812,
        771,
        "pr-link 'TBD' is not accepted for a new entry.",
        "Use 'XXX'.",
    )
    assert finding.render() == (
        "perf-changelog.yaml:812 (entry 772): pr-link 'TBD' is not accepted for a new entry."
        " Use 'XXX'."
    )


def test_a_reporter_gives_its_rule_and_path_to_every_finding() -> None:
    report = Reporter("golden-header", "golden/a.yaml")
    assert report("line 1 is wrong.", "Fix it.", 1) == Finding(
        "golden-header", "golden/a.yaml", 1, None, "line 1 is wrong.", "Fix it."
    )
    assert report("no line.", "").line is None


def test_render_without_line_or_entry_and_with_excerpt() -> None:
    lines = tuple(f"# line {n}" for n in range(10))
    finding = Finding("comments-header", "a.sh", None, None, "header.", "", quote_lines(lines, 2))
    text = finding.render().splitlines()
    assert text[0] == "a.sh: header."
    assert text[1] == "     2 | # line 0"
    assert text[-1] == "    ... (4 more lines)"


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (os.mkfifo, "is a pipe, not a regular file; give a file"),
        (
            lambda p: p.symlink_to("/dev/zero"),
            "is a character device, not a regular file; give a file",
        ),
        (lambda p: p.mkdir(), "is a folder, not a regular file; give a file"),
        (lambda p: p.symlink_to(p.name), "is a symbolic link loop; point the link at a file"),
    ],
    ids=["pipe", "dev-zero", "folder", "link-loop"],
)
def test_a_changelog_that_is_not_a_file_is_one_finding_per_rule_never_a_hang(
    tmp_path: Path, make: Callable[[Path], object], problem: str
) -> None:
    make(tmp_path / "perf-changelog.yaml")
    code = "from pytest_infx.cli import main; raise SystemExit(main(['lint', '--root', '.']))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    shown = [line for line in done.stdout.splitlines() if "perf-changelog.yaml" in line]
    assert shown and all(line == f"  perf-changelog.yaml: {problem}" for line in shown), shown
    assert "FAIL changelog-schema" in done.stdout
