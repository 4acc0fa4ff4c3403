from __future__ import annotations

import pytest

from pytest_infx.images import pinned, version_of

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("image", "is_pinned"),
    [
        (f"vllm/vllm-openai@{DIGEST}", True),
        (f"lmsysorg/sglang:v0.5.21@{DIGEST}", True),
        ("vllm/vllm-openai:v0.31.0", False),
        ("vllm/vllm-openai:latest", False),
        (f"vllm/vllm-openai@{DIGEST[:-1]}", False),
        (f"vllm/vllm-openai@{DIGEST.upper().replace('SHA256', 'sha256')}", False),
        (f"vllm/vllm-openai@{DIGEST}:tag", False),
    ],
)
def test_only_a_full_sha256_digest_pins_an_image(image: str, is_pinned: bool) -> None:
    assert pinned(image) is is_pinned


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("lmsysorg/sglang:v0.5.14-cu130@sha256:" + "0" * 64, "v0.5.14-cu130"),
        ("lmsysorg/sglang:v0.5.14-cu130", "v0.5.14-cu130"),
        ("registry.example:5000/vllm/vllm-openai:v0.9.0", "v0.9.0"),
        ("vllm/vllm-openai@sha256:" + "ab" * 32, "abababababab"),
        ("vllm/vllm-openai", "latest"),
        ("", ""),
    ],
)
def test_the_engine_version_is_the_tag_whatever_pins_it(image: str, version: str) -> None:
    assert version_of(image) == version
