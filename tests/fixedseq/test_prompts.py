from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from pytest_infx.fixedseq.prompts import HubTokenizer, TokenizerError, random_prompts


class Letters:
    """One token a character over a 50-symbol vocabulary: every decode encodes back whole."""

    vocab_size = 50

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(chr(0x100 + i) for i in ids)

    def encode(self, text: str) -> list[int]:
        return [ord(c) - 0x100 for c in text]


class Pairs(Letters):
    """Encodes two characters as one token where it can, so decoded text encodes short."""

    def encode(self, text: str) -> list[int]:
        return [ord(c) - 0x100 for c in text[::2]]


def _reference(tok: Letters, isl: int, osl: int, n: int, ratio: float, seed: int) -> list[object]:
    """benchmark_serving.py's draws, spelled with the global generator it seeds."""
    np.random.seed(seed)
    input_lens = np.random.randint(int(isl * ratio), isl + 1, size=n)
    output_lens = np.random.randint(int(osl * ratio), osl + 1, size=n)
    offsets = np.random.randint(0, tok.vocab_size, size=n)
    return [
        (
            [int((offsets[i] + i + j) % tok.vocab_size) for j in range(int(input_lens[i]))],
            int(output_lens[i]),
        )
        for i in range(n)
    ]


def test_the_draws_follow_the_seeded_legacy_generator_in_its_order() -> None:
    made = random_prompts(
        Letters(), input_len=40, output_len=12, num_prompts=6, range_ratio=0.8, seed=3
    )
    expected = _reference(Letters(), 40, 12, 6, 0.8, 3)
    assert [(list(r.token_ids), r.output_len) for r in made.requests] == expected
    assert all(32 <= r.prompt_len <= 40 and 9 <= r.output_len <= 12 for r in made.requests)
    assert all(r.prompt == Letters().decode(r.token_ids) for r in made.requests)
    assert made.mismatch == 0.0


def test_the_same_seed_gives_the_same_digest_and_another_seed_another() -> None:
    def digest(seed: int) -> str:
        return random_prompts(
            Letters(), input_len=30, output_len=8, num_prompts=4, range_ratio=0.5, seed=seed
        ).sha256

    assert digest(0) == digest(0)
    assert digest(0) != digest(1)


def test_a_prompt_that_encodes_short_is_padded_to_its_target_length() -> None:
    made = random_prompts(
        Pairs(), input_len=20, output_len=4, num_prompts=3, range_ratio=1.0, seed=0
    )
    for request in made.requests:
        assert request.prompt_len == 20
        assert len(request.token_ids) == 20
        assert request.prompt == Pairs().decode(request.token_ids)


def test_a_range_ratio_of_one_fixes_every_length() -> None:
    made = random_prompts(
        Letters(), input_len=16, output_len=5, num_prompts=5, range_ratio=1.0, seed=9
    )
    assert {(r.prompt_len, r.output_len) for r in made.requests} == {(16, 5)}


def _tokenizer_folder(folder: Path, *, cleanup: bool | None) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["<s>", "a", "b", ".", "'s", "it", "[UNK]"])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.add_special_tokens(["<s>"])
    folder.mkdir(parents=True, exist_ok=True)
    backend.save(str(folder / "tokenizer.json"))
    if cleanup is not None:
        settings = {"clean_up_tokenization_spaces": cleanup}
        (folder / "tokenizer_config.json").write_text(json.dumps(settings))
    return folder


def test_a_checkpoint_tokenizer_decodes_as_its_settings_say(tmp_path: Path) -> None:
    plain = HubTokenizer.load(_tokenizer_folder(tmp_path / "plain", cleanup=None))
    tidy = HubTokenizer.load(_tokenizer_folder(tmp_path / "tidy", cleanup=True))
    ids = [5, 4, 1, 3]
    assert plain.decode(ids) == "it 's a ."
    assert tidy.decode(ids) == "it's a."
    assert plain.decode([0, 1]) == "<s> a"
    assert plain.encode("a b") == [1, 2]
    assert plain.vocab_size == 7


