"""The pictures of a sweep: measured AL against the golden curve, and AgentX throughput against
interactivity.

matplotlib is an optional extra (``pytest-infx[plots]``): it is imported only here, only when a
picture is drawn, and only through ``matplotlib.figure.Figure`` with the Agg canvas, so drawing
never selects a GUI backend or touches pyplot's global figures that a host project's own tests
may rely on.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from datetime import UTC
from typing import TYPE_CHECKING, Final

from pytest_infx.results.sweep import AgenticRecipe, AlRecipe
from pytest_infx.results.verdict import Status, Verdict

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from pytest_infx.history.earlier import Earlier
    from pytest_infx.history.trend import Trend

INSTALL_HINT: Final = "pip install 'pytest-infx[plots]'"
MODE_COLORS: Final = {"thinking_off": "#1f77b4", "thinking_on": "#ff7f0e"}
TP_COLORS: Final = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")
FAIL_COLOR: Final = "#d62728"
REUSED_COLOR: Final = "#23407a"
REUSED_LABEL: Final = "reused from an earlier run"
EARLIER_COLOR: Final = "#9a9082"
"""A warm grey: antialiased black text makes every neutral one."""
EARLIER_LABEL: Final = "earlier run (latest passing result of each point)"
DPI: Final = 100
SIZE_IN: Final = (9.0, 5.0)


def missing_reason() -> str | None:
    """Why plots cannot be drawn here (matplotlib is not importable), or None."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    except ImportError as exc:
        return f"matplotlib cannot be imported ({exc}); {INSTALL_HINT} to get the plots"
    return None


def _figure() -> tuple[Figure, Axes]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=SIZE_IN, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def al_png(recipe: AlRecipe) -> bytes:
    return _png(al_figure(recipe))


def al_figure(recipe: AlRecipe) -> Figure:
    """Per thinking mode: the golden curve (dashed) inside the band each cell was allowed (the
    tolerance plus z standard errors of the cell measured there, as the gate judged it), the
    measured AL
    with its 2-standard-error bar, a red ring on a cell out of tolerance, a red cross where
    a cell failed its checks (drawn at its golden value, or at AL 1 without one) and a dark
    blue square around a cell this run reused rather than measured. With two modes each takes
    one half of its k's slot, so equal curves do not hide each other."""
    figure, ax = _figure()
    modes = sorted({c.mode for c in recipe.cells}, key=lambda m: m != "thinking_off")
    if recipe.golden is not None:
        modes += [m for m in sorted(recipe.golden.modes) if m not in modes]
    labels = {"failed cell (no AL)", "out of tolerance", REUSED_LABEL}
    for index, mode in enumerate(modes):
        side = 0.0 if len(modes) == 1 else (-1.0 if index == 0 else 1.0)
        _al_mode(ax, recipe, mode, side, labels)
    ks = sorted({c.k for c in recipe.cells} | _golden_ks(recipe))
    if ks:
        ax.set_xticks(ks)
        ax.set_xlim(min(ks) - 0.6, max(ks) + 0.6)
    ax.set_xlabel("draft length k (num_speculative_tokens)")
    ax.set_ylabel("acceptance length (AL)")
    curve = recipe.curve_name or "no golden curve"
    ax.set_title(f"{recipe.key}\nmeasured vs golden {curve}", fontsize=11)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left")
    return figure


def _al_mode(ax: Axes, recipe: AlRecipe, mode: str, side: float, labels: set[str]) -> None:
    """One mode's golden band and measured curve; ``side`` -1/1 puts it left/right of each k
    (0: centred); ``labels`` holds the marker legend entries not yet used."""
    color = MODE_COLORS.get(mode, "#7f7f7f")
    shift = 0.07 * side
    golden = dict(recipe.golden.modes.get(mode, {})) if recipe.golden is not None else {}
    points = sorted((k, al) for k, al in golden.items() if al is not None)
    if points:
        ax.plot(
            [k + shift for k, _ in points],
            [al for _, al in points],
            "--",
            color=color,
            alpha=0.8,
            marker="_",
            markersize=12,
            label=f"{mode} golden ± {recipe.tolerance:.2f} + {recipe.z:g} SE",
        )
    measured_at = {c.k: c for c in recipe.cells if c.mode == mode and c.al is not None}
    for k, al in points:
        left, right = (k - 0.3, k + 0.3) if side == 0 else sorted((k, k + 0.3 * side))
        cell = measured_at.get(k)
        half = recipe.allowed(cell) if cell is not None else recipe.tolerance
        ax.fill_between(
            [left, right],
            al - half,
            al + half,
            color=color,
            alpha=0.18,
            linewidth=0,
        )
    cells = [c for c in recipe.cells if c.mode == mode]
    measured = [c for c in cells if c.al is not None]
    if measured:
        ax.errorbar(
            [c.k + shift for c in measured],
            [c.al or 0.0 for c in measured],
            yerr=[recipe.z * (c.standard_error or 0.0) for c in measured],
            color=color,
            marker="o",
            linewidth=1.8,
            capsize=3,
            label=f"{mode} measured",
        )
    for cell in cells:
        if cell.al is None:
            at = golden.get(cell.k) or 1.0
            label = _take(labels, "failed cell (no AL)")
            _failed_mark(ax, cell.k + shift, at, label)
            ax.annotate(
                "failed",
                (cell.k + shift, at),
                textcoords="offset points",
                xytext=(6, -12),
                color=FAIL_COLOR,
                fontsize=8,
            )
        elif cell.status is Status.DRIFT:
            label = _take(labels, "out of tolerance")
            _ring_mark(ax, cell.k + shift, cell.al, label, marker="o", size=15, color=FAIL_COLOR)
        if cell.al is not None and cell.reused is not None:
            _reused_mark(ax, cell.k + shift, cell.al, _take(labels, REUSED_LABEL))


