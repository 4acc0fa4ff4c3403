"""A fixed-seq-len point's measurement without pytest: its prompts follow its block (the
prompt workers, the chat template), and a point whose prompts cannot be made fails by name.
The whole measurement runs against the vLLM stand-in in tests/e2e/test_fixed_seq_len.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.helpers import recipe, write_recipe

from pytest_infx.fixedseq.measure import prompts
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all
from pytest_infx.results.measure import PointFailed

KEY = "fake-fixed-measure"


@pytest.mark.parametrize("workers", [1, 8])
def test_a_fixed_seq_len_point_pads_its_prompts_as_its_prompt_workers_say(
    tmp_path: Path, workers: int
) -> None:
    from pytest_infx.fixedseq.prompts import HubTokenizer, random_prompts

    tokenizer = Path(__file__).parent / "data" / "smollm2"
    data = recipe(KEY, record=tmp_path / "starts.jsonl")
    data["fixed-seq-len"] = {
        "points": [{"tp": 1, "isl": 1024, "osl": 32, "concurrency": [1]}],
        "prompts-per-concurrency": 8,
        "random-range-ratio": 0.0,
        "seed": 42,
        "prompt-workers": workers,
    }
    write_recipe(tmp_path / "recipes", data)
    (point,) = [p for p in expand_all(load_tree(tmp_path / "recipes")) if p.fixed_seq_len]
    assert point.fixed_seq_len is not None
    expected = {
        count: random_prompts(
            HubTokenizer.load(tokenizer),
            input_len=1024,
            output_len=32,
            num_prompts=8,
            range_ratio=0.0,
            seed=42,
            workers=count,
        ).sha256
        for count in (1, 8)
    }
    assert expected[1] != expected[8]
    assert prompts(point, str(tokenizer)).sha256 == expected[workers]


@pytest.mark.parametrize(
    ("setting", "start"),
    [
        (True, "<|im_start|>system\n"),
        ("deepseek-v4", "<\uff5cbegin\u2581of\u2581sentence\uff5c><\uff5cUser\uff5c>"),
    ],
)
def test_a_fixed_seq_len_point_sends_its_prompts_in_the_chat_template_it_names(
    tmp_path: Path, setting: object, start: str
) -> None:
    if setting is True:
        pytest.importorskip("jinja2", reason="the chat template renders with the fixedseq extra")
    tokenizer = Path(__file__).parent / "data" / "smollm2"
    data = recipe(KEY, record=tmp_path / "starts.jsonl")
    data["fixed-seq-len"] = {
        "points": [{"tp": 1, "isl": 256, "osl": 32, "concurrency": [1]}],
        "prompts-per-concurrency": 2,
        "chat-template": setting,
    }
    write_recipe(tmp_path / "recipes", data)
    (point,) = [p for p in expand_all(load_tree(tmp_path / "recipes")) if p.fixed_seq_len]
    assert point.fixed_seq_len is not None
    assert all(r.prompt.startswith(start) for r in prompts(point, str(tokenizer)).requests)


def test_a_point_whose_tokenizer_cannot_be_loaded_fails_by_name(tmp_path: Path) -> None:
    data = recipe(KEY, record=tmp_path / "starts.jsonl")
    data["fixed-seq-len"] = {"points": [{"tp": 1, "isl": 64, "osl": 8, "concurrency": [1]}]}
    write_recipe(tmp_path / "recipes", data)
    (point,) = [p for p in expand_all(load_tree(tmp_path / "recipes")) if p.fixed_seq_len]
    with pytest.raises(PointFailed, match=rf"^{KEY}\[tp1-isl64-osl8-c1\]: "):
        prompts(point, str(tmp_path / "no-model"))
