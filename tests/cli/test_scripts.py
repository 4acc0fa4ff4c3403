"""``infx compare-scripts`` on a small InferenceX-shaped checkout the test writes: a workflow
step, a launcher, ``benchmark_lib.sh`` and one per-key script that run, through the recording
stand-ins, exactly what the recipe plans for two points; then a difference planted in each of
the three files must be found and named, and a folder that is no checkout gets one line."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.cli import main
from pytest_infx.cli.scripts import match
from pytest_infx.engines.fidelity import CLIENT_SETTINGS
from pytest_infx.prepare.plan import client_settings, server_plan
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all
from pytest_infx.usage import EXIT_STATUS

ROOT = Path(__file__).resolve().parents[2]
KEY = "dsv4-fp8-h200-vllm"
NAMES = ("tp8-isl8192-osl1024-c1", "tp8-isl8192-osl1024-c2")

WORKFLOW = """\
on:
  workflow_call:
    inputs:
      model: {type: string}
      conc: {type: string}
      eval-only: {type: boolean, default: false}
env:
  MODEL: ${{ inputs.model }}
  EXP_NAME: ${{ inputs.exp-name }}
  PRECISION: ${{ inputs.precision }}
  TP: ${{ inputs.tp }}
  CONC: ${{ inputs.conc }}
  ISL: ${{ inputs.isl }}
  OSL: ${{ inputs.osl }}
  IMAGE: ${{ inputs.image }}
  RANDOM_RANGE_RATIO: 0.8
  SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}
jobs:
  benchmark:
    steps:
      - uses: actions/checkout@v4
      - name: Launch job script
        env:
          RUNNER_NAME: ${{ runner.name }}
          RESULT_FILENAME: ${{ env.EXP_NAME }}_conc${{ env.CONC }}_${{ runner.name }}
        run: |
          bash ./runners/launch_${RUNNER_NAME%%_*}.sh
          if [ "${{ inputs.eval-only }}" = "true" ]; then exit 1; fi
"""

LAUNCHER = """\
#!/usr/bin/env bash
export PORT=8888
JOB_ID=$(salloc --partition=h200 --no-shell 2>&1 | sed -n 's/.*Granted job allocation //p')
srun --jobid=$JOB_ID --container-image=$IMAGE \\
  --container-mounts=$GITHUB_WORKSPACE:/workspace/ --container-workdir=/workspace/ \\
  --export=ALL bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h200.sh
scancel $JOB_ID
"""

LIB = """\
wait_for_server_ready() {
    until curl --silent --fail "http://0.0.0.0:$PORT/health"; do sleep 5; done
}
run_benchmark_serving() {
    python3 utils/bench_serving/benchmark_serving.py --model "$MODEL" --backend vllm \\
        --base-url "http://0.0.0.0:$PORT" --random-range-ratio "$RANDOM_RANGE_RATIO" "$@" \\
        --save-result --result-filename "$RESULT_FILENAME.json"
}
"""


def _points() -> list[Point]:
    points = {p.name: p for p in expand_all(load_tree(ROOT / "recipes")) if p.recipe_key == KEY}
    return [points[name] for name in NAMES]


def _params(point: Point) -> dict[str, Any]:
    """The point as InferenceX's generator writes it."""
    recipe = point.recipe
    return {
        "conc": point.concurrency,
        "dp-attn": False,
        "ep": 1,
        "exp-name": f"{recipe.model.prefix}_8k1k",
        "framework": "vllm",
        "image": recipe.engine.image,
        "isl": point.isl,
        "model": recipe.model.hub_id,
        "model-prefix": recipe.model.prefix,
        "osl": point.osl,
        "precision": recipe.model.precision,
        "runner": recipe.runner,
        "spec-decoding": "none",
        "tp": point.tp,
    }


def _client_flags(point: Point) -> list[str]:
    """The benchmark client's flags that hold the plan's client settings, less what
    ``benchmark_lib.sh`` passes itself (the range ratio)."""
    settings = client_settings(point)
    found: list[str] = []
    for flag, name in CLIENT_SETTINGS.items():
        given = settings.get(name)
        if given is None or name in ("random_range_ratio", "seed", "endpoint", "stream"):
            continue
        found += [flag] if given is True else [flag, str(given)]
    return found


