from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_infx.fixedseq.client import Outcome, Output
from pytest_infx.fixedseq.prompts import RandomRequest
from pytest_infx.fixedseq.results import RunInfo, power_report, processed, raw_result
from pytest_infx.results.identity import ConfigIdentity

INFO = RunInfo(
    model_id="org/m", tokenizer_id="org/m", num_prompts=4, max_concurrency=2, backend="x"
)
IDENTITY = ConfigIdentity(
    runner="cpu", hardware="cpu", engine_version="0", image="", model="org/m", model_prefix="m",
    framework="x", precision="bf16", spec_method="none", isl=100, osl=10, tp=2, ep=1,
    dp_attention=False, conc=2,
)  # fmt: skip


def _ok(ttft: float, itl: tuple[float, ...], tokens: int) -> Output:
    return Output(True, "t" * tokens, tokens, ttft, itl, ttft + sum(itl), "", len(itl) + 1)


REQUESTS = [RandomRequest("p", n, 10, (1,)) for n in (90, 100, 95, 80)]
OUTPUTS = (
    _ok(0.1, (0.01,) * 9, 10),
    _ok(0.3, (0.02,) * 9, 10),
    Output(False, "", None, 0.0, (), 0.0, "HTTP 500: no", 0),
    _ok(0.2, (0.03,) * 4, 5),
)
OUTCOME = Outcome(OUTPUTS, duration_s=2.0, started=1_700_000_000.0)


def test_the_raw_figures_are_benchmark_serving_s() -> None:
    raw = raw_result(INFO, REQUESTS, OUTCOME)
    ttfts = [0.1, 0.3, 0.2]
    tpots = [0.09 / 9, 0.18 / 9, 0.12 / 4]
    itls = [0.01] * 9 + [0.02] * 9 + [0.03] * 4
    assert raw["completed"] == 3
    assert raw["total_input_tokens"] == 90 + 100 + 80
    assert raw["total_output_tokens"] == 25
    assert raw["output_lens"] == [10, 10, 0, 5]
    assert raw["output_throughput"] == 12.5
    assert raw["total_token_throughput"] == (270 + 25) / 2.0
    assert raw["request_throughput"] == 1.5
    assert raw["errors"] == ["", "", "HTTP 500: no", ""]
    assert raw["request_rate"] == "inf" and raw["max_concurrency"] == 2
    for name, values in (("ttft", ttfts), ("tpot", tpots), ("itl", itls)):
        ms = np.array(values) * 1000
        assert raw[f"mean_{name}_ms"] == pytest.approx(np.mean(ms))
        assert raw[f"median_{name}_ms"] == pytest.approx(np.median(ms))
        assert raw[f"std_{name}_ms"] == pytest.approx(np.std(ms))
        for p, word in ((90, "90"), (99, "99"), (99.9, "99.9")):
            assert raw[f"p{word}_{name}_ms"] == pytest.approx(np.percentile(ms, p))
    assert raw["median_e2el_ms"] == pytest.approx(np.median([190.0, 480.0, 320.0]))


def test_no_completed_request_gives_zero_figures_not_an_error() -> None:
    failed = Outcome((Output(False, "", None, 0.0, (), 0.0, "x", 0),), 1.0, 0.0)
    raw = raw_result(INFO, REQUESTS[:1], failed)
    assert raw["completed"] == 0 and raw["output_throughput"] == 0.0
    assert raw["median_ttft_ms"] == 0.0 and raw["p99_tpot_ms"] == 0.0


def test_the_processed_file_is_per_gpu_in_seconds_with_interactivity() -> None:
    raw = raw_result(INFO, REQUESTS, OUTCOME)
    agg = processed(IDENTITY, raw)
    assert agg["tput_per_gpu"] == pytest.approx(295 / 2.0 / 2)
    assert agg["output_tput_per_gpu"] == pytest.approx(12.5 / 2)
    assert agg["input_tput_per_gpu"] == pytest.approx(270 / 2.0 / 2)
    assert agg["median_ttft"] == pytest.approx(0.2)
    median_tpot = float(np.median([0.01, 0.02, 0.03]))
    assert agg["median_tpot"] == pytest.approx(median_tpot)
    assert agg["median_intvty"] == pytest.approx(1 / median_tpot)
    assert agg["std_intvty"] == pytest.approx(1 / agg["std_tpot"])  # type: ignore[operator]
    assert not any(str(k).endswith("_ms") for k in agg)
    assert (agg["hw"], agg["isl"], agg["osl"], agg["conc"], agg["dp_attention"]) == (
        "cpu",
        100,
        10,
        2,
        "false",
    )


def test_a_raw_file_without_throughput_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no number 'total_token_throughput'"):
        processed(IDENTITY, {"output_throughput": 1.0})


@pytest.mark.parametrize("case", ["spec_decoding_mtp", "tp8_dp_attention", "amd_mi355x_atom"])
def test_process_result_s_output_for_inferencex_s_raw_files(reference: Path, case: str) -> None:
    vector = json.loads((reference / "vectors" / f"process_result_{case}.json").read_text())
    env = vector["env"]
    router = env.get("ROUTER_METADATA")
    identity = ConfigIdentity(
        runner=env["RUNNER_TYPE"], hardware=env["RUNNER_TYPE"], engine_version="0",
        image=env["IMAGE"], model=env["MODEL"],
        model_prefix=env["MODEL_PREFIX"], framework=env["FRAMEWORK"],
        precision=env["PRECISION"], spec_method=env["SPEC_DECODING"],
        isl=int(env["ISL"]), osl=int(env["OSL"]), tp=int(env["TP"]), ep=int(env["EP_SIZE"]),
        dp_attention=env["DP_ATTENTION"] == "true", conc=int(env["CONC"]),
        pp=int(env["PP_SIZE"]), dcp=int(env["DCP_SIZE"]), pcp=int(env["PCP_SIZE"]),
        fingerprint=env["RECIPE_FINGERPRINT"],
    )  # fmt: skip
    raw = vector["raw_result"]
    agg = processed(identity, raw, router=json.loads(router) if router else None)
    assert agg == vector["agg_result"]
    assert list(agg) == list(json.loads(vector["stdout"]))
    name = vector["result_filename"] + ".json"
    assert power_report(raw, name, identity.gpus) == vector["power_validation"]


def test_the_raw_file_has_every_field_process_result_and_its_power_check_read(
    reference: Path,
) -> None:
    raw = raw_result(INFO, REQUESTS, OUTCOME)
    for vector in sorted((reference / "vectors").glob("process_result_*.json")):
        theirs = set(json.loads(vector.read_text())["raw_result"])
        assert theirs <= set(raw), (vector.name, sorted(theirs - set(raw)))
    assert raw["benchmark_start_time_unix"] == 1_700_000_000.0
    assert raw["benchmark_end_time_unix"] == 1_700_000_002.0
    assert (raw["best_of"], raw["request_goodput:"]) == (1, None)
