"""The ATOM adapter against what ATOM's source and InferenceX's ATOM scripts show.

Facts (ROCm/ATOM; engines.md, inferencex-matrix-2026-12.md):
- the server is ``python3 -m atom.entrypoints.openai_server --model M --server-port P -tp N``,
  with ``--method mtp --num-speculative-tokens K`` for MTP; its parser takes kebab and snake
  spellings;
- ``atom/entrypoints/openai/metrics.py``: ``atom:mtp_draft_tokens_total``,
  ``atom:mtp_accepted_tokens_total``, ``atom:mtp_decode_steps_total{accepted_tokens="j"}``, and
  ``atom:mtp_average_tokens_per_forward`` = AL;
- forced acceptance: ``--spec-decode-acceptance-length AL``, AL in [1, k+1].
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.engines.atom import AtomAdapter, accepted_per_position, synthetic
from pytest_infx.engines.base import PlanError
from pytest_infx.engines.registry import installed, symbolic_paths
from pytest_infx.recipes.errors import RecipeError, RecipeErrors
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand
from pytest_infx.speedbench.metrics import parse_prometheus

RECIPE = """\
key: dsr1-fp8-mi355x-atom-mtp
model:
  hub-id: deepseek-ai/DeepSeek-R1-0528
  served-name: deepseek-ai/DeepSeek-R1-0528
  prefix: dsr1
  precision: fp8
runner: mi355x
engine:
  name: atom
  version: '0.1.0'
  image: rocm/atom:example
  env:
    AMDGCN_USE_BUFFER_OPS: '1'
  args:
    kv_cache_dtype: fp8
    block-size: 16
fixed-seq-len:
  points:
    - tp: 8
      isl: 8192
      osl: 1024
      concurrency: [4, 8]
  speculative: {method: mtp, draft-length: 3, golden: dsr1_mtp}
