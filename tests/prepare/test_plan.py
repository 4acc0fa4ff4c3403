from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from core.helpers import agentic, changed, speedbench, write

from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import expand


def plan_blocks(result: pytest.RunResult) -> dict[str, dict[str, str]]:
    """Each item's plan lines by item id, keyed by their first word."""
    lines = result.outlines
    start = next(n for n, line in enumerate(lines) if "infx plan" in line)
    blocks: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if "  (fingerprint " in line:
            item_id, rest = line.split("  ", 1)
            current = {"header": rest}
            blocks[item_id] = current
        elif line.startswith(" "):
            name, _, value = line.strip().partition(" ")
            current[name.rstrip(":")] = value
        else:
            break
    return blocks


def test_plan_shows_argv_env_client_and_golden_per_item_and_launches_nothing(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    marker = pytester.path / "LAUNCHED"
    source = write(recipes / "mimo.yaml", speedbench("mimo-b300-dflash", draft_lengths=(1, 3)))
    local = changed(speedbench("local-b300", draft_lengths=[2]), "engine.image", None)
    local["engine"]["command"] = ["python", "-c", f"open({str(marker)!r}, 'w')"]
    write(recipes / "local.yaml", local)
    result = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", "b300")
    assert result.ret == 0, result.stdout.str()
    blocks = plan_blocks(result)
    points = {p.id: p for p in expand(load_file(source))}
    assert set(points) <= set(blocks)
    assert len(blocks) == 6
    for item_id, point in points.items():
        block = blocks[item_id]
        shown = source.relative_to(pytester.path)
        assert block["header"] == f"(fingerprint {point.fingerprint}, {shown}:1)"
        argv = shlex.split(block["argv"])
        assert argv[:2] == ["vllm", "serve"]
        assert argv[argv.index("--tensor-parallel-size") + 1] == "4"
        spec = json.loads(argv[argv.index("--speculative-config") + 1])
        assert spec["num_speculative_tokens"] == point.draft_length
        assert spec["method"] == "dflash"
        assert block["env"] == "VLLM_USE_V1=1"
        client = json.loads(block["client"])
        assert client["chat_template_kwargs"] == {
            "enable_thinking": point.thinking == "thinking_on"
        }
        assert (client["max_tokens"], client["concurrency"]) == (4096, 32)
        assert client["sampling"] == {"temperature": 1.0, "top_p": 0.95}
        assert block["golden"] == "mimov2.6flash_dflash"
    local_argv = shlex.split(blocks["local-b300[k2-thinking_on]"]["argv"])
    assert local_argv[:2] == ["python", "-c"]
    assert not marker.exists()


def test_servers_are_shared_by_thinking_modes_not_by_draft_lengths(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=(1, 3)))
    blocks = plan_blocks(pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b300"))
    servers = {item_id: block["server"].split(" ")[0] for item_id, block in blocks.items()}
    assert servers["a-b300[k1-thinking_off]"] == servers["a-b300[k1-thinking_on]"]
    assert servers["a-b300[k3-thinking_off]"] == servers["a-b300[k3-thinking_on]"]
    assert servers["a-b300[k1-thinking_on]"] != servers["a-b300[k3-thinking_on]"]


def test_sglang_plan_maps_draft_length_to_steps(recipes: Path, pytester: pytest.Pytester) -> None:
    recipe = speedbench(
        "s-b300-sglang", engine="sglang", draft_lengths=(2, 5), modes=["thinking_on"]
    )
    recipe["speedbench"]["speculative"] = {"method": "eagle3", "draft": "org/eagle3-draft"}
    write(recipes / "s.yaml", recipe)
    blocks = plan_blocks(pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b300"))
    for k in (2, 5):
        argv = shlex.split(blocks[f"s-b300-sglang[k{k}-thinking_on]"]["argv"])
        assert argv[argv.index("--speculative-algorithm") + 1] == "EAGLE3"
        assert argv[argv.index("--speculative-num-steps") + 1] == str(k)
        assert argv[argv.index("--speculative-num-draft-tokens") + 1] == str(k + 1)
        assert argv[argv.index("--tp-size") + 1] == "4"


def test_agentic_plan_sizes_each_server_for_its_own_points_concurrency(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", agentic("a-b200-agentic", points={4: (1, 8, 32), 2: (4,)}))
    result = pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b200")
    blocks = plan_blocks(result)
    assert len(blocks) == 4
    for item_id, block in blocks.items():
        tp, conc = (int(n) for n in re.findall(r"\d+", item_id.split("[")[1]))
        argv = shlex.split(block["argv"])
        assert argv[argv.index("--max-running-requests") + 1] == str(2 * conc)
        assert argv[argv.index("--cuda-graph-max-bs-decode") + 1] == str(2 * conc)
        assert argv[argv.index("--tp-size") + 1] == str(tp)
        client = json.loads(block["client"])
        assert client["concurrency"] == conc
        assert client["scenario"] == "inferencex-agentx-mvp"
        assert client["trajectory_start_ratio"] == [0.25, 0.75]
        assert (client["trace_idle_gap_cap_s"], client["warmup_grace_period_s"]) == (300, 1800)
        assert "golden" not in block
    servers = {block["server"].split(" ")[0] for block in blocks.values()}
    assert len(servers) == 4
    assert "servers: 4 for 4 point(s)" in result.outlines


def test_vllm_admission_is_per_data_parallel_rank(recipes: Path, pytester: pytest.Pytester) -> None:
    """InferenceX's vLLM AgentX scripts with DP attention: MAX_NUM_SEQS = 2 x CONC / TP, the
    number of data-parallel ranks, since vLLM applies max-num-seqs per rank."""
    recipe = changed(
        agentic("v-b200-agentic", points={8: (8, 64)}, engine="vllm"),
        "engine.args",
        {"data-parallel-size": 8, "enable-expert-parallel": True},
    )
    write(recipes / "v.yaml", recipe)
    blocks = plan_blocks(pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b200"))
    for conc in (8, 64):
        argv = shlex.split(blocks[f"v-b200-agentic[tp8-c{conc}]"]["argv"])
        assert argv[argv.index("--max-num-seqs") + 1] == str(2 * conc // 8)


def test_agentic_points_launched_alike_share_one_server_and_the_plan_says_so(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", agentic("a-b200-agentic", points={4: (1, 8)}))
    write(recipes / "b.yaml", agentic("a-b200-agentic-power", points={4: (8,)}))
    result = pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b200")
    blocks = plan_blocks(result)
    server = {item_id: block["server"].split(" ")[0] for item_id, block in blocks.items()}
    assert server["a-b200-agentic[tp4-c8]"] == server["a-b200-agentic-power[tp4-c8]"]
    assert server["a-b200-agentic[tp4-c1]"] != server["a-b200-agentic[tp4-c8]"]
    assert "servers: 2 for 3 point(s)" in result.outlines
    shared = f"  server {server['a-b200-agentic[tp4-c8]']} shared by 2: "
    line = next(line for line in result.outlines if line.startswith(shared))
    assert set(line[len(shared) :].split(", ")) == {
        "a-b200-agentic[tp4-c8]",
        "a-b200-agentic-power[tp4-c8]",
    }


def test_fixed_seq_len_points_of_one_tp_share_a_server_and_show_benchmark_serving_s_settings(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    recipe = agentic("f-b200-sglang", points={})
    del recipe["agentic"]
    recipe["fixed-seq-len"] = {
        "points": [
            {"tp": 4, "isl": 1024, "osl": 1024, "concurrency": [4, 64]},
            {"tp": 4, "isl": 8192, "osl": 1024, "concurrency": [16]},
            {"tp": 8, "isl": 1024, "osl": 1024, "concurrency": [4]},
        ]
    }
    write(recipes / "f.yaml", recipe)
    result = pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b200")
    blocks = plan_blocks(result)
    client = json.loads(blocks["f-b200-sglang[tp4-isl8192-osl1024-c16]"]["client"])
    assert client == {
        "model": "mimo-v2.6-flash-rl",
        "endpoint": "/v1/completions", "stream": True, "dataset": "random", "input_len": 8192,
        "output_len": 1024, "random_range_ratio": 0.8, "num_prompts": 160,
        "max_concurrency": 16, "request_rate": "inf", "ignore_eos": True, "num_warmups": 32,
        "seed": 0, "chat_template": False,
    }  # fmt: skip
    for block in blocks.values():
        argv = shlex.split(block["argv"])
        assert "--max-running-requests" not in argv and "--cuda-graph-max-bs-decode" not in argv
    assert "servers: 2 for 4 point(s)" in result.outlines


@pytest.mark.parametrize("name", ["tensor_parallel_size", "served_model_name", "tp"])
def test_the_argv_builder_refuses_owned_flags_under_any_spelling(name: str) -> None:
    from pytest_infx.engines.base import PlanError, flags
    from pytest_infx.engines.vllm import VllmAdapter

    owned = VllmAdapter().owned_flags(agentic=False)
    with pytest.raises(PlanError, match=rf"k: engine.args.{re.escape(name)} is set by pytest-infx"):
        flags({name: 2}, key="k", owned=owned)


def test_plan_of_a_speculative_agentic_point_shows_the_synthetic_acceptance_of_its_curve(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    curve = Path(__file__).resolve().parents[2] / "golden" / "mimov2.6flash_dflash.yaml"
    (pytester.path / "golden").mkdir()
    (pytester.path / "golden" / curve.name).write_text(curve.read_text())
    recipe = agentic("spec-b200-agentic", points={4: (8,)})
    recipe["agentic"]["speculative"] = {
        "method": "dflash",
        "block-size": 8,
        "draft-length": 3,
        "golden": "mimov2.6flash_dflash",
    }
    write(recipes / "spec.yaml", recipe)
    missing = agentic("nocurve-b200-agentic", points={4: (8,)})
    missing["agentic"]["speculative"] = {**recipe["agentic"]["speculative"], "golden": "absent"}
    write(recipes / "missing.yaml", missing)
    result = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", "b200")
    assert result.ret == 0, result.stdout.str()
    blocks = plan_blocks(result)
    env = dict(pair.split("=", 1) for pair in blocks["spec-b200-agentic[tp4-c8]"]["env"].split())
    assert env["SGLANG_SIMULATE_ACC_LEN"] == "2.97"
    assert env["SGLANG_SIMULATE_ACC_METHOD"] == "match-expected"
    server = blocks["nocurve-b200-agentic[tp4-c8]"]["server"]
    assert server.startswith("cannot plan its synthetic acceptance:")


def test_plan_of_a_speculative_fixed_seq_len_point_forces_the_al_of_its_curve(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    curve = Path(__file__).resolve().parents[2] / "golden" / "mimov2.6flash_dflash.yaml"
    (pytester.path / "golden").mkdir()
    (pytester.path / "golden" / curve.name).write_text(curve.read_text())
    recipe = agentic("fspec-b200-sglang", points={})
    del recipe["agentic"]
    recipe["fixed-seq-len"] = {
        "points": [{"tp": 4, "isl": 1024, "osl": 1024, "concurrency": [4]}],
        "speculative": {
            "method": "dflash",
            "block-size": 8,
            "draft-length": 3,
            "golden": "mimov2.6flash_dflash",
        },
    }
    write(recipes / "f.yaml", recipe)
    result = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", "b200")
    assert result.ret == 0, result.stdout.str()
    block = plan_blocks(result)["fspec-b200-sglang[tp4-isl1024-osl1024-c4]"]
    env = dict(pair.split("=", 1) for pair in block["env"].split())
    assert env["SGLANG_SIMULATE_ACC_LEN"] == "2.97"


def test_plan_marks_cells_whose_golden_curve_is_not_committed(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    curve = Path(__file__).resolve().parents[2] / "golden" / "mimov2.6flash_dflash.yaml"
    (pytester.path / "golden").mkdir()
    (pytester.path / "golden" / curve.name).write_text(curve.read_text())
    write(recipes / "mimo.yaml", speedbench("mimo-b300-dflash", draft_lengths=[1]))
    absent = speedbench("new-b300-dflash", draft_lengths=(1, 2))
    absent["speedbench"]["golden"] = "new_dflash"
    write(recipes / "new.yaml", absent)
    result = pytester.runpytest("--collect-only", "-q", "--infx-plan", "--gpu", "b300")
    assert result.ret == 0, result.stdout.str()
    blocks = plan_blocks(result)
    for mode in ("thinking_on", "thinking_off"):
        assert "warning" not in blocks[f"mimo-b300-dflash[k1-{mode}]"]
        for k in (1, 2):
            warning = blocks[f"new-b300-dflash[k{k}-{mode}]"]["warning"]
            assert warning.startswith("golden curve new_dflash is not committed (golden/)")
            assert "--snapshot-update" in warning
    result.stdout.fnmatch_lines(
        ["golden curves not committed, for 4 cell(s): new_dflash (4); record them *"]
    )


def test_plan_shows_the_differences_from_inferencex_its_recipe_states(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    recipe = agentic("a-b200-agentic", points={4: (8,)})
    recipe["differences"] = [
        {
            "variable": "SGLANG_RADIX_FORCE_MISS",
            "inferencex": "1",
            "ours": None,
            "reason": "better-default",
            "evidence": "prefix hits are what AgentX traces measure",
        }
    ]
    write(recipes / "a.yaml", recipe)
    result = pytester.runpytest("--collect-only", "--infx-plan", "--gpu", "b200")
    block = plan_blocks(result)["a-b200-agentic[tp4-c8]"]
    assert block["differs"] == (
        "from InferenceX: SGLANG_RADIX_FORCE_MISS InferenceX '1', ours None"
        " (better-default: prefix hits are what AgentX traces measure)"
    )
