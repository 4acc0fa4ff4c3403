"""The documentation holds together: the README keeps the quickstart and links the reference in
``docs/``, every relative link in them reaches a file and every ``#anchor`` a heading of its page
(as GitHub renders it), and CI runs the test command the quickstart gives."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_LINES = 250
"""The README is the quickstart and a map; the reference grows in ``docs/``, not here."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, where a ``#`` or ``[x](y)`` is code."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = _CODE_SPAN.sub(lambda span: span[0].strip("`"), heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated heading gets GitHub's ``-1``, ``-2`` suffixes."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(text):
        heading = _HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading[2])
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link in prose, its text wrapped over lines or not;
    a code span is text, so a link's text may be one (``[`infx.yml`](infx.yml)``)."""
    kept = dict(prose_lines(text))
    prose = "\n".join(kept.get(number, "") for number in range(1, len(text.splitlines()) + 1))
    return [
        (prose.count("\n", 0, found.start()) + 1, found[1])
        for found in _LINK.finditer(prose)
        if not _inside_code_span(prose, found.start())
    ]


def _inside_code_span(prose: str, at: int) -> bool:
    line_start = prose.rfind("\n", 0, at) + 1
    return prose.count("`", line_start, at) % 2 == 1


def broken_links(page: Path) -> list[str]:
    """``page:line: target (why)`` for each relative link that reaches no file or no heading."""
    broken: list[str] = []
    for number, target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        where = f"{page.name}:{number}: {target}"
        if not file.exists():
            broken.append(f"{where} (no file {path})")
        elif anchor and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{where} (no heading #{anchor} in {file.name})")
    return broken


def test_every_relative_link_reaches_a_file_and_every_anchor_a_heading() -> None:
    broken = [problem for page in pages() for problem in broken_links(page)]
    assert broken == [], "fix the link, or the heading it names:\n" + "\n".join(broken)


def test_the_readme_links_every_docs_page() -> None:
    linked = {
        (README.parent / target.partition("#")[0]).resolve()
        for _, target in links(README.read_text(encoding="utf-8"))
    }
    unlinked = [page.name for page in sorted(DOCS.glob("*.md")) if page.resolve() not in linked]
    assert unlinked == [], f"add these pages to the README's Documentation list: {unlinked}"


def test_the_readme_stays_a_quickstart_and_a_map() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines < README_LINES, f"README.md has {lines} lines: move reference text into docs/"


def test_ci_runs_the_readmes_test_command() -> None:
    quickstart = README.read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    command = quickstart.split("# the tests\n", 1)[1].splitlines()[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == command


def test_slugs_are_githubs() -> None:
    assert slug("In your repository's test suite") == "in-your-repositorys-test-suite"
    assert slug("SPEED-Bench cells") == "speed-bench-cells"
    assert slug("The `infx lint` command") == "the-infx-lint-command"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_a_broken_link_and_a_missing_anchor_are_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Title\n\n## Some part\n")
    page = tmp_path / "a.md"
    page.write_text(
        "# A\n\n[ok](b.md#some-part) [self](#a) [web](https://example.com/x)\n"
        "[gone](c.md) [no heading](b.md#other) `[span](e.md)` [wrapped\ntext](f.md)\n"
        "```\n[code](d.md)\n```\n"
    )
    assert broken_links(page) == [
        "a.md:4: c.md (no file c.md)",
        "a.md:4: b.md#other (no heading #other in b.md)",
        "a.md:4: f.md (no file f.md)",
    ]