"""


def points(tmp_path: Path, text: str = RECIPE) -> list[Point]:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return expand(load_file(path))


def argv_of(point: Point, **kwargs: object) -> list[str]:
    return list(AtomAdapter().plan(point, symbolic_paths(point), **kwargs).argv)  # type: ignore[arg-type]


def test_the_command_is_the_one_inferencex_s_atom_scripts_run(tmp_path: Path) -> None:
    point = points(tmp_path)[0]
    plan = AtomAdapter().plan(point, symbolic_paths(point))
    argv = list(plan.argv)
    assert argv[: plan.command] == ["python3", "-m", "atom.entrypoints.openai_server"]
    assert argv[plan.command :] == [
        "--model", "$MODEL_ROOT/DeepSeek-R1-0528", "--server-port", "{port}", "-tp", "8",
        "--kv_cache_dtype", "fp8", "--block-size", "16",
        "--method", "mtp", "--num-speculative-tokens", "3",
    ]  # fmt: skip
    assert plan.env == {"AMDGCN_USE_BUFFER_OPS": "1"}
    assert (plan.gpus, plan.gpu_vendor) == (8, "amd")


def test_forced_acceptance_is_the_al_itself_on_the_command_line(tmp_path: Path) -> None:
    point = points(tmp_path)[0]
    setting = installed().synthetic_setting("atom", 2.5, 3)
    argv = argv_of(point, synthetic=setting)
    assert argv[-2:] == ["--spec-decode-acceptance-length", "2.5"]


@pytest.mark.parametrize("flag", ["server-port", "server_port", "tp", "num-speculative-tokens"])
def test_a_recipe_cannot_set_a_flag_the_plan_owns(tmp_path: Path, flag: str) -> None:
    text = RECIPE.replace("    block-size: 16\n", f"    block-size: 16\n    {flag}: 1\n")
    with pytest.raises((RecipeError, RecipeErrors, PlanError), match=flag.replace("_", ".")):
        argv_of(points(tmp_path, text)[0])


def test_points_of_one_tp_share_a_server_and_the_key_is_in_the_plan(tmp_path: Path) -> None:
    first, second = points(tmp_path)
    adapter = AtomAdapter()
    plans = [adapter.plan(p, symbolic_paths(p)) for p in (first, second)]
    assert plans[0].key == plans[1].key and plans[0].label.endswith("-tp8")


def test_counters_sum_the_step_labels_and_read_al_as_atom_does() -> None:
    text = "\n".join(
        [
            "# TYPE atom:mtp_draft_tokens_total counter",
            "atom:mtp_draft_tokens_total 30.0",
            "# TYPE atom:mtp_accepted_tokens_total counter",
            "atom:mtp_accepted_tokens_total 12.0",
            "# TYPE atom:mtp_decode_steps_total counter",
            'atom:mtp_decode_steps_total{accepted_tokens="0"} 3.0',
            'atom:mtp_decode_steps_total{accepted_tokens="1"} 2.0',
            'atom:mtp_decode_steps_total{accepted_tokens="2"} 2.0',
            'atom:mtp_decode_steps_total{accepted_tokens="3"} 2.0',
            'atom:mtp_decode_steps_total{accepted_tokens="x"} 1.0',
            "# TYPE atom:mtp_average_tokens_per_forward gauge",
            "atom:mtp_average_tokens_per_forward 2.2",
            "",
        ]
    )
    counters = AtomAdapter().spec_counters(parse_prometheus(text))
    assert counters.engine == "atom"
    assert (counters.drafts, counters.draft_tokens, counters.accepted) == (10.0, 30.0, 12.0)
    assert counters.accepted_per_pos == (6.0, 4.0, 2.0)
    assert sum(counters.accepted_per_pos) == 12.0
    assert 1 + counters.accepted / counters.drafts == pytest.approx(2.2)  # type: ignore[operator]


def test_a_scrape_without_atom_s_series_is_not_speculating() -> None:
    counters = AtomAdapter().spec_counters(parse_prometheus("# TYPE up gauge\nup 1\n"))
    assert counters.engine is None and not counters.speculating and not counters.empty
    assert AtomAdapter().spec_counters(parse_prometheus("")).empty


def test_per_position_counts_steps_that_accepted_more() -> None:
    assert accepted_per_position({}) == ()
    assert accepted_per_position({0: 5.0, 2: 1.0}) == (1.0, 1.0)


def test_no_parser_runs_here_and_the_framework_is_inferencex_s() -> None:
    adapter = AtomAdapter()
    assert adapter.parser_env("0.1.0") is None
    assert adapter.inferencex_framework == "atom"
    assert installed().adapters["atom"].name == "atom"


def test_atom_is_forced_to_the_acceptance_length_itself() -> None:
    forced = synthetic(2.5, 3)
    assert (forced.engine, forced.argv, forced.env) == (
        "atom",
        ("--spec-decode-acceptance-length", "2.5"),
        {},
    )


INFERENCEX_ATOM_IMAGES = (
    "rocm/atom-dev:nightly_202607231538",
    "rocm/atom-dev:nightly_202608201032",
    "rocm/atom-dev:ubuntu24.04_py3.12_pytorch_release_2.10.0_glm52_agentic_0813",
    "rocm/atom-dev:ubuntu24.04_py3.12_pytorch_release_2.10.0_kimi_k3_agentic_0820",
    "rocm/atom:rocm7.2.2_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom0.1.2.post",
    "rocm/atom:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom20260511",
    "rocm/atom:rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom0.1.3",
)


@pytest.mark.parametrize("image", INFERENCEX_ATOM_IMAGES)
def test_every_atom_image_inferencex_pins_has_the_option_set_of_its_source(image: str) -> None:
    found = AtomAdapter().option_set(image)
    assert found is not None, image
    assert found.engine == "atom" and found.source.startswith("ROCm/ATOM@")
    tag = image.rsplit(":", 1)[1]
    assert AtomAdapter().option_set(tag) == found
    assert found.release in tag


@pytest.mark.parametrize(
    ("version", "release"),
    [
        ("atom0.1.3", "0.1.3"),
        ("v0.1.2.post", "0.1.2"),
        ("nightly-202608201032", "nightly_202608201032"),
    ],
)
def test_a_version_written_short_finds_its_release_s_option_set(version: str, release: str) -> None:
    found = AtomAdapter().option_set(version)
    assert found is not None and found.release == release


def test_a_version_without_a_shipped_option_set_has_none() -> None:
    assert AtomAdapter().option_set("0.1.0") is None
    assert AtomAdapter().option_set(None) is None


def test_the_reference_matrix_pins_no_atom_image_without_an_option_set() -> None:
    import json
    import os

    folder = Path(
        os.environ.get("INFX_INFERENCEX_REFERENCE")
        or Path(__file__).resolve().parents[3] / "shared" / "inferencex" / "843c6254f"
    )
    sweep = folder / "sweep.json"
    if not sweep.is_file():
        pytest.skip(f"{sweep}: absent; set INFX_INFERENCEX_REFERENCE to the reference data")
    points = json.loads(sweep.read_text())["points"]
    images = {p["image"] for p in points if p["framework"] == "atom"}
    assert images and images <= set(INFERENCEX_ATOM_IMAGES)


def test_engine_check_checks_an_atom_point_against_its_image_s_option_set(tmp_path: Path) -> None:
    from pytest_infx.engines.conformance import Report
    from pytest_infx.prepare import preflight

    tag = "rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom0.1.3"
    folder = tmp_path / "recipes"
    folder.mkdir()
    text = RECIPE.replace("'0.1.0'", tag).replace("rocm/atom:example", f"rocm/atom:{tag}")
    text = text.replace("  speculative: {method: mtp", "  # {method: mtp")
    (folder / "a.yaml").write_text(text)
    golden = Path(__file__).resolve().parents[2] / "golden"
    report = preflight.engine_check(folder, golden, install=False)
    assert isinstance(report, Report)
    assert not report.unchecked
    (run,) = report.runs
    assert (run.release, run.points) == ("atom 0.1.3 option set", 2)
    assert report.ok, report.rejected
    (folder / "a.yaml").write_text(text.replace("block-size: 16", "block-sizes: 16"))
    report = preflight.engine_check(folder, golden, install=False)
    assert isinstance(report, Report)
    assert [r.message for r in report.rejected] == ["no such option: --block-sizes"]
