"""The sweep report: one self-contained HTML file (pictures inlined as data URIs) and the PNGs.

The file is meant to be opened from a CI artifact or a results folder copied off a GPU node, so
nothing in it reaches the network and every link is relative to the report when the target
lives in the results folder. Without matplotlib the report is still written, with the tables
and a line saying how to get the plots.
"""

from __future__ import annotations

import base64
import datetime
import html
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from pytest_infx.files.atomic import atomic_write_bytes, atomic_write_text
from pytest_infx.report import plots
from pytest_infx.results.figure import figure
from pytest_infx.results.layout import Layout
from pytest_infx.results.sweep import (
    AgenticPoint,
    AgenticRecipe,
    AlCell,
    AlRecipe,
    ItemOutcome,
    Sweep,
)
from pytest_infx.results.verdict import Status, Verdict

if TYPE_CHECKING:
    from pytest_infx.history.earlier import Earlier
    from pytest_infx.history.gate import BaselineVerdict as Comparison

REUSED_PREFIX = "reused "

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1b1b;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f4}td.num{text-align:right}
.pass,.passed{background:#dff3e0}.fail,.failed,.error{background:#fbdada}.drift{background:#fde9c8}
.badge{padding:1px 6px;border-radius:3px;font-weight:600}.muted{color:#666}
.badge.reused{background:#dde6f7;color:#23407a}
.note{background:#fff7d6;border:1px solid #ecd77a;padding:6px 10px;margin:8px 0}
img{max-width:100%;border:1px solid #eee}pre{background:#f7f7f7;padding:6px;overflow:auto;
font-size:12px;max-height:320px}code{font-size:12px}td pre{white-space:pre-wrap;
word-break:break-all;max-width:900px;margin:0}
"""


@dataclass(frozen=True)
class ReportFiles:
    """What was written; ``plots_missing`` says why there are no pictures, when there are none."""

    html: Path
    pictures: tuple[Path, ...]
    plots_missing: str | None


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def href(target: Path, base: Path) -> str:
    """A link from a file in ``base`` to ``target``: relative inside ``base``, else file://."""
    target = target.absolute()
    try:
        relative = target.relative_to(base.absolute())
    except ValueError:
        return target.as_uri()
    return quote(relative.as_posix())


def _link(target: Path | None, base: Path, text: str) -> str:
    if target is None:
        return '<span class="muted">-</span>'
    return f'<a href="{_e(href(target, base))}">{_e(text)}</a>'


def _badge(status: str) -> str:
    return f'<span class="badge {_e(status)}">{_e(status)}</span>'


def _source(row: AlCell | AgenticPoint) -> str:
    """Where a row's figures come from: this run; the earlier run ``--infx-resume`` took them
    from (the reason names its result file; the row's server log is that run's); an earlier
    run that this one did not select; or, rebuilt from a folder, unknown."""
    if row.reused is not None:
        shown = row.reused.removeprefix(REUSED_PREFIX)
        return f'{_badge("reused")} <span class="muted">{_e(shown)}</span>'
    if row.ran is None:
        return '<span class="muted">-</span>'
    return "this run" if row.ran else '<span class="muted">an earlier run (not selected)</span>'


def _log_link(row: AlCell | AgenticPoint, base: Path) -> str:
    log = row.log
    if log is None or (row.reused is None and row.ran is not False):
        return _link(log, base, log.name if log else "")
    return f'{_link(log, base, log.name)} <span class="muted">(earlier run)</span>'


def _image(png: bytes | None, alt: str) -> str:
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f'<p><img alt="{_e(alt)}" src="data:image/png;base64,{data}"></p>'


def _reasons(reasons: Iterable[str]) -> str:
    items = [f"<li>{_e(r)}</li>" for r in reasons]
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _al_row(recipe: AlRecipe, cell: AlCell, base: Path) -> str:
    golden = recipe.golden_al(cell)
    delta = None if golden is None or cell.al is None else cell.al - golden
    requests = "-" if cell.total is None else f"{cell.completed}/{cell.total}"
    allowed = "-" if cell.al is None else f"{recipe.allowed(cell):.2f}"
    return (
        f'<tr class="{_e(cell.status)}"><td>{cell.k}</td><td>{_e(cell.mode)}</td>'
        f'<td class="num">{figure(cell.al)}</td><td class="num">{figure(golden)}</td>'
        f'<td class="num">{"-" if delta is None else f"{delta:+.2f}"}</td>'
        f'<td class="num">{allowed}</td><td class="num">{requests}</td>'
        f"<td>{_badge(cell.status)}{_reasons(cell.reasons)}</td><td>{_source(cell)}</td>"
        f"<td>{_link(cell.file, base, cell.id + '.json')}</td>"
        f"<td>{_log_link(cell, base)}</td></tr>"
    )


def _al_section(recipe: AlRecipe, png: bytes | None, base: Path) -> str:
    failed = sum(1 for c in recipe.cells if c.status is not Status.PASS)
    parts = [
        f'<h2 id="{_e(recipe.key)}">{_e(recipe.key)}</h2>',
        f"<p>SPEED-Bench AL, {len(recipe.cells)} cells, {failed} failed or out of tolerance; "
        f"golden curve <code>{_e(recipe.curve_name or '-')}</code>, tolerance "
        f"{recipe.tolerance:.2f} AL + {recipe.z:g} standard errors per cell.</p>",
    ]
    if recipe.golden_problem:
        parts.append(f'<p class="note">{_e(recipe.golden_problem)}</p>')
    parts.append(_image(png, f"AL of {recipe.key} against its golden curve"))
    parts.append(
        "<table><tr><th>k</th><th>thinking</th><th>AL</th><th>golden</th><th>delta</th>"
        "<th>allowed ±</th><th>requests</th><th>verdict</th><th>measured</th><th>cell</th>"
        "<th>server log</th></tr>"
        + "".join(_al_row(recipe, cell, base) for cell in recipe.cells)
        + "</table>"
    )
    return "\n".join(parts)


def _earlier_note(recipe: AgenticRecipe, earlier: Mapping[str, Earlier]) -> str:
    found = [earlier[p.id] for p in recipe.points if p.id in earlier]
    if not found:
        return ""
    runs = sorted({e.run for e in found})
    shown = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
    return (
        f'<p class="muted">Grey, dashed: {len(found)} of these points as an earlier run'
        f" measured them (each point's latest passing result in the results history; run"
        f"{'s' if len(runs) > 1 else ''} {_e(shown)}).</p>"
    )


def _agentic_section(
    recipe: AgenticRecipe,
    png: bytes | None,
    base: Path,
    *,
    title: str = "AgentX",
    earlier: Mapping[str, Earlier] | None = None,
) -> str:
    """An AgentX recipe's points, or (``title`` fixed-seq-len) a fixed-seq-len recipe's, with
    their ISL/OSL."""
    rows = []
    lengths = any(p.lengths for p in recipe.points)
    power = any(p.power_w is not None for p in recipe.points)
    for tp, points in recipe.by_tp().items():
        for p in points:
            valid = "" if p.submission_valid is not False else " (not valid for submission)"
            shape = f"<td>{_e(p.lengths)}</td>" if lengths else ""
            energy = (
                f'<td class="num">{figure(p.power_w, 0)}</td>'
                f'<td class="num">{figure(p.tokens_per_joule, 2)}</td>'
                if power
                else ""
            )
            rows.append(
                f'<tr class="{_e(p.verdict)}"><td>{tp}</td>{shape}<td>{p.concurrency}</td>'
                f'<td class="num">{figure(p.throughput_per_gpu, 1)}</td>'
                f'<td class="num">{figure(p.interactivity, 1)}</td>'
                f'<td class="num">{figure(p.ttft_p50_ms, 1)}</td>{energy}'
                f'<td class="num">{p.failed}/{p.total}</td>'
                f"<td>{_badge(p.verdict)}{_e(valid)}{_reasons(p.reasons)}</td>"
                f"<td>{_source(p)}</td>"
                f"<td>{_link(p.file, base, p.id + '.json')}</td>"
                f"<td>{_log_link(p, base)}</td></tr>"
            )
    return "\n".join(
        [
            f'<h2 id="{_e(recipe.key)}">{_e(recipe.key)}</h2>',
            f"<p>{_e(title)}, {len(recipe.points)} points.</p>",
            _image(png, f"throughput against interactivity of {recipe.key}"),
            _earlier_note(recipe, earlier or {}) if png else "",
            "<table><tr><th>TP</th>"
            + ("<th>ISL/OSL</th>" if lengths else "")
            + "<th>concurrency</th><th>tok/s/GPU</th><th>tok/s/user</th>"
            "<th>TTFT p50 ms</th>"
            + ("<th>GPU W</th><th>tok/J</th>" if power else "")
            + "<th>failed requests</th><th>verdict</th><th>measured</th>"
            "<th>point</th><th>server log</th></tr>" + "".join(rows) + "</table>",
        ]
    )


def _outcomes(outcomes: list[ItemOutcome]) -> str:
    if not outcomes:
        return ""
    rows = "".join(
        f'<tr class="{_e(o.outcome)}"><td><code>{_e(o.id)}</code></td>'
        f"<td>{_badge(o.outcome)}</td><td><pre>{_e(o.reason)}</pre></td></tr>"
        for o in outcomes
    )
    return (
        '<h2 id="no-result-file">Items without a result file</h2>'
        "<p>These items ended before writing a result (a server that did not start, a failed "
        "preflight check, an interrupted run).</p>"
        f"<table><tr><th>item</th><th>outcome</th><th>why</th></tr>{rows}</table>"
    )


def _logs(sweep: Sweep, base: Path) -> str:
    if not sweep.logs:
        return ""
    parts = ['<h2 id="logs">Server logs</h2>']
    for log in sweep.logs:
        stopped = " (then stopped by the launcher)" if log.stopped else ""
        parts.append(
            f"<details><summary>{_link(log.path, base, log.path.name)} "
            f'<span class="muted">({log.size:,} bytes) {_e(log.last[:160])}{stopped}</span>'
            "</summary>"
            f"<pre>{_e(chr(10).join(log.tail))}</pre></details>"
        )
    return "\n".join(parts)


def render(
    sweep: Sweep,
    base: Path,
    *,
    al_pngs: dict[str, bytes],
    agentic_pngs: dict[str, bytes],
    plots_missing: str | None,
    baseline: Sequence[Comparison] = (),
    fixed_pngs: dict[str, bytes] | None = None,
    earlier: Mapping[str, Earlier] | None = None,
) -> str:
    """The whole page; ``base`` is the folder the page is written to (links are relative)."""
    cells = [c for r in sweep.al for c in r.cells]
    points = [p for r in sweep.agentic for p in r.points]
    fixed = [p for r in sweep.fixed for p in r.points]
    bad_cells = sum(1 for c in cells if c.status is not Status.PASS)
    bad_points = sum(1 for p in points if p.verdict is not Verdict.PASS)
    missing = sweep.without_file()
    reused = sum(1 for c in cells if c.reused) + sum(1 for p in (*points, *fixed) if p.reused)
    reused_note = f", {reused} reused from an earlier run (--infx-resume)" if reused else ""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    keys = [r.key for r in sweep.al] + [r.key for r in (*sweep.agentic, *sweep.fixed)]
    toc = [f'<a href="#{_e(key)}">{_e(key)}</a>' for key in keys]
    body = [
        "<h1>pytest-infx sweep report</h1>",
        f'<p class="muted">{_e(stamp)}; results folder <code>{_e(sweep.results)}</code></p>',
        f"<p>{len(cells)} SPEED-Bench cells ({bad_cells} failed or out of tolerance), "
        f"{len(points)} AgentX points ({bad_points} failed), "
        f"{len(fixed)} fixed-seq-len points "
        f"({sum(1 for p in fixed if p.verdict is not Verdict.PASS)} failed), "
        f"{len(missing)} items without a result file{reused_note}.</p>",
    ]
    rows: list[AlCell | AgenticPoint] = [*cells, *points, *fixed]
    earlier_rows = sum(1 for row in rows if row.ran is False and row.reused is None)
    if earlier_rows:
        body.append(
            f"<p>{len(rows) - earlier_rows} results from this run; {earlier_rows} from earlier "
            "runs that left them in this folder (their measured column says so).</p>"
        )
    if toc:
        body.append("<p>" + " · ".join(toc) + "</p>")
    if plots_missing:
        body.append(f'<p class="note">No plots: {_e(plots_missing)}.</p>')
    body += [f'<p class="note">{_e(problem)}</p>' for problem in sweep.problems]
    body += [_al_section(r, al_pngs.get(r.key), base) for r in sweep.al]
    body += [
        _agentic_section(r, agentic_pngs.get(r.key), base, earlier=earlier) for r in sweep.agentic
    ]
    body += [
        _agentic_section(
            r, (fixed_pngs or {}).get(r.key), base, title="fixed-seq-len", earlier=earlier
        )
        for r in sweep.fixed
    ]
    if baseline:
        from pytest_infx.history.table import html_section

        body.append(html_section(baseline))
    body.append(_outcomes(missing))
    body.append(_logs(sweep, base))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>pytest-infx sweep report</title>"
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def write_report(
    sweep: Sweep,
    *,
    baseline: Sequence[Comparison] = (),
    earlier: Mapping[str, Earlier] | None = None,
) -> ReportFiles:
    """Draw the pictures (when matplotlib is there) and write them and the page, atomically;
    ``earlier`` holds, by point id, what an earlier run measured, drawn under this run's
    points."""
    results = sweep.results
    layout = Layout(results)
    plots_missing = plots.missing_reason()
    al_pngs: dict[str, bytes] = {}
    agentic_pngs: dict[str, bytes] = {}
    fixed_pngs: dict[str, bytes] = {}
    written: list[Path] = []
    if plots_missing is None:
        for recipe in sweep.al:
            al_pngs[recipe.key] = plots.al_png(recipe)
            written.append(layout.plot(recipe.key, "al"))
            atomic_write_bytes(written[-1], al_pngs[recipe.key])
        for agentic in sweep.agentic:
            agentic_pngs[agentic.key] = plots.agentic_png(agentic, earlier)
            written.append(layout.plot(agentic.key, "agentic"))
            atomic_write_bytes(written[-1], agentic_pngs[agentic.key])
        for fixed in sweep.fixed:
            fixed_pngs[fixed.key] = plots.agentic_png(fixed, earlier)
            written.append(layout.plot(fixed.key, "fixed-seq-len"))
            atomic_write_bytes(written[-1], fixed_pngs[fixed.key])
    page = layout.report
    text = render(
        sweep,
        results,
        al_pngs=al_pngs,
        agentic_pngs=agentic_pngs,
        plots_missing=plots_missing,
        baseline=baseline,
        fixed_pngs=fixed_pngs,
        earlier=earlier,
    )
    atomic_write_text(page, text)
    return ReportFiles(page, tuple(written), plots_missing)


def markdown_links(files: ReportFiles, base: Path) -> str:
    """The step summary's pointer to the report, relative to ``base`` (where the markdown file
    lives); GitHub's own summary page cannot show local files, so the paths are also spelled out
    for finding them in the run's artifacts."""
    lines = ["### Sweep report", ""]
    rel = os.path.relpath(files.html, base)
    lines.append(f"- [{rel}]({quote(Path(rel).as_posix())}): tables, verdicts, cells and logs")
    for picture in files.pictures:
        rel = os.path.relpath(picture, base)
        lines.append(f"- [{rel}]({quote(Path(rel).as_posix())})")
    if files.plots_missing:
        lines.append(f"- no plots: {files.plots_missing}")
    return "\n".join(lines) + "\n"
