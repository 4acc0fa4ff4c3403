"""The dashboard page: what it embeds, and (marked ``engine``: it installs Debian's Chromium on
first use) what a user gets from it in a real headless browser: filters, two runs picked and
their delta table read back, the charts' point labels and dated axes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from history.debian import ensure
from history.samples import CONFIG, row, stamp
from pytest_infx.history.dashboard import latest_runs, page, payload
from pytest_infx.history.store import PointRow, Store, Stored
from pytest_infx.results.verdict import Verdict

CHROMIUM = "/usr/bin/chromium"
CONCURRENCIES = (4, 16)
MADE = datetime(2026, 12, 1, tzinfo=UTC)
RUNS = (
    ("main-1", "main", 0, 1.0),
    ("main-2", "main", 1, 1.0),
    ("main-3", "main", 2, 1.05),
    ("pr-1", "pr", 3, 0.9),
)
"""Three nightly runs of main, the last 5 % faster, and a pull request's run 10 % slower than
the first two, whose TP2 8k/1k c16 point failed."""
REASON = "tput_per_gpu -55.0 % past -5 % and outside the baseline's spread"


def _point(model: str, tp: int, isl: int, conc: int, factor: float, failed: bool) -> PointRow:
    metrics = {
        "tput_per_gpu": 100.0 * tp * conc**0.5 * factor * (0.5 if failed else 1.0),
        "median_intvty": 80.0 / conc,
    }
    return row(
        config=CONFIG.model_copy(update={"model_prefix": model, "tp": tp}),
        kind="fixed-seq-len",
        isl=isl,
        osl=1024,
        conc=conc,
        item=f"{model}[tp{tp}-isl{isl}-c{conc}]",
        metrics=metrics,
        status=Verdict.FAIL if failed else Verdict.PASS,
    )


def _history(tmp_path: Path) -> list[Stored]:
    """Two models, 1k/1k and 8k/1k, TP1 and TP2, two concurrencies: eight pareto charts' worth
    of points in each run."""
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    for run_id, branch, day, factor in RUNS:
        run = store.add_run(stamp(run_id, branch=branch, day=day))
        for model in ("smollm2", "qwen3"):
            for isl in (1024, 8192):
                for tp in (1, 2):
                    for conc in CONCURRENCIES:
                        failed = run_id == "pr-1" and (model, isl, tp, conc) == (
                            "smollm2",
                            8192,
                            2,
                            16,
                        )
                        store.put(run, _point(model, tp, isl, conc, factor, failed))
    rows = [found for item in store.items() for found in store.series(item)]
    store.close()
    return sorted(rows, key=lambda found: found.started)


def _embedded(text: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="infx-data">(.*?)</script>', text)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_one_chart_group_per_config_and_sequence_length_across_tp_sizes(
    tmp_path: Path,
) -> None:
    data = payload(_history(tmp_path), source="h.db", made=MADE)
    assert sorted(group["label"] for group in data["groups"]) == [
        "qwen3 bf16 cpu vllm 1k/1k",
        "qwen3 bf16 cpu vllm 8k/1k",
        "smollm2 bf16 cpu vllm 1k/1k",
        "smollm2 bf16 cpu vllm 8k/1k",
    ]
    tp = data["columns"].index("tp")
    assert sorted({point[tp] for point in data["points"]}) == [1, 2]


def test_only_the_latest_runs_of_each_branch_are_embedded(tmp_path: Path) -> None:
    rows = _history(tmp_path)
    assert latest_runs(rows, 2) == {"main-2", "main-3", "pr-1"}
    assert latest_runs(rows, 0) == {"main-1", "main-2", "main-3", "pr-1"}
    data = payload(rows, source="h.db", latest=1, made=MADE)
    assert [run["label"] for run in data["runs"]] == ["main-3", "pr-1"]
    assert data["runs_stored"] == 4
    assert len(data["points"]) == 2 * 16


@dataclass(frozen=True)
class _Judged(Stored):
    """A row of a store that keeps the gate's final verdict and its reason."""

    verdict: str = ""
    reason: str = ""


def test_a_failed_point_is_embedded_with_its_verdict_and_a_stored_reason(
    tmp_path: Path,
) -> None:
    rows = _history(tmp_path)
    data = payload(rows, source="h.db", made=MADE)
    verdict = data["columns"].index("verdict")
    assert sorted(point[verdict] for point in data["points"]).count(Verdict.FAIL) == 1
    judged = [
        _Judged(**{**vars(found), "verdict": "fail", "reason": "tput_per_gpu -12 % past -5 %"})
        for found in rows[:1]
    ]
    point = payload(judged, source="h.db", made=MADE)["points"][0]
    assert point[verdict:-1] == ["fail", "tput_per_gpu -12 % past -5 %"]
    assert payload(rows[:1], source="h.db", made=MADE)["points"][0][verdict + 1] is None


def test_the_page_fetches_nothing_and_no_name_can_end_its_data(tmp_path: Path) -> None:
    rows = _history(tmp_path)
    hostile = replace(rows[0], item="x</script><script>alert(1)</script>")
    text = page([hostile, *rows[1:]], source="h.db", made=MADE)
    assert text.count("</script>") == 4
    assert "<script src" not in text and "<link" not in text
    assert "Chart.js v4" in text
    data = _embedded(text)
    assert data["points"][0][data["columns"].index("item")] == hostile.item


