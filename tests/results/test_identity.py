"""Result file names as InferenceX's workflow builds them at 843c6254f.

``.github/workflows/benchmark-tmpl.yml``: ``RESULT_FILENAME = ${EXP_NAME}_${PRECISION}_${FRAMEWORK}
_tp${TP}-pp${PP_SIZE}-dcp${DCP_SIZE}-pcp${PCP_SIZE}-ep${EP_SIZE}-dpa${DP_ATTENTION}_disagg-${DISAGG}
_spec-${SPEC_DECODING}_conc${CONC}_${runner.name}``, then ``_recipe-${RECIPE_FINGERPRINT:0:16}``;
``utils/matrix_logic/generate_sweep_configs.py`` (single node, agentic):
``exp-name = f"{model_code}_tp{tp}_conc{conc}_kvnone" + (f"_spec-{spec}" if spec != "none")``;
``e2e-tests.yml`` passes ``disagg: 'false'`` for single-node AgentX.
"""

from __future__ import annotations

from typing import Any

from pytest_infx.results.identity import ConfigIdentity


def _shape(**fields: Any) -> ConfigIdentity:
    """An identity with what a file name does not show filled in."""
    return ConfigIdentity(
        **{"hardware": "b200", "engine_version": "0", "spec_method": "none", **fields}
    )


def test_plain_point_name() -> None:
    shape = _shape(
        model_prefix="mimov2.6flash",
        precision="fp4",
        framework="sglang",
        tp=4,
        conc=32,
        runner="b200-nv_03",
    )
    assert shape.file_name() == (
        "mimov2.6flash_tp4_conc32_kvnone_fp4_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse"
        "_disagg-false_spec-none_conc32_b200-nv_03"
    )


def test_speculative_dp_attention_point_with_fingerprint() -> None:
    shape = _shape(
        model_prefix="dsv4",
        precision="fp4",
        framework="vllm",
        tp=8,
        ep=8,
        dp_attention=True,
        spec_method="mtp",
        conc=64,
        runner="b200-dgxc_1",
        fingerprint="0123456789abcdef",
    )
    assert shape.exp_name() == "dsv4_tp8_conc64_kvnone_spec-mtp"
    assert shape.file_name() == (
        "dsv4_tp8_conc64_kvnone_spec-mtp_fp4_vllm_tp8-pp1-dcp1-pcp1-ep8-dpatrue"
        "_disagg-false_spec-mtp_conc64_b200-dgxc_1_recipe-0123456789abcdef"
    )


def test_gpu_count_is_tp_pp_pcp_not_dcp() -> None:
    shape = _shape(
        model_prefix="m", precision="fp8", framework="vllm", tp=2, pp=2, dcp=2, pcp=3, conc=1,
        runner="h200",
    )  # fmt: skip
    assert shape.gpus == 12


def test_the_history_key_is_the_config_s_columns() -> None:
    shape = _shape(model_prefix="m", precision="fp8", framework="vllm", tp=2, pp=2, conc=1,
                   runner="h200-nv_1")  # fmt: skip
    assert shape.history_key() == {
        "model_prefix": "m", "hardware": "b200", "framework": "vllm", "engine_version": "0",
        "precision": "fp8", "spec_method": "none", "topology": "tp2-pp2-dcp1-pcp1-ep1-dpafalse",
        "tp": 2, "ep": 1, "dp_attention": False, "gpus": 4,
    }  # fmt: skip