def _failed_mark(ax: Axes, x: float, y: float, label: str | None) -> None:
    ax.plot(
        [x],
        [y],
        marker="x",
        color=FAIL_COLOR,
        markersize=12,
        markeredgewidth=2.5,
        linestyle="none",
        label=label,
    )


def _reused_mark(ax: Axes, x: float, y: float, label: str | None) -> None:
    _ring_mark(ax, x, y, label, marker="s", size=13, color=REUSED_COLOR)


def _ring_mark(
    ax: Axes, x: float, y: float, label: str | None, *, marker: str, size: float, color: str
) -> None:
    """A hollow mark drawn around a point already plotted, so the point stays visible."""
    ax.plot(
        [x],
        [y],
        marker=marker,
        markersize=size,
        markerfacecolor="none",
        markeredgecolor=color,
        markeredgewidth=2,
        linestyle="none",
        label=label,
    )


def _take(labels: set[str], label: str) -> str | None:
    """The legend label the first time it is asked for, None afterwards."""
    if label in labels:
        labels.discard(label)
        return label
    return None


def _golden_ks(recipe: AlRecipe) -> set[int]:
    if recipe.golden is None:
        return set()
    return {k for cells in recipe.golden.modes.values() for k in cells}


def agentic_png(recipe: AgenticRecipe, earlier: Mapping[str, Earlier] | None = None) -> bytes:
    """One line per TP (and variant) through its concurrencies: output tokens/s per GPU against
    tokens/s per user, each point labelled with its concurrency, failed points crossed in red,
    points this run reused rather than measured boxed in dark blue; under them, in grey, each
    arm's points as an earlier run measured them (``earlier``, by point id)."""
    figure, ax = _figure()
    failed_label = True
    labels = {REUSED_LABEL, EARLIER_LABEL}
    unplotted: list[str] = []
    known = earlier or {}
    for index, (arm, points) in enumerate(recipe.arms().items()):
        color = TP_COLORS[index % len(TP_COLORS)]
        before = sorted(
            (found for p in points if (found := known.get(p.id)) is not None),
            key=lambda e: e.interactivity,
        )
        if before:
            ax.plot(
                [e.interactivity for e in before],
                [e.throughput_per_gpu for e in before],
                marker="o",
                markerfacecolor="none",
                linestyle="--",
                color=EARLIER_COLOR,
                linewidth=1.4,
                label=_take(labels, EARLIER_LABEL),
                zorder=1,
            )
        drawn = [p for p in points if _finite(p.interactivity) and _finite(p.throughput_per_gpu)]
        unplotted += [p.id for p in points if p not in drawn]
        drawn.sort(key=lambda p: p.interactivity or 0.0)
        xs = [p.interactivity or 0.0 for p in drawn]
        ys = [p.throughput_per_gpu or 0.0 for p in drawn]
        ax.plot(xs, ys, marker="o", color=color, linewidth=1.8, label=arm)
        for point, x, y in zip(drawn, xs, ys, strict=True):
            ax.annotate(
                f"c{point.concurrency}",
                (x, y),
                textcoords="offset points",
                xytext=(5, 5),
                fontsize=8,
                color=color,
            )
            if point.verdict is not Verdict.PASS:
                _failed_mark(ax, x, y, "failed point" if failed_label else None)
                failed_label = False
            if point.reused is not None:
                _reused_mark(ax, x, y, _take(labels, REUSED_LABEL))
    ax.set_xlabel("interactivity (output tokens/s per user, 1000 / median TPOT)")
    ax.set_ylabel("throughput (output tokens/s per GPU)")
    ax.set_title(f"{recipe.key}\nthroughput vs interactivity per TP", fontsize=11)
    if unplotted:
        ax.text(
            0.01,
            0.01,
            "no TPOT, not drawn: " + ", ".join(unplotted),
            fontsize=7,
            color=FAIL_COLOR,
            transform=ax.transAxes,
        )
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return _png(figure)


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def trend_png(found: Trend) -> bytes:
    """One point's metric over runs (``infx trend``), a run that failed marked in red."""
    figure, ax = _figure()
    xs = list(range(len(found.rows)))
    ys = found.shown()
    ax.plot(xs, ys, marker="o", color=TP_COLORS[0], label=found.metric)
    failed = [(x, y) for x, y, row in zip(xs, ys, found.rows, strict=True) if not row.passed]
    if failed:
        ax.scatter(*zip(*failed, strict=True), color=FAIL_COLOR, zorder=3, label="failed")
    ax.set_title(found.item, fontsize=9)
    ax.set_ylabel(found.label)
    ax.set_xticks(xs)
    ax.set_xticklabels(
        [row.started.astimezone(UTC).strftime("%m-%d %H:%M") for row in found.rows],
        fontsize=7,
        rotation=30,
    )
    ax.set_xlabel("run (UTC start)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(figure)