@pytest.mark.engine
def test_a_user_filters_picks_two_runs_and_reads_the_delta_table(tmp_path: Path) -> None:
    ensure("chromium", CHROMIUM)
    from playwright.sync_api import sync_playwright

    html = tmp_path / "history.html"
    stored = [
        _Judged(**{**vars(found), "verdict": found.status, "reason": REASON})
        if found.status == Verdict.FAIL
        else found
        for found in _history(tmp_path)
    ]
    html.write_text(page(stored, source="sqlite:///h.db", made=MADE))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            view = browser.new_page(viewport={"width": 1300, "height": 1200})
            errors: list[str] = []
            view.on("pageerror", lambda error: errors.append(str(error)))
            view.goto(html.as_uri())
            view.wait_for_selector("body[data-ready]", timeout=30_000)
            assert view.locator("figure.pareto").count() == 4
            assert view.locator("figure.trend").count() == 4

            view.select_option("#f-model", "smollm2")
            view.select_option("#f-seq", "8k/1k")
            assert view.locator("figure.pareto").count() == 1
            assert view.locator("figure.pareto").get_attribute("data-group") == (
                "smollm2 bf16 cpu vllm 8k/1k"
            )
            view.select_option("#pick-a", label=_option(view, "#pick-a", "main-1 "))
            view.select_option("#pick-b", label=_option(view, "#pick-b", "pr-1 "))
            rows = _delta(view)
            assert [(r["tp"], r["conc"]) for r in rows] == [
                ("1", "4"),
                ("1", "16"),
                ("2", "4"),
                ("2", "16"),
            ]
            assert [r["delta"] for r in rows] == ["-10.0", "-10.0", "-10.0", "-55.0"]
            assert all("worse" in r["delta_class"] for r in rows)
            assert [r["vb"] for r in rows] == ["pass", "pass", "pass", "fail"]
            assert [r["reason"] for r in rows] == ["", "", "", REASON]
            assert {r["va"] for r in rows} == {"pass"}

            view.select_option("#pick-a", "branch:main")
            assert [r["delta"] for r in _delta(view)][:3] == ["-14.3", "-14.3", "-14.3"]

            tags = view.evaluate(
                """() => Chart.getChart(document.querySelector('figure.pareto canvas'))
                    .data.datasets.filter((d) => d.type === 'scatter')
                    .map((d) => [d.label, d.data.map((p) => p.tag).sort()])"""
            )
            assert tags == [
                ["A: main (latest)", ["TP1 c16", "TP1 c4", "TP2 c16", "TP2 c4"]],
                ["B: pr-1", ["TP1 c16", "TP1 c4", "TP2 c4"]],
                ["B: pr-1, failed", ["TP2 c16"]],
            ]
            frontiers = view.evaluate(
                """() => Chart.getChart(document.querySelector('figure.pareto canvas'))
                    .data.datasets.filter((d) => d.type === 'line')
                    .map((d) => [d.label, d.data.map((p) => p.tag)])"""
            )
            assert frontiers == [
                ["A: main (latest) frontier", ["TP2 c16", "TP2 c4"]],
                ["B: pr-1 frontier", ["TP2 c4"]],
            ]
            ticks = view.evaluate(
                """() => { const c = Chart.getChart(document.querySelector('figure.trend canvas'));
                    return [c.scales.x.ticks.map((t) => t.label),
                            c.scales.y.ticks.map((t) => t.label)]; }"""
            )
            assert view.locator("figure.trend figcaption").all_inner_texts() == [
                "smollm2 bf16 cpu vllm 8k/1k: tput_per_gpu on main"
            ]
            assert ticks[0] and all(re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}", t) for t in ticks[0])
            assert not any("e+" in str(t) or "e-" in str(t) for t in ticks[1])
            lines = view.evaluate(
                """() => Chart.getChart(document.querySelector('figure.trend canvas'))
                    .data.datasets.map((d) => [d.label, d.borderColor, d.borderDash.join(',')])"""
            )
            by_label = {label: (colour, dash) for label, colour, dash in lines}
            assert sorted(by_label) == ["TP1 c16", "TP1 c4", "TP2 c16", "TP2 c4"]
            assert by_label["TP1 c4"][0] == by_label["TP2 c4"][0] != by_label["TP1 c16"][0]
            assert by_label["TP1 c4"][1] == by_label["TP1 c16"][1] != by_label["TP2 c4"][1]

            view.select_option("#f-branch", "main")
            view.fill("#f-from", "2026-11-02")
            view.dispatch_event("#f-from", "change")
            assert view.locator("#runs-table tr[data-run]").evaluate_all(
                "(rows) => rows.map((r) => r.dataset.run)"
            ) == ["main-3", "main-2"]
            assert errors == []
        finally:
            browser.close()


def _option(view: Any, select: str, starting: str) -> str:
    labels: list[str] = view.locator(f"{select} option").all_inner_texts()
    return next(label for label in labels if label.startswith(starting))


def _delta(view: Any) -> list[dict[str, str]]:
    found: list[dict[str, str]] = view.locator("#delta tr[data-key]").evaluate_all(
        """(rows) => rows.map((r) => ({
            tp: r.querySelector('.tp').textContent, conc: r.querySelector('.conc').textContent,
            delta: r.querySelector('.delta').textContent,
            delta_class: r.querySelector('.delta').className,
            va: r.querySelector('.va').firstChild.textContent,
            vb: r.querySelector('.vb').firstChild.textContent,
            reason: (r.querySelector('.vb .reason') || {textContent: ''}).textContent}))"""
    )
    return found
