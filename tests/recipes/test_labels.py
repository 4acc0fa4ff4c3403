from __future__ import annotations

import pytest
from known_recipes import longest_shipped_key

from pytest_infx.launch.spec import ServerSpec
from pytest_infx.recipes.labels import MAX_LABEL, server_label


def test_a_short_key_keeps_its_readable_label() -> None:
    assert server_label("smollm2-bf16-cpu-vllm-ngram", "k3") == "smollm2-bf16-cpu-vllm-ngram-k3"


@pytest.mark.parametrize("point", ["k3", "tp8-c256", "tp8", "x" * 70])
def test_every_shipped_key_gives_a_label_the_launcher_takes(point: str) -> None:
    key = longest_shipped_key()
    assert len(f"{key}-{point}") > MAX_LABEL
    label = server_label(key, point)
    assert len(label) <= MAX_LABEL
    ServerSpec(key="k", argv=("x",), label=label)
    if len(point) < 40:
        assert label.startswith(key[:20]) and label.endswith(f"-{point}")


def test_two_long_keys_that_begin_alike_get_different_labels() -> None:
    base = "kimik3-fp4-b300-vllm-probabilistic-sample-method-block-rejection-sample"
    assert server_label(f"{base}-a", "k1") != server_label(f"{base}-b", "k1")
    assert server_label(f"{base}-a", "k1") != server_label(f"{base}-a", "k2")


def test_the_bound_is_the_launchers() -> None:
    ServerSpec(key="k", argv=("x",), label="a" * MAX_LABEL)
    with pytest.raises(ValueError, match="server label"):
        ServerSpec(key="k", argv=("x",), label="a" * (MAX_LABEL + 1))
