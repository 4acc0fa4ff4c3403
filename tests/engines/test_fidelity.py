"""Planned commands against InferenceX's records: one setting under two spellings is no
difference, a value or a flag one side lacks is, and what the plugin owns or a recipe states
is not an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from core.helpers import agentic, write
from pydantic import ValidationError

from pytest_infx.engines.fidelity import (
    SYNTHETIC_ACCEPTANCE,
    Difference,
    Stated,
    client_differences,
    flags,
    server_differences,
    stated_in,
    unstated,
    value,
)
from pytest_infx.recipes.loader import RecipeSource, load_file
from pytest_infx.recipes.points import expand
from pytest_infx.recipes.schema import Recipe


def load_source(folder: Path, data: dict[str, Any]) -> RecipeSource:
    return load_file(write(folder / "k.yaml", data))


def test_one_value_has_one_spelling() -> None:
    assert value("0.80") == value("0.8") == "0.8"
    assert value("8.0") == value(8) == "8"
    assert value("True") == value(True) == "true"
    assert value("inf") == "inf"
    assert value("fp8_e4m3") == "fp8_e4m3"
    assert value('{"b": 1, "a": true}') == value('{"a":true,"b":1}') == '{"a":true,"b":1}'
    assert value(None) is None


def test_flags_are_read_as_the_engine_s_parser_names_them() -> None:
    sglang = ["python3", "-m", "sglang.launch_server", "--tp", "8", "--ep-size=8"]
    assert flags([*sglang, "--trust_remote_code"], "sglang") == {
        "--tp-size": "8",
        "--expert-parallel-size": "8",
        "--trust-remote-code": None,
    }
    vllm = ["vllm", "serve", "org/model", "--gpu-memory-utilization", "0.90", "-tp", "4"]
    assert flags(vllm, "vllm") == {"--tensor-parallel-size": "4", "--gpu-memory-utilization": "0.9"}


def test_a_negative_number_is_a_value_not_a_flag() -> None:
    assert flags(["x", "--top-k", "-1"], "vllm") == {"--top-k": "-1"}


def test_server_differences_are_values_flags_and_variables_one_side_lacks() -> None:
    record = {
        "argv": ["sglang", "--tp", "8", "--mem-fraction-static", "0.80", "--enable-symm-mem"],
        "env": {"SLURM_JOB_ID": "4242", "SGLANG_RADIX_FORCE_MISS": "1"},
        "files": {"/workspace/opts.yml": {"text": "a: 1\n"}},
    }
    found = server_differences(
        "sglang",
        ["sglang", "--tp-size", "8", "--mem-fraction-static", "0.8", "--stream-interval", "10"],
        {"SGLANG_RADIX_FORCE_MISS": "1"},
        {"opts.yml": "a: 2\n"},
        record,
    )
    assert found == [
        Difference("server-flag", "--enable-symm-mem", "true", None),
        Difference("server-flag", "--stream-interval", None, "10"),
        Difference("server-file", "--extra-llm-api-options.a", "1", "2"),
    ]


def test_an_options_file_s_settings_differ_one_by_one() -> None:
    record = {"argv": ["t"], "files": {"/w/o.yml": {"text": "a: 1\nspeculative_config: {k: 3}\n"}}}
    found = server_differences("trtllm", ["t"], {}, {"o.yaml": "a: 1.0\n"}, record)
    assert found == [
        Difference("server-file", "--extra-llm-api-options.speculative_config", '{"k":3}', None)
    ]


def test_a_recorded_file_a_flag_or_variable_names_is_that_setting_s_difference_only() -> None:
    record = {
        "argv": ["sglang", "--chat-template", "/runner/t/dsv4.jinja"],
        "env": {"MOONCAKE_CONFIG_PATH": "/workspace/mc.json"},
        "files": {
            "/runner/t/dsv4.jinja": {"bytes": 9, "sha256": "0123456789abcdef"},
            "/workspace/mc.json": {"bytes": 2, "sha256": "fedcba9876543210", "text": "{}"},
        },
    }
    found = server_differences("sglang", ["sglang"], {}, {}, record)
    assert found == [
        Difference("server-flag", "--chat-template", "dsv4.jinja sha256:0123456789ab", None),
        Difference("server-env", "MOONCAKE_CONFIG_PATH", "mc.json sha256:fedcba987654", None),
    ]
    assert unstated(found, [])[0] == found


def test_a_compilation_config_differs_key_by_key() -> None:
    def argv(config: str) -> list[str]:
        return ["vllm", "serve", "m", "--compilation-config", config]

    record = {"argv": argv('{"cudagraph_mode": "FULL", "cudagraph_capture_sizes": [4, 8]}')}
    found = server_differences("vllm", argv('{"cudagraph_mode":"FULL"}'), {}, {}, record)
    assert found == [
        Difference("server-flag", "--compilation-config.cudagraph_capture_sizes", "[4,8]", None)
    ]


def test_a_chat_template_in_the_model_s_own_folder_is_the_plugin_s() -> None:
    own = Difference("server-flag", "--chat-template", "/scratch/M3/chat_template.jinja", None)
    other = Difference("server-flag", "--chat-template", "/scratch/t/dsv4.jinja", None)
    assert unstated([own, other], [])[0] == [other]


def test_one_options_file_a_side_is_compared_by_its_settings_not_its_name() -> None:
    record = {"argv": ["trtllm-serve"], "files": {"/w/key.yml": {"text": "b: 1\na: x\n"}}}
    planned = {"extra-llm-api-options.yaml": "a: 'x'\nb: 1\n"}
    assert server_differences("trtllm", ["trtllm-serve"], {}, planned, record) == []


def test_runner_variables_and_paths_are_the_plugin_s() -> None:
    found = [
        Difference("server-env", "AIPERF_REQUIRED_SERVER_METRIC_PREFIX", "vllm:", None),
        Difference("server-env", "TRITON_CACHE_DIR", "/tmp/triton", None),
        Difference("server-env", "WEKA_LOADER_OVERRIDE", "1", None),
        Difference("server-env", "SGLANG_RADIX_FORCE_MISS", "1", None),
    ]
    left, counts = unstated(found, [])
    assert left == [found[-1]]
    assert counts["owned"] == 3


def test_the_acceptance_the_plugin_forces_is_the_plugin_s_and_only_where_it_sets_it() -> None:
    found = [
        Difference("server-env", "SGLANG_SIMULATE_ACC_LEN", None, "3.39"),
        Difference("server-env", "SGLANG_SIMULATE_ACC_METHOD", None, "match-expected"),
        Difference("server-env", "SGLANG_SIMULATE_ACC_LEN", "2.1", None),
    ]
    left, counts = unstated(found, [])
    assert left == [found[-1]]
    assert counts["owned"] == 2


def test_vllm_s_synthetic_acceptance_keys_are_the_plugin_s_the_rest_of_its_config_compared() -> (
    None
):
    record = {
        "argv": [
            "vllm",
            "serve",
            "m",
            "--speculative-config",
            '{"method": "mtp", "num_speculative_tokens": 2}',
        ]
    }
    synthetic = (
        '{"method":"mtp","num_speculative_tokens":%d,'
        '"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.5}'
    )
    same = server_differences(
        "vllm", ["vllm", "serve", "m", "--speculative-config", synthetic % 2], {}, {}, record
    )
    assert unstated(same, []) == ([], {"owned": 1, "better-default": 0, "tool-limit": 0})
    longer = server_differences(
        "vllm", ["vllm", "serve", "m", "--speculative-config", synthetic % 3], {}, {}, record
    )
    assert [d.name for d in unstated(longer, [])[0]] == ["--speculative-config"]


def test_atom_s_acceptance_flag_is_the_plugin_s_where_it_sets_it() -> None:
    found = [
        Difference("server-flag", "--spec-decode-acceptance-length", None, "2.49"),
        Difference("server-flag", "--spec-decode-acceptance-rate", "0.66", None),
    ]
    assert unstated(found, [])[0] == [found[-1]]


def test_a_speculative_config_s_draft_is_compared_by_name_not_by_where_its_weights_are() -> None:
    def config(draft: str) -> list[str]:
        return [
            "vllm",
            "serve",
            "m",
            "--speculative-config",
            f'{{"method":"eagle3","model":"{draft}"}}',
        ]

    record = {"argv": config("/data/models/M3-EAGLE3")}
    assert server_differences("vllm", config("$MODEL_ROOT/M3-EAGLE3"), {}, {}, record) == []
    other = server_differences("vllm", config("$MODEL_ROOT/M3-EAGLE"), {}, {}, record)
    assert [d.name for d in other] == ["--speculative-config"]


def test_atom_s_acceptance_by_rate_or_by_length_is_one_setting() -> None:
    record = {"argv": ["atom", "--method", "mtp", "--spec-decode-acceptance-rate", "0.66"]}
    found = server_differences(
        "atom",
        ["atom", "--method", "mtp", "--spec-decode-acceptance-length", "2.98"],
        {},
        {},
        record,
    )
    assert [d.name for d in found] == [SYNTHETIC_ACCEPTANCE]
    assert unstated(found, [])[0] == []


def test_aiperf_s_missing_warm_up_per_lane_is_a_tool_limit_for_every_recipe() -> None:
    found = [
        Difference("client", "--warmup-requests-per-lane", "10", None),
        Difference("client", "--warmup-requests-per-lane", "10", "4"),
    ]
    left, counts = unstated(found, [])
    assert left == [found[-1]]
    assert counts["tool-limit"] == 1


def test_where_the_tokenizer_is_read_from_is_the_plugin_s() -> None:
    found = [
        Difference("server-flag", "--tokenizer-path", "/models/Qwen3.5-FP8", "Qwen/Qwen3.5-FP8"),
        Difference("server-flag", "--tokenizer-worker-num", None, "6"),
    ]
    left, counts = unstated(found, [])
    assert left == [found[-1]]
    assert counts["owned"] == 1


def test_an_agentic_point_s_admission_is_the_plugin_s() -> None:
    found = [Difference("server-flag", "--max-num-seqs", "256", "64")]
    assert unstated(found, [])[0] == found
    assert unstated(found, [], admission={"max-num-seqs": "admission"})[0] == []


def test_a_trtllm_options_file_flag_has_one_name() -> None:
    assert flags(["trtllm-serve", "m", "--config", "a.yml"], "trtllm") == {
        "--extra-llm-api-options": "options file"
    }


def test_client_flags_are_read_as_the_plan_s_settings() -> None:
    record = {
        "argv": [
            *("python3", "bench.py", "--random-input-len", "1024", "--num-prompts", "10"),
            *("--ignore-eos", "--base-url", "http://0.0.0.0:8888"),
        ]
    }
    settings = {
        "input_len": 1024,
        "num_prompts": 20,
        "ignore_eos": True,
        "seed": 0,
        "endpoint": "/v1/completions",
        "stream": True,
        "chat_template": False,
    }
    found = client_differences(settings, record)
    assert found == [
        Difference("client", "--base-url", "http://0.0.0.0:8888", None),
        Difference("client", "num_prompts", "10", "20"),
    ]


def test_the_chat_template_flags_are_read_as_the_chat_template_setting() -> None:
    settings = {"seed": 0, "endpoint": "/v1/completions", "stream": True}
    plain = {"argv": ["python3", "bench.py", "--use-chat-template"]}
    dsv4 = {"argv": ["python3", "bench.py", "--use-chat-template", "--dsv4"]}
    aiperf = {"argv": ["aiperf", "profile", "--apply-chat-template"]}
    assert client_differences({**settings, "chat_template": True}, plain) == []
    assert client_differences({**settings, "chat_template": "deepseek-v4"}, dsv4) == []
    assert client_differences({**settings, "chat_template": True}, dsv4) == [
        Difference("client", "chat_template", "deepseek-v4", "true")
    ]
    assert client_differences({**settings, "chat_template": False}, plain) == [
        Difference("client", "chat_template", "true", "false")
    ]
    ours = {**settings, "client": "aiperf", "chat_template": True}
    assert client_differences(ours, aiperf) == []


def test_owned_and_stated_differences_are_counted_per_reason_the_rest_are_left() -> None:
    found = [
        Difference("server-flag", "--host", "0.0.0.0", "127.0.0.1"),
        Difference("server-flag", "--max-running-requests", "256", "128"),
        Difference("server-flag", "--cuda-graph-max-bs", "512", "64"),
        Difference("server-env", "SGLANG_X", "1", None),
    ]
    stated = [
        Stated("--max-running-requests", "*", "*", "better-default", "admission per point"),
        Stated("SGLANG_X", "1", None, "tool-limit"),
    ]
    left, counts = unstated(found, stated)
    assert left == [Difference("server-flag", "--cuda-graph-max-bs", "512", "64")]
    assert counts == {"owned": 1, "better-default": 1, "tool-limit": 1}


def test_a_recipe_states_its_differences_outside_its_fingerprint(tmp_path: Path) -> None:
    data = agentic("k")
    plain = expand(load_source(tmp_path, data))
    data["differences"] = [
        {"flag": "--max-running-requests", "inferencex": 256, "ours": "*", "reason": "owned"},
        {
            "variable": "SGLANG_X",
            "inferencex": "1",
            "ours": None,
            "reason": "better-default",
            "evidence": "a measurement",
        },
    ]
    stated = expand(load_source(tmp_path, data))
    assert [p.fingerprint for p in stated] == [p.fingerprint for p in plain]
    assert stated_in(stated[0].recipe) == [
        Stated("--max-running-requests", "256", "*", "owned"),
        Stated("SGLANG_X", "1", None, "better-default", "a measurement"),
    ]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"inferencex": 1, "ours": 2, "reason": "owned"}, "names exactly one"),
        ({"flag": "--a", "variable": "A", "inferencex": 1, "ours": 2, "reason": "owned"}, "one"),
        ({"flag": "--a", "inferencex": 1, "ours": 2, "reason": "better-default"}, "evidence"),
        ({"flag": "--a", "inferencex": 1, "ours": 2, "reason": "taste"}, "reason"),
    ],
)
def test_a_malformed_stated_difference_is_rejected(entry: dict[str, Any], problem: str) -> None:
    data = agentic("k")
    data["differences"] = [entry]
    with pytest.raises(ValidationError, match=problem):
        Recipe.model_validate(data)
