#!/usr/bin/env python3
"""What the results history costs a run: opening (and migrating) a store, writing a point as it
finishes, looking up a baseline in a long history, and ingesting InferenceX's results_bmk file
twice. SQLite by default; ``--db URL`` measures a PostgreSQL server instead."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pytest_infx.history.ingest import default_stamp, ingest
from pytest_infx.history.store import PointRow, RunStamp, Store
from pytest_infx.kinds import KINDS
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.verdict import Verdict

CONFIG = ConfigIdentity(
    model_prefix="dsr1",
    hardware="b200",
    framework="sglang",
    engine_version="v0.5.21-cu130",
    precision="fp4",
    spec_method="mtp",
    tp=8,
)
ROW = PointRow(
    config=CONFIG,
    kind="agentic",
    conc=1,
    cell="",
    item="dsr1[tp8-c1]",
    recipe="dsr1",
    dataset="hub-traces",
    status=Verdict.PASS,
    metrics={"tput_per_gpu": 1000.0, "median_ttft": 0.3, "median_intvty": 40.0},
)


def _stamp(index: int) -> RunStamp:
    return RunStamp(
        run_id=f"run{index}",
        attempt=1,
        branch="main",
        commit=f"{index:040x}",
        started=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=index),
        machine="bench",
        plugin_version="bench",
    )


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.2f} ms, p90 " + (
        f"{sorted(values)[int(len(values) * 0.9) - 1] * 1000:.2f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=None, help="an empty database URL (default: SQLite)")
    parser.add_argument("--points", type=int, default=500, help="points written one by one")
    parser.add_argument("--runs", type=int, default=200, help="runs in the long history")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="infx-history-bench-"))
    url = args.db or f"sqlite:///{folder / 'history.db'}"

    started = time.perf_counter()
    store = Store.open(url)
    opened = time.perf_counter() - started
    started = time.perf_counter()
    store.close()
    store = Store.open(url)
    reopened = time.perf_counter() - started
    print(
        f"open a new store (migrations included): {opened * 1000:.1f} ms; again: "
        f"{reopened * 1000:.1f} ms"
    )

    run = store.add_run(_stamp(0))
    writes = []
    for conc in range(1, args.points + 1):
        started = time.perf_counter()
        store.put(run, replace(ROW, conc=conc, item=f"dsr1[tp8-c{conc}]"))
        writes.append(time.perf_counter() - started)
    print(f"write one point ({args.points} one by one): {_ms(writes)}")

    for index in range(1, args.runs + 1):
        rid = store.add_run(_stamp(index))
        for conc in (1, 4, 16, 64):
            store.put(rid, replace(ROW, conc=conc, metrics={"tput_per_gpu": 1000.0 + index}))
    lookups = []
    for _ in range(50):
        started = time.perf_counter()
        found = store.history(replace(ROW, conc=16), branch="main")
        lookups.append(time.perf_counter() - started)
    print(
        f"baseline and drift history of one point over {len(found)} runs "
        f"({store.count()} rows stored): {_ms(lookups)}"
    )

    rows = [
        {
            "hw": "b200-dgxc_1",
            "framework": "sglang",
            "precision": "fp4",
            "tp": 8,
            "ep": 1,
            "dp_attention": "false",
            "infmax_model_prefix": "dsr1",
            "spec_decoding": "none",
            "isl": isl,
            "osl": 1024,
            "conc": conc,
            "image": "lmsysorg/sglang:v0.5.21-cu130",
            "tput_per_gpu": 1000.0 + conc,
            "median_ttft": 0.3,
        }
        for isl in (1024, 8192)
        for conc in range(1, 501)
    ]
    bmk = folder / "agg_bmk.json"
    bmk.write_text(json.dumps(rows))
    for attempt in ("first", "again"):
        started = time.perf_counter()
        tally = ingest(store, [bmk], default_stamp([bmk], [bmk], branch="main", commit=""), KINDS)
        print(
            f"ingest agg_bmk.json, {len(rows)} rows, {attempt}: "
            f"{time.perf_counter() - started:.2f} s ({tally.lines()[0]})"
        )
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
