"""Result file names as InferenceX's workflow builds them at 843c6254f.

``.github/workflows/benchmark-tmpl.yml``: ``RESULT_FILENAME = ${EXP_NAME}_${PRECISION}_${FRAMEWORK}
_tp${TP}-pp${PP_SIZE}-dcp${DCP_SIZE}-pcp${PCP_SIZE}-ep${EP_SIZE}-dpa${DP_ATTENTION}_disagg-${DISAGG}
_spec-${SPEC_DECODING}_conc${CONC}_${runner.name}``, then ``_recipe-${RECIPE_FINGERPRINT:0:16}``;
``utils/matrix_logic/generate_sweep_configs.py`` (single node, agentic):
``exp-name = f"{model_code}_tp{tp}_conc{conc}_kvnone" + (f"_spec-{spec}" if spec != "none")``;
``e2e-tests.yml`` passes ``disagg: 'false'`` for single-node AgentX.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from e2e.helpers import recipe, write_recipe

from pytest_infx.engines.registry import EngineRegistry, installed
from pytest_infx.prepare.identity import identity_of
from pytest_infx.recipes.loader import load_file, load_tree
from pytest_infx.recipes.points import Point, expand, expand_all
from pytest_infx.results.identity import ConfigIdentity

IMAGES = {
    "sglang": f"lmsysorg/sglang:v0.5.21-cu130@sha256:{'b1' * 32}",
    "vllm": f"vllm/vllm-openai:v0.31.0@sha256:{'c1' * 32}",
}


def shape_of(
    point: Point, *, runner: str | None = None, engines: EngineRegistry | None = None
) -> ConfigIdentity:
    return identity_of(point, runner=runner, engines=engines or installed())


def _points(
    folder: Path, key: str, tp: int, conc: list[int], *, engine: str = "sglang", **args: Any
) -> list[Point]:
    recipe = {
        "key": key,
        "model": {
            "hub-id": "XiaomiMiMo/MiMo-V2.6-Flash-RL",
            "served-name": "mimo",
            "prefix": "mimov2.6flash",
            "precision": "fp4",
        },
        "runner": "b200",
        "engine": {"name": engine, "image": IMAGES[engine], "args": args},
        "agentic": {"points": [{"tp": tp, "concurrency": conc}]},
    }
    path = folder / f"{key}.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return expand(load_file(path))


def test_shape_of_a_recipe_point_reads_parallelism_from_engine_flags(tmp_path: Path) -> None:
    flags: dict[str, Any] = {"ep-size": 4, "enable-dp-attention": True}
    (point,) = _points(tmp_path, "m-agentic", 4, [8], **flags)
    shape = shape_of(point, runner="b200-nv_0")
    assert (shape.tp, shape.ep, shape.dp_attention, shape.conc) == (4, 4, True, 8)
    assert (shape.framework, shape.precision, shape.model_prefix) == (
        "sglang",
        "fp4",
        "mimov2.6flash",
    )
    assert shape.fingerprint == point.fingerprint
    assert shape.file_name().endswith(f"_conc8_b200-nv_0_recipe-{point.fingerprint}")


def test_a_vllm_dp_attention_point_is_named_as_inferencex_names_its_dep_arm(
    tmp_path: Path,
) -> None:
    """configs/nvidia-master.yaml, dsv4-fp4-b200-vllm-agentic-mtp: ``tp: 8, ep: 8, dp-attn: true``,
    launched as ``--tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel``."""
    args = {"data-parallel-size": 8, "enable-expert-parallel": True}
    (point,) = _points(tmp_path, "d-agentic", 8, [64], engine="vllm", **args)
    shape = shape_of(point, runner="b200-dgxc_1")
    assert (shape.tp, shape.ep, shape.dp_attention, shape.gpus) == (8, 8, True, 8)
    assert "_vllm_tp8-pp1-dcp1-pcp1-ep8-dpatrue_disagg-false_" in shape.file_name()
    (tep,) = _points(
        tmp_path, "t-agentic", 8, [4], engine="vllm", **{"enable-expert-parallel": True}
    )
    assert (shape_of(tep).ep, shape_of(tep).dp_attention) == (8, False)


def test_the_runner_named_wins_over_the_recipe_s(tmp_path: Path) -> None:
    """The runner comes from the run's environment, passed in; the identity reads none."""
    (point,) = _points(tmp_path, "k", 2, [1])
    assert shape_of(point).runner == "b200"
    assert shape_of(point, runner="b200-nv_7").runner == "b200-nv_7"
    assert shape_of(point, runner="b200-nv_7").hardware == "b200"


def test_a_bad_parallel_size_names_the_point_and_flag(tmp_path: Path) -> None:
    flags: dict[str, Any] = {"pp-size": 0}
    (point,) = _points(tmp_path, "k", 2, [1], **flags)
    with pytest.raises(ValueError, match=r"k\[tp2-c1\]: engine.args.pp-size must be an integer"):
        shape_of(point)


def test_the_shape_asks_the_engine_adapter(tmp_path: Path) -> None:
    """Parallel sizes and the framework come from the point's adapter, whatever the engine
    args say; the shape reads no engine flag itself."""
    from pytest_infx.engines.spec import Parallelism

    flags: dict[str, Any] = {"pp-size": 4}
    (point,) = _points(tmp_path, "k", 2, [1], **flags)
    real = installed().adapter_for(point)

    class Asked:
        inferencex_framework = "other-fw"

        def parallelism(self, point: Point) -> Parallelism:
            return Parallelism(pp=3, dcp=2, pcp=5, ep=7)

        def dp_attention(self, point: Point) -> bool:
            return real.dp_attention(point)

    assert shape_of(point).pp == 4
    asked = EngineRegistry({point.recipe.engine.name: cast(Any, Asked())})
    found = shape_of(point, runner="r", engines=asked)
    assert (found.pp, found.dcp, found.pcp, found.ep) == (3, 2, 5, 7)
    assert found.framework == "other-fw"


def test_the_record_keeps_the_config_and_not_the_point_s_load(tmp_path: Path) -> None:
    """The stored field has the shape it had before the identity carried the load, so the
    record files and the history keys of stored results stay as they were."""
    (point,) = _points(tmp_path, "k", 2, [8])
    identity = shape_of(point, runner="b200-nv_0")
    stored = identity.model_dump(mode="json")
    assert sorted(stored) == sorted(
        ["model_prefix", "hardware", "framework", "engine_version", "precision", "spec_method",
         "tp", "ep", "pp", "dcp", "pcp", "dp_attention", "disaggregated", "disaggregated_gpus"]
    )  # fmt: skip
    back = ConfigIdentity.model_validate(stored)
    assert back.history_key() == identity.history_key()
    assert (back.runner, back.conc) == ("", None)
    with pytest.raises(ValueError, match="no runner"):
        back.file_name()


def test_a_point_config_is_inferencex_s_identity(tmp_path: Path) -> None:
    data = recipe("k", record=tmp_path / "starts.jsonl")
    write_recipe(tmp_path / "recipes", data)
    point = expand_all(load_tree(tmp_path / "recipes"))[0]
    config = identity_of(point, runner=None, engines=installed())
    assert (config.model_prefix, config.hardware, config.framework) == ("smollm2", "cpu", "vllm")
    assert (config.engine_version, config.precision, config.spec_method) == (
        "0.33.0+fake",
        "bf16",
        "ngram",
    )
    assert config.topology == "tp1-pp1-dcp1-pcp1-ep1-dpafalse"