def test_a_checkpoint_without_a_fast_tokenizer_is_named_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match=r"tokenizer\.json: not found.*whole checkpoint"):
        HubTokenizer.load(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(TokenizerError, match="not a tokenizer the tokenizers library reads"):
        HubTokenizer.load(tmp_path)


@pytest.mark.engine
def test_prompts_of_the_real_checkpoint_match_what_transformers_makes_of_them() -> None:
    """The embedded engine's environment has ``transformers``, which ``benchmark_serving.py``
    tokenizes with: its vocabulary size, decode and encode of SmolLM2's tokenizer are ours."""
    import subprocess

    from pytest_infx.engines import embedded

    engine = embedded.ensure()
    ours = random_prompts(
        HubTokenizer.load(engine.model_dir),
        input_len=64,
        output_len=8,
        num_prompts=6,
        range_ratio=0.8,
        seed=0,
    )
    script = (
        "import json, sys\n"
        "from transformers import AutoTokenizer\n"
        "t = AutoTokenizer.from_pretrained(sys.argv[1])\n"
        "rows = json.load(sys.stdin)\n"
        "print(json.dumps({'vocab': t.vocab_size,\n"
        "    'decoded': [t.decode(ids) for ids in rows],\n"
        "    'encoded': [t.encode(t.decode(ids), add_special_tokens=False) for ids in rows]}))\n"
    )
    rows = [list(r.token_ids) for r in ours.requests]
    done = subprocess.run(
        [str(engine.python), "-c", script, str(engine.model_dir)],
        input=json.dumps(rows),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    tokenizer = HubTokenizer.load(engine.model_dir)
    assert theirs["vocab"] == tokenizer.vocab_size
    assert theirs["decoded"] == [r.prompt for r in ours.requests]
    assert theirs["encoded"] == [tokenizer.encode(r.prompt) for r in ours.requests]


def _padding_seeds(seed: int, n: int, workers: int) -> list[np.random.RandomState]:
    """benchmark_serving.py's padding generators, spelled with the global generator: one from
    the state key after the draws for serial generation, one per chunk of workers otherwise."""
    np.random.seed(seed)
    for _ in range(3):
        np.random.randint(0, 50, size=n)
    state = np.random.get_state()
    assert isinstance(state, tuple)
    local = np.random.RandomState(state[1][:4].tolist())
    if workers <= 1:
        return [local] * n
    chunk = -(-n // workers)
    chunks = [
        np.random.RandomState(local.randint(0, 2**31)) for w in range(workers) if w * chunk < n
    ]
    return [chunks[i // chunk] for i in range(n)]


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_padding_comes_from_the_generator_of_the_prompt_s_worker(workers: int) -> None:
    made = random_prompts(
        Pairs(), input_len=6, output_len=4, num_prompts=7, range_ratio=1.0, seed=5, workers=workers
    )
    generators = _padding_seeds(5, 7, workers)
    tok = Pairs()
    drawn = zip(_reference(tok, 6, 4, 7, 1.0, 5), made.requests, generators, strict=True)
    for row, request, rng in drawn:
        assert isinstance(row, tuple)
        ids = list(row[0])
        for _ in range(10):
            ids = tok.encode(tok.decode(ids))
            ids += [int(v) for v in rng.randint(0, 50, size=6 - len(ids))]
        assert list(request.token_ids) == ids


def test_the_worker_count_changes_padded_prompts_but_not_their_lengths() -> None:
    def made(workers: int) -> list[tuple[int, int, tuple[int, ...]]]:
        prompts = random_prompts(
            Pairs(),
            input_len=12,
            output_len=4,
            num_prompts=9,
            range_ratio=0.5,
            seed=1,
            workers=workers,
        )
        return [(r.prompt_len, r.output_len, r.token_ids) for r in prompts.requests]

    serial, split = made(1), made(8)
    assert [r[:2] for r in serial] == [r[:2] for r in split]
    assert [r[2] for r in serial] != [r[2] for r in split]


def test_zero_workers_is_inferencex_s_rule_of_the_cpu_count_up_to_eight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def made(workers: int) -> str:
        return random_prompts(
            Pairs(),
            input_len=12,
            output_len=4,
            num_prompts=9,
            range_ratio=0.5,
            seed=1,
            workers=workers,
        ).sha256

    monkeypatch.setattr("os.cpu_count", lambda: 3)
    assert made(0) == made(3) != made(8)
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    assert made(0) == made(8)
