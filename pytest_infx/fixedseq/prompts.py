"""Random prompts as InferenceX's ``benchmark_serving.py`` makes them for ``--dataset-name
random``, so that a point sends what InferenceX's client would send for the same tokenizer and
seed.

Its algorithm, in order of the draws from NumPy's legacy global generator seeded with ``seed``:
a shared prefix of ``prefix_len`` token ids, the input lengths and then the output lengths
(each uniform over ``[int(len * range_ratio), len]``), one offset per prompt; prompt ``i`` is
the prefix and the ids ``(offset_i + i + j) % vocab_size``, decoded to text. Decoded text does
not always encode back to as many tokens, so the text is encoded again, cut or padded with
further random ids, and decoded, up to ten times. The prompt length the metrics count is the
target, as InferenceX counts it, not what the server tokenises.

The padding ids come from a generator of their own, so that they do not depend on how the work is
split: one seeded with the first four words of the global generator's state key after the draws
above (which only change when the generator refills its block, so many cases share it). With one
worker every padding draw comes from it; with several, prompts are cut into ``workers`` chunks of
``ceil(n / workers)`` and each chunk, in order, pads from a generator seeded by one draw of it.
The worker count therefore changes the prompts that need padding, and only those.

With a chat template (``--use-chat-template``), the template's own length is taken off the input
length before any draw: the template wraps the one-letter message ``a``, that text encodes to
some ids, and all of them but one (the letter's) are the template's. Each fitted prompt is then
wrapped in the template, and its length is what the wrapped text encodes to, as InferenceX
counts it; the ids are those of the wrapped text.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_infx.extras import MissingExtra, require

if TYPE_CHECKING:
    import numpy as np

MAX_RETRIES = 10
MAX_AUTO_WORKERS = 8
_CLEANUPS = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


class TokenizerError(ValueError):
    """A model folder whose tokenizer cannot be loaded, with the file and the fix."""


class Tokenizer(Protocol):
    """What the random prompts need of a tokenizer: the base vocabulary (without added tokens,
    as ``transformers`` counts ``vocab_size``), decoding that keeps special tokens, and
    encoding without them."""

    @property
    def vocab_size(self) -> int: ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def encode(self, text: str) -> list[int]: ...


class Chat(Protocol):
    """A chat template that wraps one user message with the generation prompt."""

    def user_turn(self, content: str) -> str: ...


@dataclass(frozen=True)
class HubTokenizer:
    """A checkpoint's fast tokenizer read from its ``tokenizer.json`` with the ``tokenizers``
    library, decoding as ``transformers`` does for that checkpoint (its
    ``clean_up_tokenization_spaces`` setting included) without importing ``transformers``."""

    backend: object
    cleanup: bool

    @classmethod
    def load(cls, folder: Path) -> HubTokenizer:
        try:
            require("tokenizers", "numpy", purpose="the fixed-seq-len prompts")
        except MissingExtra as exc:
            raise TokenizerError(str(exc)) from None
        from tokenizers import Tokenizer as Backend

        path = folder / "tokenizer.json"
        if not path.is_file():
            raise TokenizerError(
                f"{path}: not found; the random prompts need the model's fast tokenizer "
                "(tokenizer.json), so stage the whole checkpoint folder"
            )
        try:
            backend = Backend.from_file(str(path))
        except Exception as exc:
            raise TokenizerError(
                f"{path}: not a tokenizer the tokenizers library reads ({exc})"
            ) from None
        cleanup = False
        settings = folder / "tokenizer_config.json"
        if settings.is_file():
            try:
                cleanup = bool(json.loads(settings.read_text()).get("clean_up_tokenization_spaces"))
            except ValueError as exc:
                raise TokenizerError(f"{settings}: does not parse ({exc})") from None
        return cls(backend, cleanup)

    @property
    def vocab_size(self) -> int:
        size: int = self.backend.get_vocab_size(with_added_tokens=False)  # type: ignore[attr-defined]
        return size

    def decode(self, ids: Sequence[int]) -> str:
        text: str = self.backend.decode(list(ids), skip_special_tokens=False)  # type: ignore[attr-defined]
        if self.cleanup:
            for before, after in _CLEANUPS:
                text = text.replace(before, after)
        return text

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.backend.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
        return ids


@dataclass(frozen=True, slots=True)
class RandomRequest:
    prompt: str
    prompt_len: int
    output_len: int
    token_ids: tuple[int, ...]


@dataclass(frozen=True)
class RandomPrompts:
    requests: tuple[RandomRequest, ...]

    @property
    def sha256(self) -> str:
        """The digest of every prompt's token ids and output length, in order: equal digests
        mean the same requests, whatever produced them."""
        digest = hashlib.sha256()
        for r in self.requests:
            digest.update(f"{','.join(map(str, r.token_ids))};{r.output_len}\n".encode())
        return digest.hexdigest()

    @property
    def mismatch(self) -> float:
        """The mean difference between the tokens each prompt encodes to and its target."""
        if not self.requests:
            return 0.0
        return sum(len(r.token_ids) - r.prompt_len for r in self.requests) / len(self.requests)


def random_prompts(
    tokenizer: Tokenizer,
    *,
    input_len: int,
    output_len: int,
    num_prompts: int,
    range_ratio: float,
    seed: int,
    prefix_len: int = 0,
    workers: int = MAX_AUTO_WORKERS,
    chat: Chat | None = None,
) -> RandomPrompts:
    """``workers`` is the split InferenceX's client would use; 0 or less is its own rule,
    ``min(cpu_count, 8)``, which makes the prompts depend on the machine. ``chat``: the template
    each prompt is sent in, as ``--use-chat-template`` sends it."""
    import numpy as np

    rng = np.random.RandomState(seed)
    vocab = tokenizer.vocab_size
    prefix = [int(v) for v in rng.randint(0, vocab, size=prefix_len)]
    if chat is not None:
        wrapping = template_len(tokenizer, chat)
        if wrapping > input_len:
            raise ValueError(
                f"the chat template alone is {wrapping} tokens, more than the input length "
                f"{input_len}: raise the point's isl or turn the chat template off"
            )
        input_len -= wrapping
    input_lens = rng.randint(int(input_len * range_ratio), input_len + 1, size=num_prompts)
    output_lens = rng.randint(int(output_len * range_ratio), output_len + 1, size=num_prompts)
    offsets = rng.randint(0, vocab, size=num_prompts)
    padding = _padding_generators(rng, num_prompts, workers)
    requests = []
    for i in range(num_prompts):
        target = prefix_len + int(input_lens[i])
        ids = prefix + [int((offsets[i] + i + j) % vocab) for j in range(int(input_lens[i]))]
        prompt, ids = _fitted(tokenizer, tokenizer.decode(ids), target, padding[i], vocab)
        if chat is not None:
            prompt = chat.user_turn(prompt)
            ids = tokenizer.encode(prompt)
            target = len(ids)
        requests.append(RandomRequest(prompt, target, int(output_lens[i]), tuple(ids)))
    return RandomPrompts(tuple(requests))


def template_len(tokenizer: Tokenizer, chat: Chat) -> int:
    """The tokens the template adds to a message, as InferenceX measures them: what the
    one-letter message ``a`` encodes to once wrapped, less one for the letter."""
    return len(tokenizer.encode(chat.user_turn("a"))) - 1


def resolved_workers(workers: int) -> int:
    """The worker count a setting stands for: 0 or less is InferenceX's automatic rule."""
    return workers if workers > 0 else min(os.cpu_count() or 1, MAX_AUTO_WORKERS)


