from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_infx.cli import main
from pytest_infx.cli.compare import frameworks, master_points, variant_of


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


MASTER = """\
qwen3.5-fp8-b200-sglang-agentic-mtp:
  image: lmsysorg/sglang:v0.5.16-cu130
  runner: cluster:b200-dgxc
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - {tp: 8, ep: 1, spec-decoding: mtp, kv-offloading: none, conc-list: [1, 4]}
      - tp: 8
        ep: 1
        spec-decoding: mtp
        kv-offloading: dram
        kv-offload-backend: {name: hicache}
        conc-list: [64]
minimaxm3-fp4-b200-dynamo-trt-agentic-mtp:
  framework: dynamo-trt
  runner: cluster:b200-dgxc
  scenarios:
    agentic-coding:
    - search-space:
      - {tp: 8, conc-list: [1]}
"""


def checkout(tmp_path: Path) -> Path:
    write(tmp_path / "infx" / "configs" / "nvidia-master.yaml", MASTER)
    return tmp_path / "infx"


def recipe(tmp_path: Path, arms: list[dict[str, object]], spec: bool = True) -> Path:
    data: dict[str, object] = {
        "key": "qwen3.5-fp8-b200-sglang-agentic-mtp",
        "model": {
            "hub-id": "Qwen/Qwen3.5-397B-A17B-FP8",
            "served-name": "qwen3.5",
            "prefix": "qwen3.5",
            "precision": "fp8",
        },
        "runner": "b200",
        "engine": {"name": "sglang", "image": f"lmsysorg/sglang:v0.5.16-cu130@sha256:{'7b' * 32}"},
        "agentic": {"points": arms},
    }
    if spec:
        data["agentic"] = {
            "points": arms,
            "speculative": {"method": "eagle", "draft-length": 3, "golden": "qwen3.5_mtp"},
        }
    write(tmp_path / "recipes" / "q.yaml", yaml.safe_dump(data, sort_keys=False))
    return tmp_path / "recipes"


def test_variant_names_follow_what_serves_the_tp_differently() -> None:
    assert variant_of({"tp": 8, "ep": 1, "kv-offloading": "none"}) == ""
    assert variant_of({"tp": 8, "ep": 8, "dp-attn": True, "kv-offloading": "none"}) == "ep8-dpa"
    entry = {"kv-offloading": "dram", "kv-offload-backend": {"name": "mooncake"}, "dcp-size": 8}
    assert variant_of(entry) == "dcp8-mooncake"


def test_master_points_are_the_single_node_vllm_and_sglang_agentic_points(tmp_path: Path) -> None:
    side = master_points(checkout(tmp_path))
    assert list(side.points) == ["qwen3.5-fp8-b200-sglang-agentic-mtp"]
    assert [p.name for p in side.points["qwen3.5-fp8-b200-sglang-agentic-mtp"]] == [
        "tp8-c1",
        "tp8-c4",
        "tp8-c64-hicache",
    ]
    assert side.runners == {"qwen3.5-fp8-b200-sglang-agentic-mtp": "b200"}
    assert side.skipped == 1
    assert master_points(checkout(tmp_path) / "configs").points == side.points


def test_the_frameworks_compared_are_those_an_adapter_names(tmp_path: Path) -> None:
    """A framework comes in when an engine adapter names it as its InferenceX framework; an
    adapter provided for ``dynamo-trt`` would bring in its points."""
    assert frameworks() == ("vllm", "sglang", "atom", "trt")
    side = master_points(checkout(tmp_path), served=("dynamo-trt",))
    assert list(side.points) == ["minimaxm3-fp4-b200-dynamo-trt-agentic-mtp"]
    assert side.skipped == 1


