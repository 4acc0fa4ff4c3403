"""The dashboard page: its frontier, what it draws, and (marked ``engine``: it installs
Debian's Chromium on first use) what a real headless browser renders of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from history.debian import ensure
from history.samples import row, stamp
from pytest_infx.history.dashboard import Mark, frontier, page
from pytest_infx.history.store import Store
from pytest_infx.results.verdict import Verdict

CHROMIUM = "/usr/bin/chromium"
CONCURRENCIES = (1, 4, 16, 64)


def _history(tmp_path: Path) -> Store:
    """Two runs of one config over four concurrencies, the second 10 % slower; a failed point
    that must not be drawn; and a SPEED-Bench cell, which has a trend but no pareto point."""
    store = Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    for day, factor in ((0, 1.0), (1, 0.9)):
        run = store.add_run(stamp(f"run{day}", day=day))
        for conc in CONCURRENCIES:
            metrics = {"tput_per_gpu": 100.0 * conc**0.5 * factor, "median_intvty": 80.0 / conc}
            store.put(run, row(conc=conc, item=f"k[tp1-c{conc}]", metrics=metrics))
        store.put(
            run, row(conc=2, item="k[tp1-c2]", status=Verdict.FAIL, metrics={"tput_per_gpu": 0.0})
        )
        store.put(
            run,
            row(
                kind="speedbench",
                cell="k2-thinking_on",
                item="k[k2-thinking_on]",
                metrics={"al": 2.0 + day, "output_tput_per_gpu": 50.0},
            ),
        )
    return store


def test_the_frontier_keeps_the_points_nothing_beats() -> None:
    marks = [
        Mark(1, 10, "r", "a"),
        Mark(2, 8, "r", "b"),
        Mark(1.5, 5, "r", "c"),
        Mark(3, 2, "r", "d"),
    ]
    assert [m.item for m in frontier(marks)] == ["a", "b", "d"]


def test_the_page_draws_one_pareto_chart_per_config_and_one_trend_per_point(
    tmp_path: Path,
) -> None:
    store = _history(tmp_path)
    text = page(store.passing(), source="sqlite:///h.db")
    store.close()
    pareto = re.findall(r'<svg class="chart pareto" data-key="([^"]+)"', text)
    assert pareto == [
        "smollm2 bf16 cpu vllm 0.32.0 spec-none (agentic)",
    ]
    trends = re.findall(r'<svg class="chart trend" data-key="([^"]+)"', text)
    assert trends == sorted([f"k[tp1-c{c}]" for c in CONCURRENCIES] + ["k[k2-thinking_on]"])
    assert "k[tp1-c2]" not in text
    assert f"{2 * len(CONCURRENCIES) + 2} passing points of 2 runs" in text


@pytest.mark.engine
def test_a_headless_browser_renders_every_point_of_the_charts(tmp_path: Path) -> None:
    ensure("chromium", CHROMIUM)
    from playwright.sync_api import sync_playwright

    store = _history(tmp_path)
    html = tmp_path / "history.html"
    html.write_text(page(store.passing(), source="sqlite:///h.db"))
    store.close()
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
            view = browser.new_page(viewport={"width": 900, "height": 1200})
            view.goto(html.as_uri())
            chart = view.locator("svg.pareto").first
            marks = chart.locator("circle.mark")
            assert marks.count() == 2 * len(CONCURRENCIES)
            boxes = [marks.nth(i).bounding_box() for i in range(marks.count())]
            assert all(b is not None and b["width"] > 0 for b in boxes)
            chart_box = chart.bounding_box()
            assert chart_box is not None
            assert all(
                chart_box["x"] <= b["x"] <= chart_box["x"] + chart_box["width"]
                for b in boxes
                if b is not None
            )
            frontiers = chart.locator("polyline.line")
            assert sorted(frontiers.nth(i).get_attribute("data-run") or "" for i in range(2)) == [
                "run0",
                "run1",
            ]
            highest = max(boxes, key=lambda b: -b["y"] if b else 0)
            assert highest is not None
            tops = {
                (marks.nth(i).get_attribute("data-run"), marks.nth(i).get_attribute("data-y"))
                for i in range(marks.count())
                if boxes[i] == highest
            }
            assert tops == {("run0", "800")}
            assert view.locator("svg.trend").count() == len(CONCURRENCIES) + 1
            view.screenshot(path=str(tmp_path / "history.png"), full_page=True)
        finally:
            browser.close()
    assert (tmp_path / "history.png").read_bytes()[:4] == b"\x89PNG"
