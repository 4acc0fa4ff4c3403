"""Recipes, prompt files and golden files for end-to-end runs of the plugin against fake_vllm.

Recipes are plain dicts dumped to YAML; the engine is `fake_vllm.py` started through
`engine.command`, exactly as a real local vLLM command would be, so the plugin's own argv, pool,
client, checks and reports are what the tests exercise.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from pytest_infx.launch.procfs import is_alive

FAKE = Path(__file__).resolve().with_name("fake_vllm.py")
HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
MODEL_KEY = "smollm2-135m-instruct"
SERVED = "smollm2-135m-instruct"
CURVE = "smollm2_fake"
MODES = ("thinking_off", "thinking_on")
ENGINE_ARGS: dict[str, Any] = {
    "max-model-len": 2048,
    "reasoning-parser": "deepseek_v3",
    "per-request-spec-decode-metrics": "summary",
}


def fake_command(record: Path, *extra: str, faults: Iterable[str] = ()) -> list[str]:
    argv = [sys.executable, str(FAKE), "--record", str(record), *extra]
    for fault in faults:
        argv += ["--fault", fault]
    return argv


def recipe(
    key: str,
    *,
    record: Path,
    faults: Iterable[str] = (),
    extra: Sequence[str] = (),
    draft_lengths: Iterable[int] = (1,),
    modes: Iterable[str] = MODES,
    dataset: Mapping[str, Any] | None = None,
    output_len: int = 8,
    concurrency: int = 4,
    ready_timeout: float = 30.0,
    port: int = 8888,
    speculative: Mapping[str, Any] | None = None,
    thinking_modes: Mapping[str, Mapping[str, Any]] | None = None,
    golden: str = CURVE,
) -> dict[str, Any]:
    """A cpu recipe served by fake_vllm; `dataset` defaults to `prompts.jsonl` (see `prompts`)."""
    chosen = tuple(modes)
    return {
        "key": key,
        "model": {
            "hub-id": HUB_ID,
            "served-name": SERVED,
            "prefix": "smollm2",
            "precision": "bf16",
            "path": "models/smollm2-target",
        },
        "runner": "cpu",
        "engine": {
            "name": "vllm",
            "version": "0.33.0+fake",
            "command": fake_command(record, *extra, faults=faults),
            "port": port,
            "ready-timeout": ready_timeout,
            "args": dict(ENGINE_ARGS),
        },
        "tp": 1,
        "speedbench": {
            "speculative": dict(speculative or {"method": "ngram"}),
            "draft-lengths": list(draft_lengths),
            "thinking-modes": dict(thinking_modes)
            if thinking_modes is not None
            else {m: {"enable_thinking": m == "thinking_on"} for m in chosen},
            "sampling": {"temperature": 0.0, "seed": 0},
            "concurrency": concurrency,
            "dataset": dict(dataset)
            if dataset is not None
            else {"category": "coding", "path": "prompts.jsonl", "expected-rows": 4},
            "output-len": output_len,
            "golden": golden,
            "request-timeout": 60,
        },
    }


def write_recipe(folder: Path, data: Mapping[str, Any]) -> Path:
    path = folder / f"{data['key']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dict(data), sort_keys=False))
    return path


def prompts(path: Path, n: int = 4, *, placeholder_at: int | None = None) -> Path:
    """`n` coding prompts; with `placeholder_at`, that row is the hub's placeholder text."""
    from pytest_infx.speedbench.dataset import PLACEHOLDER

    rows = []
    for i in range(n):
        text = PLACEHOLDER if i == placeholder_at else f"Write a Python function number {i}."
        rows.append(
            {
                "question_id": f"fake-{i:03d}",
                "category": "coding",
                "messages": [{"role": "user", "content": text}],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def golden_text(cells: Mapping[str, Mapping[int, float]], *, model_key: str = MODEL_KEY) -> str:
    """A golden file as a reviewer commits it: InferenceX layout, two-decimal ALs."""
    lines = ["# Source: hand-written for the plugin end-to-end tests", f"{model_key}:"]
    for mode in MODES:
        if mode in cells:
            lines.append(f"  {mode}:")
            lines += [f"    {k}: {al:.2f}" for k, al in sorted(cells[mode].items())]
    return "\n".join(lines) + "\n"


def lit(pattern: str) -> str:
    """An fnmatch pattern whose `[` are literal (item ids hold brackets); `*` stays a wildcard."""
    return pattern.replace("[", "[[]")


def records(path: Path) -> list[dict[str, Any]]:
    """The stand-in's start lines (one per server start)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def live_pids(path: Path) -> list[int]:
    return [int(r["pid"]) for r in records(path) if is_alive(int(r["pid"]))]
