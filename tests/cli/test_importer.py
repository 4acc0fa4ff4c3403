"""``infx import-inferencex``: a master config's single-node keys become recipes holding exactly
their points, and the committed recipes/inferencex/ is the generator's output for InferenceX's
master configs at 843c6254f (re-generated here from the reference data beside the repository)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from inferencex_reference import RECIPES, reference

from pytest_infx.cli import main
from pytest_infx.cli.importer import (
    GENERATED_FOLDER,
    GOLDEN,
    differences,
    generate,
    master_keys,
    read_records,
)
from pytest_infx.engines.fidelity import speculative_of as of_curves


def speculative_of(engine: str, prefix: str, argv: list[str]) -> str | None:
    return of_curves(engine, prefix, argv, GOLDEN)


MASTER = """\
dsr1-fp4-b200-sglang:
  image: lmsysorg/sglang:v0.5.16-cu130
  model: nvidia/DeepSeek-R1-0528-FP4-V2
  model-prefix: dsr1
  runner: b200
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, ep: 1, conc-start: 4, conc-end: 24 }
      - { tp: 8, ep: 8, dp-attn: true, conc-list: [256] }
kimik3-fp4-mi355x-atom-agentic-mtp:
  image: rocm/atom-dev:nightly@sha256:%s
  model: moonshotai/Kimi-K3
  model-prefix: kimik3
  runner: cluster:mi355x-amds
  precision: fp4
  framework: atom
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.086
      search-space:
      - { tp: 8, kv-offloading: none, conc-list: [1, 4], spec-decoding: mtp }
      - { tp: 8, kv-offloading: dram, kv-offload-backend: { name: lmcache }, conc-list: [8] }
