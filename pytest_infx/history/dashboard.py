"""The history as one page a performance engineer works from: filters, a pareto chart per
config and sequence length, two runs (or two branches) compared point by point, and each
config's trends on dated axes.

The page is static: the rows are embedded as JSON and drawn in the browser by Chart.js, which
is inlined from package data (``assets/README.txt`` names its versions), so the page opens
from a CI artifact or a file share with nothing to fetch. Only the latest runs of each branch
are embedded by default: a history of hundreds of runs then stays a page of a few hundred
kilobytes whose charts can still be read.
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pytest_infx.baseline_tolerance import METRICS, TABLE_METRICS
from pytest_infx.history.store import Stored

ASSETS: Final = Path(__file__).parent / "assets"
LIBRARIES: Final = ("chart.umd.min.js", "chartjs-adapter-date-fns.bundle.min.js")
DEFAULT_LATEST: Final = 20
"""Runs of each branch embedded by default: enough for a trend to show drift, few enough that
a pareto chart and the run pickers stay readable."""
X_METRIC: Final = "median_intvty"
Y_METRICS: Final = ("tput_per_gpu", "output_tput_per_gpu")
EMBEDDED: Final = tuple(dict.fromkeys((*Y_METRICS, X_METRIC, *TABLE_METRICS)))
"""The figures the page can show; the rest of a row's figures would only grow the page."""
POINT_COLUMNS: Final = (
    "run",
    "group",
    "engine",
    "tp",
    "ep",
    "conc",
    "cell",
    "item",
    "verdict",
    "reason",
    "metrics",
)
_GROUP_FIELDS: Final = ("model", "hardware", "framework", "precision", "spec_method", "kind")
_SOURCE_MAP: Final = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)


@dataclass(frozen=True)
class Group:
    """What one pareto chart holds: a served model on one GPU type at one sequence length,
    across TP sizes and engine versions, which each point is labelled with."""

    model: str
    hardware: str
    framework: str
    precision: str
    spec_method: str
    kind: str
    isl: int
    osl: int

    @property
    def sequence(self) -> str:
        """InferenceX's name of the sequence lengths (``1k/1k``, ``8k/1k``); a kind without
        them is named by its kind."""
        if not self.isl and not self.osl:
            return self.kind
        return f"{_tokens(self.isl)}/{_tokens(self.osl)}"

    @property
    def label(self) -> str:
        spec = "" if self.spec_method in ("", "none") else f" spec-{self.spec_method}"
        return (
            f"{self.model} {self.precision} {self.hardware} {self.framework}{spec} {self.sequence}"
        )


def _tokens(count: int) -> str:
    return f"{count // 1024}k" if count and count % 1024 == 0 else str(count)


def group_of(row: Stored) -> Group:
    c = row.config
    return Group(
        model=str(c.get("model_prefix", "")),
        hardware=str(c.get("hardware", "")),
        framework=str(c.get("framework", "")),
        precision=str(c.get("precision", "")),
        spec_method=str(c.get("spec_method", "")),
        kind=row.kind,
        isl=row.isl,
        osl=row.osl,
    )


def latest_runs(rows: Sequence[Stored], latest: int) -> set[str]:
    """The labels of the ``latest`` newest runs of each branch (every run when 0)."""
    started: dict[str, tuple[datetime, str]] = {}
    for row in rows:
        started.setdefault(row.run_label, (row.started, row.branch))
    by_branch: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
    for label, (moment, branch) in started.items():
        by_branch[branch].append((moment, label))
    kept: set[str] = set()
    for members in by_branch.values():
        members.sort()
        kept.update(label for _, label in (members[-latest:] if latest > 0 else members))
    return kept


def verdict_of(row: Stored) -> tuple[str, str | None]:
    """The row's final verdict and its reason. A store that keeps the gate's verdict apart from
    the point's own status has ``verdict`` and ``reason`` on its rows; one that does not has
    only the status."""
    verdict = getattr(row, "verdict", None) or row.status
    reason = getattr(row, "reason", None)
    return str(verdict), (str(reason) if reason else None)


def _count(config: Mapping[str, object], name: str) -> int:
    value = config.get(name)
    return value if isinstance(value, int) else 1


def _figure(value: float) -> float:
    return float(f"{value:.5g}")


def payload(
    rows: Sequence[Stored], *, source: str, latest: int = DEFAULT_LATEST, made: datetime
) -> dict[str, Any]:
    """What the page embeds: the runs, the chart groups and one array per point (its columns
    named once, in ``columns``, its figures in the order of ``metrics``), for the given rows of
    every verdict, oldest run first."""
    kept = latest_runs(rows, latest)
    shown = [row for row in rows if row.run_label in kept]
    names = [name for name in EMBEDDED if any(name in row.metrics for row in shown)]
    run_index: dict[str, int] = {}
    run_list: list[dict[str, object]] = []
    group_index: dict[Group, int] = {}
    points: list[list[object]] = []
    for row in shown:
        if row.run_label not in run_index:
            run_index[row.run_label] = len(run_list)
            run_list.append(
                {
                    "label": row.run_label,
                    "branch": row.branch,
                    "commit": row.commit[:12],
                    "started": row.started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            )
        group = group_of(row)
        group_index.setdefault(group, len(group_index))
        verdict, reason = verdict_of(row)
        c = row.config
        points.append(
            [
                run_index[row.run_label],
                group_index[group],
                str(c.get("engine_version", "")),
                _count(c, "tp"),
                _count(c, "ep"),
                row.conc,
                row.cell,
                row.item,
                verdict,
                reason,
                [_figure(row.metrics[name]) if name in row.metrics else None for name in names],
            ]
        )
    groups = [
        {
            "label": group.label,
            **{name: getattr(group, name) for name in _GROUP_FIELDS},
            "seq": group.sequence,
        }
        for group in group_index
    ]
    return {
        "source": source,
        "made": made.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "latest": latest,
        "runs_stored": len({row.run_label for row in rows}),
        "x_metric": X_METRIC,
        "y_metrics": list(Y_METRICS),
        "metrics": {
            name: {
                "unit": METRICS[name].unit,
                "scale": METRICS[name].scale,
                "higher": METRICS[name].higher_is_better,
            }
            for name in names
        },
        "runs": run_list,
        "groups": groups,
        "columns": list(POINT_COLUMNS),
        "points": points,
    }


def _library(name: str) -> str:
    return _SOURCE_MAP.sub("", (ASSETS / name).read_text(encoding="utf-8"))


def _json_in_script(data: Mapping[str, object]) -> str:
    """JSON that a ``<script>`` element cannot be closed by: an item or branch name holding
    ``</script>`` would otherwise end the data early."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(
    rows: Sequence[Stored],
    *,
    source: str,
    latest: int = DEFAULT_LATEST,
    made: datetime | None = None,
) -> str:
    """The whole page for the rows given (every verdict, oldest run first)."""
    data = payload(rows, source=source, latest=latest, made=made or datetime.now(UTC))
    scripts = "".join(f"<script>{_library(name)}</script>\n" for name in LIBRARIES)
    style = (ASSETS / "dashboard.css").read_text(encoding="utf-8")
    app = (ASSETS / "dashboard.js").read_text(encoding="utf-8")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pytest-infx results history</title><style>{style}</style></head><body>\n"
        f"<h1>pytest-infx results history</h1>\n"
        f'<p class="muted" id="about">{html.escape(source)}</p>\n'
        '<div id="app"></div>\n'
        f'<script type="application/json" id="infx-data">{_json_in_script(data)}</script>\n'
        f"{scripts}<script>{app}</script>\n</body></html>\n"
    )