def _padding_generators(
    rng: np.random.RandomState, num_prompts: int, workers: int
) -> list[np.random.RandomState]:
    """Each prompt's padding generator; seeding from the state key leaves ``rng`` unadvanced."""
    import numpy as np

    key = rng.get_state(legacy=False)["state"]["key"]
    local = np.random.RandomState([int(word) for word in key[:4]])
    count = resolved_workers(workers)
    if count <= 1 or num_prompts == 0:
        return [local] * num_prompts
    chunk = math.ceil(num_prompts / count)
    generators: list[np.random.RandomState] = []
    for start in range(0, num_prompts, chunk):
        seeded = np.random.RandomState(int(local.randint(0, 2**31)))
        generators.extend([seeded] * (min(start + chunk, num_prompts) - start))
    return generators


def _fitted(
    tokenizer: Tokenizer, prompt: str, target: int, rng: np.random.RandomState, vocab: int
) -> tuple[str, list[int]]:
    ids: list[int] = []
    for _ in range(MAX_RETRIES):
        ids = tokenizer.encode(prompt)
        if len(ids) < target:
            ids.extend(int(v) for v in rng.randint(0, vocab, size=target - len(ids)))
        elif len(ids) > target:
            ids = ids[:target]
        else:
            break
        prompt = tokenizer.decode(ids)
    return prompt, ids