dsr1-fp4-gb200-dynamo-trt:
  image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1
  model: nvidia/DeepSeek-R1-0528-FP4-V2
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [1] }
""" % ("ab" * 32)


def checkout(tmp_path: Path) -> Path:
    configs = tmp_path / "infx" / "configs"
    configs.mkdir(parents=True)
    (configs / "amd-master.yaml").write_text(MASTER, encoding="utf-8")
    return tmp_path / "infx"


def test_each_single_node_key_of_a_served_framework_is_one_recipe(tmp_path: Path) -> None:
    keys = master_keys(checkout(tmp_path))
    assert [k.key for k in keys] == ["dsr1-fp4-b200-sglang", "kimik3-fp4-mi355x-atom-agentic-mtp"]
    fixed = yaml.safe_load(generate(keys)["dsr1-fp4-b200-sglang.yaml"])
    assert fixed["runner"] == "b200"
    assert fixed["model"]["served-name"] == fixed["model"]["hub-id"]
    assert fixed["model"]["max-model-len"] == 8192 + 1024 + 256
    assert fixed["engine"]["image-unpinned"]
    assert fixed["fixed-seq-len"]["points"] == [
        {"tp": 4, "isl": 8192, "osl": 1024, "concurrency": [4, 8, 16, 24]},
        {"tp": 8, "isl": 8192, "osl": 1024, "variant": "ep8-dpa", "concurrency": [256]},
    ]


def test_an_agentic_key_names_its_variants_as_compare_configs_does(tmp_path: Path) -> None:
    text = generate(master_keys(checkout(tmp_path)))["kimik3-fp4-mi355x-atom-agentic-mtp.yaml"]
    agentic = yaml.safe_load(text)
    assert agentic["runner"] == "mi355x"
    assert "image-unpinned" not in agentic["engine"]
    assert agentic["agentic"] == {
        "duration": 3600,
        "points": [
            {"tp": 8, "concurrency": [1, 4]},
            {"tp": 8, "variant": "lmcache", "concurrency": [8]},
        ],
    }


def test_the_generated_recipes_have_the_master_configs_points(tmp_path: Path) -> None:
    infx = checkout(tmp_path)
    recipes = tmp_path / "recipes"
    assert main(["import-inferencex", str(infx), "--recipes", str(recipes)]) == 0
    assert main(["compare-configs", str(infx), "--recipes", str(recipes)]) == 0


def test_a_key_a_hand_written_recipe_holds_is_not_generated(tmp_path: Path) -> None:
    infx = checkout(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "mine.yaml").write_text("key: dsr1-fp4-b200-sglang\n", encoding="utf-8")
    assert main(["import-inferencex", str(infx), "--recipes", str(recipes)]) == 0
    generated = sorted(p.name for p in (recipes / GENERATED_FOLDER).iterdir())
    assert generated == ["kimik3-fp4-mi355x-atom-agentic-mtp.yaml"]


def test_check_reports_an_edited_or_stray_file_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    infx = checkout(tmp_path)
    recipes = tmp_path / "recipes"
    main(["import-inferencex", str(infx), "--recipes", str(recipes)])
    out = recipes / GENERATED_FOLDER
    edited = out / "dsr1-fp4-b200-sglang.yaml"
    edited.write_text(edited.read_text(encoding="utf-8") + "# hand edit\n", encoding="utf-8")
    (out / "old-key.yaml").write_text("key: old-key\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["import-inferencex", str(infx), "--recipes", str(recipes), "--check"]) == 1
    report = capsys.readouterr().out
    assert "dsr1-fp4-b200-sglang.yaml: differs from the generator's output" in report
    assert "old-key.yaml: not generated" in report
    assert (out / "old-key.yaml").exists()
    assert main(["import-inferencex", str(infx), "--recipes", str(recipes)]) == 0
    assert not (out / "old-key.yaml").exists()
    assert list(differences(out, generate(master_keys(infx)))) == []


def test_a_folder_without_master_configs_is_an_error_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import-inferencex", str(tmp_path)]) == 2
    assert "no *-master.yaml here; give the checkout root" in capsys.readouterr().out


def test_the_committed_recipes_are_the_generator_s_output_for_843c6254f(
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = reference()
    command = ["import-inferencex", str(folder / "data"), "--recipes", str(RECIPES), "--check"]
    status = main([*command, "--commands", str(folder / "commands.jsonl")])
    assert status == 0, capsys.readouterr().out


def record(conc: int, extra: list[str], env: dict[str, str]) -> dict[str, object]:
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--port", "8888"]
    return {
        "key": "dsr1-fp4-b200-sglang",
        "params": {"tp": 4, "conc": conc, "ep": 1, "isl": 8192, "osl": 1024},
        "server": {
            "argv": [*argv, "--tp", "4", "--mem-fraction-static", "0.85", *extra],
            "env": {"SLURM_JOB_ID": "4242", "SGLANG_SIMULATE_ACC_LEN": "3", **env},
        },
    }


def test_a_recording_gives_each_point_its_script_s_flags_and_variables(tmp_path: Path) -> None:
    recording = [
        record(4, ["--cuda-graph-max-bs", "4", "--cuda-graph-bs", "[1, 2, 4]"], {"A": "1"}),
        record(8, ["--cuda-graph-max-bs", "8", "--chat-template", "/w/t.jinja"], {}),
    ]
    commands = tmp_path / "commands.jsonl"
    commands.write_text("\n".join(json.dumps(r) for r in recording), encoding="utf-8")
    keys = master_keys(checkout(tmp_path))
    text = generate(keys, records=read_records(commands))["dsr1-fp4-b200-sglang.yaml"]
    recipe = yaml.safe_load(text)
    assert recipe["engine"]["args"] == {"mem-fraction-static": 0.85}
    assert "env" not in recipe["engine"]
    assert recipe["overrides"] == [
        {
            "when": {"tp": 4, "isl": 8192, "osl": 1024, "concurrency": [4]},
            "engine": {
                "args": {"cuda-graph-bs": [1, 2, 4], "cuda-graph-max-bs": 4},
                "env": {"A": "1"},
            },
        },
        {
            "when": {"tp": 4, "isl": 8192, "osl": 1024, "concurrency": [8]},
            "engine": {"args": {"cuda-graph-max-bs": 8}},
        },
    ]


def test_an_agentic_key_gets_the_aiperf_settings_every_point_passes_other_than_the_default(
    tmp_path: Path,
) -> None:
    def aiperf_record(conc: int, grace: str) -> dict[str, object]:
        client = ["aiperf", "profile", "--public-dataset", "traces_256k", "--random-seed", "42"]
        return {
            "key": "kimik3-fp4-mi355x-atom-agentic-mtp",
            "params": {"tp": 8, "conc": conc, "ep": 1},
            "server": {"argv": ["python3", "-m", "atom.entrypoints.openai_server", "--model", "m"]},
            "client": {"argv": [*client, "--warmup-grace-period", grace]},
        }

    recording = [aiperf_record(1, "3600"), aiperf_record(4, "1800")]
    commands = tmp_path / "commands.jsonl"
    commands.write_text("\n".join(json.dumps(r) for r in recording), encoding="utf-8")
    keys = master_keys(checkout(tmp_path))
    text = generate(keys, records=read_records(commands))["kimik3-fp4-mi355x-atom-agentic-mtp.yaml"]
    recipe = yaml.safe_load(text)
    block = recipe["agentic"]
    assert block["traces"] == "traces_256k"
    assert "seed" not in block and "warmup-grace-period" not in block
    assert recipe["overrides"] == [
        {"when": {"tp": 8, "concurrency": [1]}, "agentic": {"warmup-grace-period": 3600}}
    ]


def test_a_generated_recipe_states_each_difference_it_keeps_with_its_reason(
    tmp_path: Path,
) -> None:
    spec = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2"]
    spec += ["--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3"]
    recording = [record(4, [*spec, "--chat-template", "/w/t.jinja"], {})]
    recording[0]["server"]["files"] = {"/w/t.jinja": {"bytes": 9, "sha256": "ab"}}  # type: ignore[index]
    recording[0]["client"] = {"argv": ["python3", "b.py", "--use-chat-template", "--dsv4"]}
    commands = tmp_path / "commands.jsonl"
    commands.write_text(json.dumps(recording[0]), encoding="utf-8")
    keys = master_keys(checkout(tmp_path))
    recipe = yaml.safe_load(
        generate(keys, records=read_records(commands))["dsr1-fp4-b200-sglang.yaml"]
    )
    assert "chat-template" not in recipe["engine"].get("args", {})
    assert recipe["fixed-seq-len"]["chat-template"] == "deepseek-v4"
    stated = {
        (d.get("flag") or d.get("setting"), d["inferencex"], d["reason"])
        for d in recipe["differences"]
    }
    assert stated == {
        ("--chat-template", "*", "tool-limit"),
        ("--speculative-algorithm", "EAGLE", "owned"),
        ("--speculative-eagle-topk", "1", "owned"),
        ("--speculative-num-draft-tokens", "3", "owned"),
        ("--speculative-num-steps", "2", "owned"),
    }
    assert all(d["ours"] is None and d["evidence"] for d in recipe["differences"])


def test_vllm_s_mtp_config_becomes_a_speculative_block_where_the_model_has_a_curve() -> None:
    argv = [
        "vllm",
        "serve",
        "m",
        "--speculative-config",
        '{"method":"mtp","num_speculative_tokens":2}',
    ]
    assert (
        speculative_of("vllm", "dsv4", argv) == "{method: mtp, draft-length: 2, golden: dsv4_mtp}"
    )
    assert speculative_of("vllm", "dsr1", argv) is None
    synthetic = '{"method":"mtp","num_speculative_tokens":3,"rejection_sample_method":"synthetic"}'
    assert speculative_of("vllm", "dsv4", [*argv[:4], synthetic]) == (
        "{method: mtp, draft-length: 3, golden: dsv4_mtp}"
    )
    drafted = '{"method":"mtp","num_speculative_tokens":2,"model":"d"}'
    assert speculative_of("vllm", "dsv4", [*argv[:4], drafted]) is None


def test_vllm_s_separate_draft_becomes_a_speculative_block_where_the_draft_has_a_curve() -> None:
    config = {
        "method": "eagle3",
        "model": "Inferact/MiniMax-M3-EAGLE3-GQA",
        "num_speculative_tokens": 3,
        "attention_backend": "TRITON_ATTN",
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 2.78,
    }
    argv = ["vllm", "serve", "m", "--speculative-config", json.dumps(config)]
    assert speculative_of("vllm", "minimaxm3", argv) == (
        "{method: eagle3, draft: Inferact/MiniMax-M3-EAGLE3-GQA,"
        ' settings: {"attention_backend": "TRITON_ATTN"}, draft-length: 3,'
        " golden: minimaxm3_eagle3_gqa}"
    )
    config["model"] = "Inferact/Other-Draft"
    assert speculative_of("vllm", "minimaxm3", [*argv[:4], json.dumps(config)]) is None


def test_atom_s_mtp_method_becomes_a_speculative_block_where_the_model_has_a_curve() -> None:
    argv = ["python3", "-m", "atom", "--method", "mtp", "--num-speculative-tokens", "3"]
    assert speculative_of("atom", "qwen3.5", argv) == (
        "{method: mtp, draft-length: 3, golden: qwen3.5_mtp}"
    )
    assert speculative_of("atom", "dsr1", argv) is None
    assert speculative_of("atom", "qwen3.5", [*argv, "--draft-model", "d"]) is None


def test_sglang_mtp_flags_become_a_speculative_block_where_the_model_has_a_curve() -> None:
    argv = ["sglang", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3"]
    argv += ["--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    block = "{method: eagle, draft-length: 3, golden: qwen3.5_mtp}"
    assert speculative_of("sglang", "qwen3.5", argv) == block
    assert speculative_of("sglang", "dsr1", argv) is None
    assert speculative_of("sglang", "qwen3.5", [*argv[:-1], "5"]) is None
    assert speculative_of("vllm", "qwen3.5", argv) is None


def test_tensorrt_llm_s_mtp_options_become_a_speculative_block_where_the_model_has_a_curve() -> (
    None
):
    argv = ["trtllm-serve", "m", "--config", "/w/o.yml"]

    def files(config: str) -> dict[str, object]:
        return {"/w/o.yml": {"text": f"stream_interval: 10\nspeculative_config: {config}\n"}}

    mtp = files("{decoding_type: MTP, num_nextn_predict_layers: 3}")
    block = "{method: mtp, draft-length: 3, golden: qwen3.5_mtp}"
    assert of_curves("trtllm", "qwen3.5", argv, GOLDEN, files=mtp) == block
    assert of_curves("trtllm", "dsr1", argv, GOLDEN, files=mtp) is None
    spelled = files("{decoding_type: MTP, max_draft_len: 3}")
    assert of_curves("trtllm", "qwen3.5", argv, GOLDEN, files=spelled) is None
