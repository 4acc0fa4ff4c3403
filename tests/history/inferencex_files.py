"""InferenceX result files as its ``process_result.py`` and ``results_bmk`` job write them, with
the field names our reference of its results path gives (see docs/history.md, ``infx db ingest``,
for what was and was not checked against its code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def agg(
    conc: int, tput: float, *, isl: int = 1024, osl: int = 1024, **fields: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "hw": "b200-dgxc_1",
        "conc": conc,
        "image": "lmsysorg/sglang:v0.5.21-cu130",
        "model": "deepseek-ai/DeepSeek-R1-0528",
        "infmax_model_prefix": "dsr1",
        "framework": "sglang",
        "precision": "fp4",
        "spec_decoding": "none",
        "disagg": False,
        "isl": isl,
        "osl": osl,
        "tp": 8,
        "ep": 1,
        "dp_attention": "false",
        "tput_per_gpu": tput,
        "output_tput_per_gpu": tput / 2,
        "input_tput_per_gpu": tput / 2,
        "mean_ttft": 0.4,
        "median_ttft": 0.35,
        "p90_ttft": 0.6,
        "p99_ttft": 0.9,
        "p99.9_ttft": 1.1,
        "median_tpot": 0.02,
        "median_intvty": 50.0,
        "median_e2el": 20.0,
    }
    row.update(fields)
    return row


def results_bmk(folder: Path, rows: list[Any]) -> Path:
    path = folder / "agg_bmk.json"
    path.write_text(json.dumps(rows, indent=2))
    return path