def _script(points: list[Point]) -> str:
    """A per-key script that starts, per concurrency, the server the recipe plans."""
    cases: list[str] = []
    for point in points:
        plan = server_plan(point, ROOT / "golden")
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(plan.env.items()))
        server = " ".join(shlex.quote(a) for a in plan.argv)
        client = " ".join(shlex.quote(a) for a in _client_flags(point))
        cases.append(
            f"    {point.concurrency}) SERVER=({server}); ENVS=({env}); CLIENT=({client}) ;;"
        )
    return "\n".join(
        [
            "#!/usr/bin/env bash",
            'source "$(dirname "$0")/../../benchmark_lib.sh"',
            'case "$CONC" in',
            *cases,
            "esac",
            'env "${ENVS[@]}" "${SERVER[@]}" > server.log 2>&1 &',
            "wait_for_server_ready",
            'run_benchmark_serving "${CLIENT[@]}"',
            "",
        ]
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """An InferenceX-shaped repository whose scripts run what the recipe plans."""
    points = _points()
    root = tmp_path / "inferencex"
    write(root / ".github/workflows/benchmark-tmpl.yml", WORKFLOW)
    write(root / "configs/nvidia-master.yaml", "{}\n")
    write(root / "configs/runners.yaml", "labels:\n  h200:\n    - h200-test_00\n")
    sweep = json.dumps([_params(p) for p in points])
    write(
        root / "utils/matrix_logic/generate_sweep_configs.py",
        f"print({sweep!r})\n",
    )
    write(root / "runners/launch_h200-test.sh", LAUNCHER)
    write(root / "benchmarks/benchmark_lib.sh", LIB)
    write(root / "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh", _script(points))
    return root


def compare(checkout: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    recipes, golden = str(ROOT / "recipes"), str(ROOT / "golden")
    argv = ["compare-scripts", str(checkout), "--recipes", recipes, "--golden", golden]
    status = main([*argv, "-k", KEY, "--timeout", "600", "--jobs", "2"])
    return status, capsys.readouterr().out


def test_a_checkout_running_what_the_recipe_plans_has_no_unstated_difference(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = compare(checkout, capsys)
    assert out.splitlines()[-1].startswith("2 of 2 points replayed, 2 compared, 0 unverified;")
    assert "; 0 differences unstated" in out
    assert f"{KEY}[tp8-isl8192-osl1024-c4]: not in the checkout's sweep" in out
    assert f"{KEY}[{NAMES[0]}]: not" not in out
    assert status == 0


def test_a_difference_planted_in_a_script_a_launcher_and_benchmark_lib_is_found_and_named(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = checkout / "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh"
    text = script.read_text(encoding="utf-8")
    script.write_text(text.replace('"${SERVER[@]}"', '"${SERVER[@]}" --swap-space 7'))
    launcher = checkout / "runners/launch_h200-test.sh"
    text = launcher.read_text(encoding="utf-8")
    launcher.write_text(text.replace("export PORT=8888", "export PORT=8888 VLLM_PLANTED=1"))
    lib = checkout / "benchmarks/benchmark_lib.sh"
    lib.write_text(lib.read_text(encoding="utf-8").replace('"$RANDOM_RANGE_RATIO"', "0.5"))
    status, out = compare(checkout, capsys)
    lines = out.splitlines()
    for name in NAMES:
        point = f"{KEY}[{name}]"
        assert f"{point}: server-flag --swap-space: InferenceX '7', ours unset" in lines
        assert f"{point}: server-env VLLM_PLANTED: InferenceX '1', ours unset" in lines
        assert f"{point}: client random_range_ratio: InferenceX '0.5', ours '0.8'" in lines
    assert "; 6 differences unstated" in lines[-1]
    assert status == 1


def test_a_folder_that_is_no_inferencex_checkout_gets_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "README.md", "not InferenceX\n")
    status = main(["compare-scripts", str(tmp_path)])
    captured = capsys.readouterr()
    assert status == EXIT_STATUS
    assert captured.err.splitlines() == [
        f"infx compare-scripts: error: {tmp_path}: not an InferenceX checkout"
        " (no .github/workflows/benchmark-tmpl.yml); give the root of one"
    ]


def test_a_sweep_point_is_the_recipe_point_of_its_runner_type_and_speculative_decoding() -> None:
    points = expand_all(load_tree(ROOT / "recipes"))
    params: dict[str, Any] = {
        "conc": 1,
        "dp-attn": False,
        "ep": 1,
        "kv-offloading": "none",
        "image": "vllm/vllm-openai-rocm:nightly-cb8104839c141609d99f1254459ef3a4f1bd4263",
        "model": "moonshotai/Kimi-K3",
        "runner": "cluster:mi355x-amds",
        "scenario-type": "agentic-coding",
        "spec-decoding": "mtp",
        "tp": 8,
    }
    assert [p.id for p in match(params, points)] == ["kimik3-fp4-mi355x-vllm-agentic-mtp[tp8-c1]"]
    assert match({**params, "model": "moonshotai/Kimi-K2"}, points) == []
    fixed = _params(_points()[0])
    assert [p.id for p in match(fixed, points)] == [f"{KEY}[{NAMES[0]}]"]
    mtp = {**fixed, "spec-decoding": "mtp"}
    assert [p.id for p in match(mtp, points)] == [f"{KEY}-mtp[{NAMES[0]}]"]


def test_a_sweep_point_two_keys_share_in_the_master_configs_is_compared_with_both() -> None:
    points = expand_all(load_tree(ROOT / "recipes"))
    params: dict[str, Any] = {
        "conc": 16,
        "dp-attn": False,
        "ep": 2,
        "kv-offloading": "none",
        "model": "Qwen/Qwen3.5-397B-A17B-FP8",
        "runner": "cluster:b300-nv",
        "scenario-type": "agentic-coding",
        "spec-decoding": "mtp",
        "tp": 2,
    }
    speculative = {
        "qwen3.5-fp8-b300-sglang-agentic-mtp": frozenset({"mtp"}),
        "qwen3.5-fp8-b300-sglang-agentic-power-ab": frozenset({"mtp"}),
    }
    assert match(params, points) == [p for p in match(params, points) if "mtp" in p.recipe_key]
    assert sorted(p.recipe_key for p in match(params, points, speculative)) == [
        "qwen3.5-fp8-b300-sglang-agentic-mtp",
        "qwen3.5-fp8-b300-sglang-agentic-power-ab",
    ]
