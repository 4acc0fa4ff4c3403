from __future__ import annotations

import pytest

from pytest_infx.secrets import is_secret, shown_argv


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("GITHUB_TOKEN", True),
        ("--api-key", True),
        ("OPENAI_API_KEY", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("DB_PASSWORD", True),
        ("--max-num-batched-tokens", False),
        ("VLLM_USE_V1", False),
        ("--tokenizer", False),
        ("MAX_TOKENS", False),
        ("SGLANG_SIMULATE_ACC_TOKEN_MODE", False),
        ("DJANGO_SECRET_KEY", True),
    ],
)
def test_a_secret_name_ends_in_a_secret_word(name: str, secret: bool) -> None:
    assert is_secret(name) is secret


def test_argv_hides_secret_values_and_keeps_the_rest() -> None:
    argv = ["docker", "run", "-e", "HF_TOKEN=hf_abc", "-e", "VLLM_USE_V1=1", "img", "vllm"]
    argv += ["--api-key", "sk-1", "--hf-token=hf_def", "--max-num-batched-tokens", "16384"]
    shown = " ".join(shown_argv(argv))
    assert "hf_abc" not in shown and "sk-1" not in shown and "hf_def" not in shown
    assert "-e HF_TOKEN=*** -e VLLM_USE_V1=1" in shown
    assert "--api-key *** --hf-token=*** --max-num-batched-tokens 16384" in shown
