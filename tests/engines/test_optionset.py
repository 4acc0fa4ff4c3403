"""A planned server command against an option set: what each engine's parser would refuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_infx.engines.optionset import Flag, OptionSet, load
from pytest_infx.engines.optionsource import atom, trtllm

from .engine_sources import atom_checkout, trtllm_checkout

OPTIONS = "{files}/extra-llm-api-options.yaml"
GOOD = {
    "kv_cache_config": {"free_gpu_memory_fraction": 0.8, "dtype": "fp8"},
    "cuda_graph_config": {"enable_padding": True, "max_batch_size": 64},
    "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 3},
    "enable_attention_dp": True,
}
ARGV = ["/models/dsr1", "--host", "127.0.0.1", "--port", "8000", "--tp_size", "8"]
ARGV += ["--backend", "pytorch", "--extra_llm_api_options", OPTIONS]


@pytest.fixture(scope="module")
def trt(tmp_path_factory: pytest.TempPathFactory) -> OptionSet:
    return trtllm(trtllm_checkout(tmp_path_factory.mktemp("trt")), "1.3.0rc14")


def files(options: object) -> dict[str, str]:
    return {OPTIONS: yaml.safe_dump(options)}


def test_inferencex_s_command_and_options_are_accepted(trt: OptionSet) -> None:
    assert trt.check_argv(ARGV, files(GOOD)) is None
    assert trt.check_argv([*ARGV[:-2], "--config=" + OPTIONS], files(GOOD)) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*ARGV, "--tp-size", "8"], "no such option: --tp-size"),
        ([*ARGV, "--backend", "tensorrt"], "invalid choice 'tensorrt'"),
        ([*ARGV, "--max_batch_size", "many"], "'many' is not a valid int"),
        ([*ARGV, "--trust_remote_code=yes"], "--trust_remote_code does not take a value"),
        ([*ARGV, "--chat_template"], "--chat_template requires an argument"),
        (ARGV[1:], "takes 1 positional argument(s), got 0"),
    ],
)
def test_what_trtllm_serve_refuses_is_named(trt: OptionSet, argv: list[str], message: str) -> None:
    found = trt.check_argv(argv, files(GOOD))
    assert found is not None and message in found


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({**GOOD, "kv_cache_confg": {}}, "TorchLlmArgs has no field 'kv_cache_confg'"),
        (
            {**GOOD, "kv_cache_config": {"free_memory": 0.8}},
            ".kv_cache_config: KvCacheConfig has no field 'free_memory'",
        ),
        (
            {**GOOD, "speculative_config": {"decoding_type": "MTP", "num_layers": 3}},
            "none of MTPDecodingConfig, Eagle3DecodingConfig has a field 'num_layers'",
        ),
    ],
)
def test_an_llm_api_option_no_model_has_is_named(
    trt: OptionSet, options: dict[str, object], message: str
) -> None:
    found = trt.check_argv(ARGV, files(options))
    assert found is not None and message in found


def test_atom_takes_both_spellings_and_refuses_a_choice_it_lacks(tmp_path: Path) -> None:
    found = atom(atom_checkout(tmp_path / "atom"), "0.1.0")
    argv = ["--model", "/m", "--server-port", "8000", "-tp", "8", "--kv-cache-dtype", "fp8"]
    argv += ["--block_size", "16", "--method", "mtp", "--num-speculative-tokens", "3"]
    argv += ["--spec-decode-acceptance-length", "2.5"]
    assert found.check_argv(argv, {}) is None
    refused = found.check_argv([*argv, "--kv_cache_dtype", "fp4"], {})
    assert refused is not None and "invalid choice 'fp4'" in refused
    unknown = found.check_argv([*argv, "--state-checkpoint-slots", "4"], {})
    assert unknown == "no such option: --state-checkpoint-slots"


def test_no_option_set_ships_for_a_release_whose_source_was_not_read() -> None:
    assert load("trtllm", "1.3.0rc14") is None and load("atom", None) is None
    with pytest.raises(ValueError, match="extra"):
        OptionSet.model_validate(
            {"engine": "x", "release": "1", "source": "s", "made_by": "m", "spelling": "exact",
             "positionals": 0, "flags": {"--a": Flag(takes_value=True)}, "unknown": 1}
        )  # fmt: skip


TRT_RECIPE: dict[str, Any] = {
    "key": "dsv4-fp4-b200-trt-mtp",
    "model": {
        "hub-id": "deepseek-ai/DeepSeek-V4",
        "served-name": "deepseek-ai/DeepSeek-V4",
        "prefix": "dsv4",
        "precision": "fp4",
    },
    "runner": "b200",
    "engine": {
        "name": "trtllm",
        "version": "1.3.0rc14",
        "image": "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14@sha256:" + "ab" * 32,
        "args": {
            "backend": "pytorch",
            "extra_llm_api_options": {k: v for k, v in GOOD.items() if k != "speculative_config"},
        },
    },
    "fixed-seq-len": {
        "points": [{"tp": 8, "isl": 8192, "osl": 1024, "concurrency": [4, 8]}],
        "speculative": {"method": "mtp", "draft-length": 3, "golden": "dsv4_mtp"},
    },
}
REPO = Path(__file__).resolve().parents[2]


def engine_check(tmp_path: Path, recipe: dict[str, Any], found: OptionSet | None) -> object:
    from types import MappingProxyType

    from pytest_infx.engines.registry import BUILTIN, EngineRegistry
    from pytest_infx.engines.trtllm import TrtllmAdapter
    from pytest_infx.prepare import preflight

    class Pinned(TrtllmAdapter):
        def option_set(self, version: str | None) -> OptionSet | None:
            return found

    folder = tmp_path / "recipes"
    folder.mkdir(exist_ok=True)
    (folder / "t.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    registry = EngineRegistry(MappingProxyType({**BUILTIN, "trtllm": Pinned()}))
    return preflight.engine_check(folder, REPO / "golden", install=False, engines=registry)


def test_engine_check_reads_the_option_set_and_names_a_planted_flag(
    tmp_path: Path, trt: OptionSet
) -> None:
    from pytest_infx.engines.conformance import Report

    report = engine_check(tmp_path, TRT_RECIPE, trt)
    assert isinstance(report, Report)
    assert report.ok and not report.unchecked
    (run,) = report.runs
    assert (run.release, run.points, run.argvs) == ("trtllm 1.3.0rc14 option set", 2, 1)
    bad = {**TRT_RECIPE, "engine": {**TRT_RECIPE["engine"], "args": {"max-batch-size": 64}}}
    report = engine_check(tmp_path, bad, trt)
    assert isinstance(report, Report)
    (rejection,) = report.rejected
    assert rejection.message == "no such option: --max-batch-size"
    assert str(rejection.location).endswith(f"t.yaml:{_line(tmp_path, 'max-batch-size')}")


def test_without_an_option_set_the_points_are_unchecked_saying_how_to_make_one(
    tmp_path: Path,
) -> None:
    from pytest_infx.engines.conformance import Report

    report = engine_check(tmp_path, TRT_RECIPE, None)
    assert isinstance(report, Report)
    assert len(report.unchecked) == 2 and not report.runs
    assert "infx engine option-set trtllm CHECKOUT --release 1.3.0rc14" in report.unchecked[0]


def _line(tmp_path: Path, text: str) -> int:
    lines = (tmp_path / "recipes" / "t.yaml").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)