def test_the_same_points_on_both_sides_is_no_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arms: list[dict[str, object]] = [
        {"tp": 8, "concurrency": [1, 4]},
        {"tp": 8, "variant": "hicache", "concurrency": [64]},
    ]
    status = main(
        ["compare-configs", str(checkout(tmp_path)), "--recipes", str(recipe(tmp_path, arms))]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "3 points on both sides, 0 keys differ" in out


def test_a_point_missing_on_either_side_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arms: list[dict[str, object]] = [
        {"tp": 8, "concurrency": [1, 8]},
        {"tp": 8, "variant": "hicache", "concurrency": [64]},
    ]
    status = main(
        ["compare-configs", str(checkout(tmp_path)), "--recipes", str(recipe(tmp_path, arms))]
    )
    out = capsys.readouterr().out
    assert status == 1
    assert "  only in the master configs: tp8-c4\n" in out
    assert "  only in the recipes: tp8-c8\n" in out


def test_a_folder_without_master_configs_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["compare-configs", str(tmp_path), "--recipes", str(tmp_path)])
    assert status == 2
    assert "no *-master.yaml here" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("body", "line", "problem"),
    [
        ("a: [1\n", 2, "invalid YAML"),
        ("a: 5\n", 1, "config key 'a' must be a mapping"),
        ("a:\n  scenarios: 5\n", 2, "a.scenarios must be a mapping"),
        (
            "a:\n  scenarios:\n    agentic-coding: 5\n",
            3,
            "a.scenarios.agentic-coding must be a list",
        ),
        (
            "a:\n  framework: vllm\n  scenarios:\n    agentic-coding:\n    - 5\n",
            5,
            "each item of a.scenarios.agentic-coding must be a mapping",
        ),
        (
            "a:\n  framework: vllm\n  scenarios:\n    agentic-coding:\n    - search-space:\n"
            "      - {tp: x, conc-list: [1]}\n",
            6,
            "a tp must be a whole number",
        ),
        (
            "a:\n  framework: vllm\n  scenarios:\n    agentic-coding:\n    - search-space:\n"
            "      - {tp: 4, conc-list: [1, x]}\n",
            6,
            "each item of a conc-list must be a whole number",
        ),
    ],
    ids=["yaml", "key", "scenarios", "scenario", "group", "tp", "conc"],
)
def test_a_malformed_master_config_is_an_error_at_its_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, line: int, problem: str
) -> None:
    write(tmp_path / "infx" / "configs" / "nvidia-master.yaml", body)
    status = main(["compare-configs", str(tmp_path / "infx"), "--recipes", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 2
    assert out.startswith(
        f"infx compare-configs: {tmp_path}/infx/configs/nvidia-master.yaml:{line}"
    )
    assert problem in out


FIXED_MASTER = """\
dsr1-fp8-h200-sglang:
  framework: sglang
  runner: h200
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {tp: 8, ep: 1, conc-start: 4, conc-end: 48}
    - isl: 8192
      osl: 1024
      search-space:
      - {tp: 8, ep: 8, dp-attn: true, conc-list: [64]}
"""


def _fixed_recipe(tmp_path: Path, points: list[dict[str, object]]) -> Path:
    data: dict[str, object] = {
        "key": "dsr1-fp8-h200-sglang",
        "model": {"hub-id": "deepseek-ai/DeepSeek-R1-0528", "served-name": "dsr1",
                  "prefix": "dsr1", "precision": "fp8"},
        "runner": "h200",
        "engine": {"name": "sglang", "image": f"lmsysorg/sglang:v0.5.16-cu130@sha256:{'7b' * 32}"},
        "fixed-seq-len": {"points": points},
    }  # fmt: skip
    write(tmp_path / "recipes" / "d.yaml", yaml.safe_dump(data, sort_keys=False))
    return tmp_path / "recipes"


def test_a_fixed_seq_len_range_doubles_from_its_start_and_ends_at_its_end(tmp_path: Path) -> None:
    write(tmp_path / "infx" / "configs" / "nvidia-master.yaml", FIXED_MASTER)
    side = master_points(tmp_path / "infx")
    assert [p.name for p in side.points["dsr1-fp8-h200-sglang"]] == [
        "tp8-isl1024-osl1024-c4",
        "tp8-isl1024-osl1024-c8",
        "tp8-isl1024-osl1024-c16",
        "tp8-isl1024-osl1024-c32",
        "tp8-isl1024-osl1024-c48",
        "tp8-isl8192-osl1024-c64-ep8-dpa",
    ]


def test_fixed_seq_len_points_are_compared_with_their_lengths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "infx" / "configs" / "nvidia-master.yaml", FIXED_MASTER)
    same: list[dict[str, object]] = [
        {"tp": 8, "isl": 1024, "osl": 1024, "concurrency": [4, 8, 16, 32, 48]},
        {"tp": 8, "isl": 8192, "osl": 1024, "concurrency": [64], "variant": "ep8-dpa"},
    ]
    status = main(
        ["compare-configs", str(tmp_path / "infx"), "--recipes", str(_fixed_recipe(tmp_path, same))]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "6 points on both sides, 0 keys differ" in out and "fixed-seq-len" in out
    swapped: list[dict[str, object]] = [
        {"tp": 8, "isl": 1024, "osl": 8192, "concurrency": [4, 8, 16, 32, 48]},
        {"tp": 8, "isl": 8192, "osl": 1024, "concurrency": [64], "variant": "ep8-dpa"},
    ]
    status = main(
        [
            "compare-configs",
            str(tmp_path / "infx"),
            "--recipes",
            str(_fixed_recipe(tmp_path, swapped)),
        ]
    )
    out = capsys.readouterr().out
    assert status == 1
    assert "only in the master configs: tp8-isl1024-osl1024-c4, " in out
    assert "only in the recipes: tp8-isl1024-osl8192-c4, " in out


def test_a_range_that_ends_below_its_start_is_an_error_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = FIXED_MASTER.replace("conc-start: 4, conc-end: 48", "conc-start: 64, conc-end: 4")
    write(tmp_path / "infx" / "configs" / "nvidia-master.yaml", body)
    status = main(["compare-configs", str(tmp_path / "infx"), "--recipes", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 2
    assert "nvidia-master.yaml:9" in out and "conc-end must be at least 64" in out


def test_amd_s_master_config_is_compared_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ATOM and ROCm keys live in ``amd-master.yaml``; by default every master config is read."""
    root = checkout(tmp_path)
    write(
        root / "configs" / "amd-master.yaml",
        "dsr1-fp8-mi355x-atom-mtp:\n  framework: atom\n  runner: mi355x\n  scenarios:\n"
        "    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n"
        "      - {tp: 8, spec-decoding: mtp, conc-list: [4, 8]}\n",
    )
    arms: list[dict[str, object]] = [
        {"tp": 8, "concurrency": [1, 4]},
        {"tp": 8, "variant": "hicache", "concurrency": [64]},
    ]
    status = main(["compare-configs", str(root), "--recipes", str(recipe(tmp_path, arms))])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "dsr1-fp8-mi355x-atom-mtp:" in out
    assert "only in the master configs: tp8-isl8192-osl1024-c4, tp8-isl8192-osl1024-c8" in out
    assert "2 keys of *-master.yaml (single-node vllm/sglang/atom/trt" in out


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("{tp: 8, ep: 1, conc-lst: [4, 8]}", "conc-lst must be one of conc-list, conc-start, conc"),
        ("{tp: 8, ep: 1}", "search-space entry must be given a conc-list or a range"),
        ("{tp: 0, ep: 1, conc-list: [4]}", "dsr1-fp8-h200-sglang tp must be a whole number from 1"),
        ("{tp: -8, ep: 1, conc-list: [4]}", "tp must be a whole number from 1"),
        ("{tp: 8, ep: 1, conc-list: [4, -1]}", "each item of dsr1-fp8-h200-sglang conc-list must"),
    ],
    ids=["misspelled", "no-conc", "tp0", "tp-8", "conc-1"],
)
def test_a_search_space_entry_that_gives_no_real_point_is_an_error_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, problem: str
) -> None:
    body = FIXED_MASTER.replace("{tp: 8, ep: 1, conc-start: 4, conc-end: 48}", entry)
    write(tmp_path / "infx" / "configs" / "nvidia-master.yaml", body)
    status = main(["compare-configs", str(tmp_path / "infx"), "--recipes", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 2
    assert "nvidia-master.yaml:9" in out and problem in out
