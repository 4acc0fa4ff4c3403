"""Option sets read from source checkouts the tests make (``engine_sources.py``), without
importing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.engines.optionsource import SourceError, atom, trtllm

from .engine_sources import atom_checkout, head, trtllm_checkout


def test_trtllm_s_click_options_and_option_models_are_read(tmp_path: Path) -> None:
    checkout = trtllm_checkout(tmp_path / "trt")
    found = trtllm(checkout, "1.3.0rc14")
    assert found.source.startswith(f"NVIDIA/TensorRT-LLM@{head(checkout)} ")
    assert (found.engine, found.release, found.spelling, found.positionals) == (
        "trtllm", "1.3.0rc14", "exact", 1
    )  # fmt: skip
    assert found.flags["--tp_size"].type == "int" and found.flags["--tp_size"].takes_value
    assert found.flags["--backend"].choices == ("pytorch", "trt", "_autodeploy")
    assert not found.flags["--trust_remote_code"].takes_value
    assert found.flags["--kv_cache_free_gpu_memory_fraction"].type == "float"
    assert found.options_flags == ("--extra_llm_api_options", "--config")
    assert found.root == "TorchLlmArgs"
    root = found.models["TorchLlmArgs"]
    assert {"model", "kv_cache_config", "speculative_config", "cuda_graph_config"} <= set(root)
    assert "_internal" not in root
    assert "MTPDecodingConfig" in root["speculative_config"]
    assert found.models["MTPDecodingConfig"]["max_draft_len"] == "Optional[int]"


def test_atom_s_add_argument_calls_are_read_from_its_three_modules(tmp_path: Path) -> None:
    checkout = atom_checkout(tmp_path / "atom")
    found = atom(checkout, "0.1.0")
    assert found.source.startswith(f"ROCm/ATOM@{head(checkout)} ")
    assert found.spelling == "kebab-snake" and found.positionals == 0
    assert {"--server-port", "--model", "-tp", "--tensor-parallel-size"} <= set(found.flags)
    assert found.flags["--kv_cache_dtype"].choices == ("auto", "fp8")
    assert not found.flags["--enable-prefix-caching"].takes_value
    assert not found.flags["--no-trust-remote-code"].takes_value
    assert found.flags["--spec-decode-acceptance-length"].type == "float"


def test_a_checkout_without_the_files_is_named(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"serve\.py: cannot be read .*right checkout"):
        trtllm(tmp_path, "1.0")
    with pytest.raises(SourceError, match=r"none of atom/utils/arg_parser\.py"):
        atom(tmp_path, "1.0")
    broken = tmp_path / "tensorrt_llm" / "commands" / "serve.py"
    broken.parent.mkdir(parents=True)
    broken.write_text("def serve(:\n")
    with pytest.raises(SourceError, match=r"serve\.py:1: not Python"):
        trtllm(tmp_path, "1.0")
