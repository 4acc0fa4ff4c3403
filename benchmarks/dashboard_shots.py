#!/usr/bin/env python3
"""The dashboard of a small and of a long history: fills a SQLite history with synthetic nightly
runs (two configs, 1k/1k and 8k/1k, TP 4 and 8, five concurrencies, a few pull-request runs and
a few failed points), writes the page with ``infx db dashboard`` and screenshots it with
headless Chromium. Prints each page's size; ``--runs`` takes the history sizes to draw."""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pytest_infx.cli import main as infx
from pytest_infx.history.store import PointRow, RunStamp, Store
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.verdict import Verdict

CONFIGS = (
    ("dsr1", "b200", "sglang", "fp4", 1200.0),
    ("gptoss", "h200", "vllm", "fp8", 2600.0),
)
SEQUENCES = ((1024, 1024, 1.0), (8192, 1024, 0.45))
TPS = (4, 8)
CONCURRENCIES = (4, 8, 16, 32, 64)
START = datetime(2026, 6, 1, 2, 0, tzinfo=UTC)


def _stamp(index: int, runs: int) -> RunStamp:
    pull = index % 9 == 8
    return RunStamp(
        run_id=f"{24000000 + index}",
        attempt=1,
        branch=f"pr-{400 + index // 9}" if pull else "main",
        commit=hashlib.sha1(str(index).encode()).hexdigest(),
        started=START + timedelta(days=index * 180 / runs, hours=3 if pull else 0),
        machine="bench",
        plugin_version="bench",
    )


def _rows(index: int, runs: int, chance: random.Random) -> list[PointRow]:
    found = []
    drift = 1.0 + 0.15 * index / runs
    for model, gpu, framework, precision, base in CONFIGS:
        version = "0.11.0" if index < runs // 2 else "0.12.0"
        for tp in TPS:
            config = ConfigIdentity(
                model_prefix=model,
                hardware=gpu,
                framework=framework,
                engine_version=version,
                precision=precision,
                spec_method="none",
                tp=tp,
            )
            for isl, osl, share in SEQUENCES:
                for conc in CONCURRENCIES:
                    noise = chance.gauss(1.0, 0.03)
                    tput = base * share * drift * noise * conc**0.55 / (1.0 + tp / 16)
                    intvty = 160.0 / conc**0.5 * (tp / 4) ** 0.3 * noise
                    failed = chance.random() < 0.01
                    found.append(
                        PointRow(
                            config=config,
                            kind="fixed-seq-len",
                            conc=conc,
                            cell="",
                            item=f"{model}-{gpu}[tp{tp}-isl{isl}-osl{osl}-c{conc}]",
                            recipe=f"{model}-{gpu}",
                            dataset="random",
                            status=Verdict.FAIL if failed else Verdict.PASS,
                            metrics={
                                "tput_per_gpu": tput * (0.5 if failed else 1.0),
                                "output_tput_per_gpu": tput * osl / (isl + osl),
                                "median_intvty": intvty,
                                "median_ttft": 0.05 * isl / 1024 * conc**0.3 / noise,
                                "p99_ttft": 0.12 * isl / 1024 * conc**0.3 / noise,
                                "median_e2el": osl / intvty,
                            },
                            isl=isl,
                            osl=osl,
                        )
                    )
    return found


def fill(path: Path, runs: int) -> str:
    url = f"sqlite:///{path}"
    chance = random.Random(runs)
    with Store.open(url) as store:
        for index in range(runs):
            run = store.add_run(_stamp(index, runs))
            for row in _rows(index, runs, chance):
                store.put(run, row)
    return url


def shoot(page: Path, png: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            view = browser.new_page(viewport={"width": 1400, "height": 1000})
            view.goto(page.as_uri())
            view.wait_for_selector("body[data-ready]")
            view.screenshot(path=str(png), full_page=True)
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="folder for pages and PNGs")
    parser.add_argument("--runs", type=int, nargs="+", default=[5, 200])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for runs in args.runs:
        db = args.out / f"history-{runs}.db"
        db.unlink(missing_ok=True)
        url = fill(db, runs)
        for latest in ("20", "0"):
            page = args.out / f"dashboard-{runs}-runs-latest-{latest}.html"
            if infx(["db", "dashboard", "--db", url, "--out", str(page), "--runs", latest]):
                return 1
            print(f"{runs} runs, --runs {latest}: {page.stat().st_size / 1024:.0f} KiB")
            if latest == "20":
                shoot(page, page.with_suffix(".png"), args.chromium)
                print(f"  screenshot {page.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
