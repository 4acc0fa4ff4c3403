"""A fixed-seq-len point's two result files in InferenceX's shapes: the raw file
``benchmark_serving.py --save-result`` writes, and the processed ``agg_<name>.json``
``utils/process_result.py`` makes of it, which InferenceX's comparison, database and charts
read.

The raw figures are computed as ``benchmark_serving.py`` computes them: a failed request counts
zero output tokens; TPOT is ``(latency - TTFT) / (output tokens - 1)`` over requests with more
than one output token; percentiles are NumPy's linear ones, in milliseconds; the standard
deviation is the population one. The processed file divides throughput by the point's GPU
count, turns every ``*_ms`` figure into seconds without the suffix and adds interactivity,
``1000 / TPOT in ms``, for each TPOT figure, the standard deviation's included (as
``process_result.py`` does, though the inverse of a deviation is no deviation).

InferenceX's power check reads the benchmark window from the raw file
(``benchmark_start_time_unix``, ``benchmark_end_time_unix``, ``duration``, ``completed``, the
token totals) and integrates each GPU's power over it from ``gpu_metrics.csv``; without that file
it writes its report as invalid (``telemetry_file_missing``) and the processed file carries
``power_valid: 0``. A raw file without the window fields makes the check mark the result invalid
on a GPU runner, so they are always written. The power figures themselves need InferenceX's GPU
monitor, which this plugin does not run: its report is the one for no telemetry.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pytest_infx.fixedseq.client import Outcome
from pytest_infx.fixedseq.prompts import RandomRequest
from pytest_infx.results.identity import ConfigIdentity

PERCENTILE_METRICS = ("ttft", "tpot", "itl", "e2el")
PERCENTILES = (90.0, 99.0, 99.9)
POWER_METRIC_SCHEMA_VERSION = 2
POWER_REPORT_SCHEMA_VERSION = 1
TELEMETRY_FILE = "gpu_metrics.csv"


@dataclass(frozen=True)
class RunInfo:
    """What ``benchmark_serving.py`` writes about the run beside its figures."""

    model_id: str
    tokenizer_id: str
    num_prompts: int
    max_concurrency: int
    backend: str


def _percentile(values: Sequence[float], p: float) -> float:
    """NumPy's default (linear) percentile, without NumPy on this path."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = (len(ordered) - 1) * p / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _word(p: float) -> str:
    return str(int(p)) if int(p) == p else str(p)


def _stats(name: str, values: Sequence[float]) -> dict[str, float]:
    """Milliseconds; an empty list counts as one zero, as ``np.mean(x or 0)`` does."""
    ms = [v * 1000.0 for v in values] or [0.0]
    found = {
        f"mean_{name}_ms": statistics.fmean(ms),
        f"median_{name}_ms": _percentile(ms, 50.0),
        f"std_{name}_ms": statistics.pstdev(ms),
    }
    for p in PERCENTILES:
        found[f"p{_word(p)}_{name}_ms"] = _percentile(ms, p)
    return found


def raw_result(
    info: RunInfo, requests: Sequence[RandomRequest], outcome: Outcome
) -> dict[str, object]:
    """The raw result file's content."""
    outputs = outcome.outputs
    lens: list[int] = []
    ttfts: list[float] = []
    tpots: list[float] = []
    itls: list[float] = []
    e2els: list[float] = []
    total_input = 0
    completed = 0
    for request, output in zip(requests, outputs, strict=True):
        if not output.success:
            lens.append(0)
            continue
        tokens = output.output_tokens or 0
        lens.append(tokens)
        total_input += request.prompt_len
        if tokens > 1:
            tpots.append((output.latency_s - output.ttft_s) / (tokens - 1))
        itls.extend(output.itl_s)
        ttfts.append(output.ttft_s)
        e2els.append(output.latency_s)
        completed += 1
    duration = outcome.duration_s
    total_output = sum(lens)
    result: dict[str, object] = {
        "date": datetime.fromtimestamp(outcome.started, UTC).strftime("%Y%m%d-%H%M%S"),
        "benchmark_start_time_unix": outcome.started,
        "benchmark_end_time_unix": outcome.started + duration,
        "backend": info.backend,
        "model_id": info.model_id,
        "tokenizer_id": info.tokenizer_id,
        "num_prompts": info.num_prompts,
        "request_rate": "inf",
        "burstiness": 1.0,
        "best_of": 1,
        "max_concurrency": info.max_concurrency,
        "duration": duration,
        "completed": completed,
        "total_input_tokens": total_input,
        "total_output_tokens": total_output,
        "request_throughput": completed / duration,
        "request_goodput:": None,
        "output_throughput": total_output / duration,
        "total_token_throughput": (total_input + total_output) / duration,
        "input_lens": [r.prompt_len for r in requests],
        "output_lens": lens,
        "ttfts": [o.ttft_s for o in outputs],
        "itls": [list(o.itl_s) for o in outputs],
        "generated_texts": [o.generated_text for o in outputs],
        "errors": [o.error for o in outputs],
    }
    for name, values in (("ttft", ttfts), ("tpot", tpots), ("itl", itls), ("e2el", e2els)):
        result.update(_stats(name, values))
    return result


