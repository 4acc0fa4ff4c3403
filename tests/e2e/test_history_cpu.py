"""The baseline gate on the real CPU engine, on SQLite and on a real PostgreSQL server: a
SPEED-Bench cell measured on ``main``, then again with a planted slowdown (``max-num-seqs: 1``,
so the server decodes the cell's eight concurrent requests one at a time), fails on the gate
naming the point, the metric, the baseline, the value and the delta (past the CPU recipes' own
25 % throughput tolerance)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pytest_infx.files.cachedir import cache_root
from pytest_infx.history.store import Store

pytestmark = pytest.mark.engine
REPO = Path(__file__).resolve().parents[2]
CACHE = cache_root()
KEY = "smollm2-cpu-history"
ITEM = f"{KEY}[k2-thinking_off]"


def _recipe(engine_args: dict[str, object]) -> dict[str, object]:
    return {
        "key": KEY,
        "extends": "_base/smollm2-bf16-cpu-vllm.yaml",
        "engine": {"args": engine_args},
        "speedbench": {
            "speculative": {
                "method": "ngram",
                "settings": {"prompt_lookup_max": 4, "prompt_lookup_min": 2},
            },
            "draft-lengths": [2],
            "concurrency": 8,
            "dataset": {"category": "coding", "num-prompts": 16},
            "output-len": 48,
            "golden": "smollm2_ngram",
            "tolerance": 1.0,
        },
    }


def test_a_planted_slowdown_fails_on_the_baseline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, db_url: str
) -> None:
    monkeypatch.setenv("INFX_CACHE_DIR", str(CACHE))
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    recipes = pytester.path / "recipes"
    shutil.copytree(REPO / "recipes" / "_base", recipes / "_base")
    shutil.copytree(REPO / "golden", pytester.path / "golden")
    path = recipes / f"{KEY}.yaml"

    def run(engine_args: dict[str, object], *args: str) -> pytest.RunResult:
        path.write_text(yaml.safe_dump(_recipe(engine_args)))
        return pytester.runpytest_subprocess(
            "-m",
            "speedbench",
            "-k",
            "thinking_off",
            "--gpu",
            "cpu",
            "--infx-db",
            db_url,
            "-rA",
            *args,
        )

    first = run({}, "--infx-branch", "main")
    assert first.ret == 0, first.stdout.str()
    slow = run({"max-num-seqs": 1}, "--infx-branch", "pr", "--infx-baseline", "main")
    assert slow.ret == pytest.ExitCode.TESTS_FAILED, slow.stdout.str()
    out = slow.stdout.str()
    failure = next(line for line in out.splitlines() if line.startswith(f"{ITEM}: "))
    assert "output_tput_per_gpu" in failure
    assert "vs baseline" in failure and "allowed 25%" in failure
    assert "(baseline run local-" in failure
    store = Store.open(db_url)
    try:
        rows = store.series(ITEM)
    finally:
        store.close()
    assert [(row.branch, row.status) for row in rows] == [("main", "pass"), ("pr", "fail")]
    assert "beyond its tolerance" in rows[1].reason
    before, after = (row.metrics["output_tput_per_gpu"] for row in rows)
    assert after < 0.95 * before
    print(f"output tok/s/gpu: main {before:.1f}, slowed {after:.1f} ({after / before - 1:+.1%})")