def processed(
    identity: ConfigIdentity,
    raw: Mapping[str, object],
    *,
    router: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The processed file's content, in ``process_result.py``'s field order; ``router`` is the
    name and version of a router fronting the server (InferenceX's ``ROUTER_METADATA``), and
    the file has that field only then."""
    gpus = identity.gpus
    total = _number(raw, "total_token_throughput")
    output = _number(raw, "output_throughput")
    agg: dict[str, object] = {
        "hw": identity.runner,
        "conc": identity.conc,
        "image": identity.image or "",
        "model": identity.model,
        "infmax_model_prefix": identity.model_prefix,
        "framework": identity.framework,
        "precision": identity.precision,
        "spec_decoding": identity.spec_method,
        "disagg": False,
        "recipe_fingerprint": identity.fingerprint,
        "isl": identity.isl,
        "osl": identity.osl,
    }
    if router is not None:
        agg["router"] = dict(router)
    agg |= {
        "is_multinode": False,
        "tp": identity.tp,
        "pp": identity.pp,
        "dcp_size": identity.dcp,
        "pcp_size": identity.pcp,
        "ep": identity.ep,
        "dp_attention": "true" if identity.dp_attention else "false",
        "tput_per_gpu": total / gpus,
        "output_tput_per_gpu": output / gpus,
        "input_tput_per_gpu": (total - output) / gpus,
    }
    for metric in PERCENTILE_METRICS:
        stats = [f"{stat}_{metric}_ms" for stat in ("mean", "median", "std")]
        stats += [k for k in raw if k.startswith("p") and k.endswith(f"_{metric}_ms")]
        for key in stats:
            value = raw.get(key)
            if not isinstance(value, int | float):
                continue
            name = key.removesuffix("_ms")
            agg[name] = value / 1000.0
            if metric == "tpot":
                agg[name.removesuffix("tpot") + "intvty"] = 1000.0 / value if value else 0.0
    agg["power_metric_schema_version"] = POWER_METRIC_SCHEMA_VERSION
    agg["power_valid"] = 0
    return agg


def power_report(raw: Mapping[str, object], raw_name: str, gpus: int) -> dict[str, object]:
    """The power check's report (``power_validation_<raw file name>``) for a run without GPU
    telemetry: the benchmark window it read from the raw file and why the power is invalid."""
    start = _number(raw, "benchmark_start_time_unix")
    end = _number(raw, "benchmark_end_time_unix")
    return {
        "schema_version": POWER_REPORT_SCHEMA_VERSION,
        "power_valid": False,
        "reasons": ["telemetry_file_missing"],
        "benchmark_result": raw_name,
        "telemetry_source": TELEMETRY_FILE,
        "integration_method": "per_device_trapezoidal_with_linear_boundary_interpolation",
        "benchmark_window": {
            "start_time_unix": start,
            "end_time_unix": end,
            "integration_duration_s": end - start,
            "reported_duration_s": _number(raw, "duration"),
            "completed": raw.get("completed"),
            "total_input_tokens": raw.get("total_input_tokens"),
            "total_output_tokens": raw.get("total_output_tokens"),
        },
        "expected_gpu_count": gpus,
        "observed_gpu_count": 0,
        "observed_gpu_ids": [],
        "per_gpu_energy_j": {},
        "per_gpu_max_sample_gap_s": {},
        "per_gpu_sample_counts": {},
        "device_issues": {},
        "accumulator_check": None,
        "metrics": {},
    }


def _number(raw: Mapping[str, object], key: str) -> float:
    value = raw.get(key)
    if not isinstance(value, int | float):
        raise ValueError(f"the raw result has no number {key!r}")
    return float(value)
