"""TensorRT-LLM: ``trtllm-serve`` under ``mpirun``, as InferenceX's TensorRT-LLM scripts start it.

The command is ``mpirun -n 1 --oversubscribe --allow-run-as-root trtllm-serve MODEL`` (a recipe's
``engine.command`` replaces the launcher part, for the scripts that start ``trtllm-serve``
without ``mpirun``), then ``--host``, ``--port``, ``--tp_size`` and the recipe's own flags in
``trtllm-serve``'s snake case. The LLM-API options, which InferenceX's scripts write to a YAML
file, are the recipe's ``extra_llm_api_options`` mapping (or ``config``, the same option); the
plan writes them to a file the launch puts in the server's folder, adding the
``speculative_config`` of the point's draft length, and shows the file.

Forced acceptance is TensorRT-LLM's environment variable, which counts draft tokens only, AL - 1.
TensorRT-LLM's ``/metrics`` is a queue of per-iteration stats that each read drains, not
counters, and it holds them only with the LLM-API option ``enable_iter_perf_stats``: a
SPEED-Bench cell's server gets that option, and the cell reads the queue throughout its pass
(the cell's drain reader), AL = 1 + accepted / requests with drafts, summed over the
iterations' ``specDecodingStats``. Other points' servers run as InferenceX's scripts start them,
without it. No endpoint shows a templated prompt, so the rendered-prompt check is skipped.

No release of TensorRT-LLM installs here (its registry entries fetch the real wheel from an index
this machine cannot reach, and importing it needs CUDA), so ``infx engine check`` checks its
commands against the option set read from that release's source
(:mod:`pytest_infx.engines.optionset`): the ``trtllm-serve`` flags and the LLM-API options
file's fields. A release whose source was not read is listed as unchecked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

import yaml

from pytest_infx.engines import optionset
from pytest_infx.engines.base import (
    ADMISSION,
    FILES,
    HOST,
    PORT,
    SPECULATIVE,
    TP,
    Builtin,
    ParallelFlags,
    PlanError,
    PlanRequest,
    ServerArgs,
    admission_limit,
    flags,
    speculation,
)
from pytest_infx.engines.optionset import OptionSet
from pytest_infx.engines.spec import (
    IterationSpec,
    SyntheticSetting,
    json_int,
    number,
)
from pytest_infx.recipes.owned import OwnedFlags, canonical
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import Speculative

IMAGE_COMMAND = ("mpirun", "-n", "1", "--oversubscribe", "--allow-run-as-root", "trtllm-serve")
OPTIONS_FILE = "extra-llm-api-options.yaml"
OPTIONS_ARGS: Final = ("extra-llm-api-options", "config")
"""``--extra_llm_api_options`` and ``--config`` are one click option of ``trtllm-serve``."""
OWNED: Final[OwnedFlags] = {
    "host": HOST,
    "port": PORT,
    "tp-size": TP,
}
OWNED_AGENTIC: Final[OwnedFlags] = {"max-batch-size": ADMISSION}
OWNED_OPTIONS: Final = ("speculative_config",)
SPECULATIVE_OPTION: Final = "--extra-llm-api-options.speculative_config"
"""Where a recorded options file's speculative config is, read as the fidelity check reads it."""
"""LLM-API options the plan writes itself, from the speculative block and the draft length."""
ITER_STATS = "enable_iter_perf_stats"
"""The LLM-API option that makes the server queue per-iteration stats for ``/metrics``."""
SPEC_STATS = "specDecodingStats"
PARALLEL: Final = ParallelFlags(pp=("pp-size",), ep=("ep-size",))
DECODING_TYPES: Final[Mapping[str, str]] = {"mtp": "MTP", "eagle3": "Eagle3", "eagle": "Eagle"}
ATTENTION_DP = "enable_attention_dp"
TRTLLM_ENV = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"


def synthetic(al: float, k: int) -> SyntheticSetting:
    """TensorRT-LLM forces the accepted draft tokens, AL - 1."""
    accepted = round(al - 1, 6)
    notes: tuple[str, ...] = ()
    if accepted != int(accepted):
        notes = (
            f"{TRTLLM_ENV} counts draft tokens only, hence AL-1; the two-model path int()s "
            "it, so a fractional value there warns and falls back to 0 (no forcing); only "
            "the one-model path honours the fraction",
        )
    return SyntheticSetting(
        engine="trtllm", al=al, k=k, env={TRTLLM_ENV: number(accepted)}, notes=notes
    )


def speculative_config(spec: Speculative, k: int, draft: str | None) -> dict[str, object]:
    """MTP counts its draft tokens in ``num_nextn_predict_layers``; the EAGLE family in
    ``max_draft_len``, with the draft checkpoint in ``speculative_model_dir``. The recipe's
    ``settings`` are added as written (``eagle3_one_model``, for one)."""
    method = spec.method.lower()
    decoding = DECODING_TYPES.get(method)
    if decoding is None:
        known = ", ".join(DECODING_TYPES)
        raise PlanError(
            f"speculative method {spec.method!r} has no TensorRT-LLM decoding type here;"
            f" use one of {known}"
        )
    config: dict[str, object] = {"decoding_type": decoding}
    if decoding == "MTP":
        config["num_nextn_predict_layers"] = k
    else:
        config["max_draft_len"] = k
        if draft is not None:
            config["speculative_model_dir"] = draft
    config.update(spec.settings)
    return config


def split_options(
    args: Mapping[str, object], key: str
) -> tuple[dict[str, object], dict[str, object]]:
    """The recipe's flags without the LLM-API options, and those options as a mapping."""
    rest: dict[str, object] = {}
    options: dict[str, object] = {}
    for name, value in args.items():
        if canonical(name) not in OPTIONS_ARGS:
            rest[name] = value
            continue
        if not isinstance(value, dict):
            raise PlanError(
                f"{key}: engine.args.{name} must be a mapping of LLM-API options (the plugin"
                f" writes the file), got {type(value).__name__}"
            )
        options.update(value)
    for name in OWNED_OPTIONS:
        if name in options:
            raise PlanError(
                f"{key}: engine.args.extra_llm_api_options.{name} is set by pytest-infx from"
                f" {SPECULATIVE}; remove it from the options"
            )
    return rest, options


def spec_iterations(payload: object) -> tuple[IterationSpec, ...]:
    """Each iteration's ``specDecodingStats`` in one ``/metrics`` answer, a JSON list of
    iteration stats; an iteration without them (no speculation) is left out."""
    if not isinstance(payload, list):
        raise ValueError(f"expected a JSON list of iteration stats, got {type(payload).__name__}")
    found: list[IterationSpec] = []
    for index, entry in enumerate(payload):
        if not isinstance(entry, dict):
            raise ValueError(f"entry {index} is not an object")
        stats = entry.get(SPEC_STATS)
        if stats is None:
            continue
        iteration = json_int(entry.get("iter"))
        if iteration is None or not isinstance(stats, dict):
            raise ValueError(
                f"entry {index} has no integer iter or a {SPEC_STATS} that is no object"
            )
        drafts, draft_tokens, accepted = (
            json_int(stats.get(name))
            for name in ("numRequestsWithDraftTokens", "numDraftTokens", "numAcceptedTokens")
        )
        if drafts is None or draft_tokens is None or accepted is None:
            raise ValueError(
                f"entry {index} (iter {iteration}): {SPEC_STATS} lacks an integer"
                " numRequestsWithDraftTokens, numDraftTokens or numAcceptedTokens"
            )
        found.append(IterationSpec(iteration, drafts, draft_tokens, accepted))
    return tuple(found)


class TrtllmAdapter(Builtin):
    name = "trtllm"
    inferencex_framework: str | None = "trt"
    iteration_stats = True
    image_command = IMAGE_COMMAND
    owned = OWNED
    owned_agentic = OWNED_AGENTIC
    parallel_flags = PARALLEL

    def dp_attention(self, point: Point) -> bool:
        _, options = split_options(point.recipe.engine.args, point.recipe.key)
        return options.get(ATTENTION_DP) is True

    def arguments(self, asked: PlanRequest) -> ServerArgs:
        point, paths = asked.point, asked.paths
        recipe = point.recipe
        engine = recipe.engine
        argv = [paths.target, "--host", "127.0.0.1", "--port", "{port}"]
        argv += ["--tp_size", str(point.tp)]
        args, options = split_options(engine.args, recipe.key)
        argv += flags(
            args, key=recipe.key, owned=self.owned_flags(agentic=point.agentic is not None)
        )
        limit = admission_limit(point)
        if limit is not None:
            argv += ["--max_batch_size", str(limit)]
        env = dict(engine.env)
        if point.cell is not None:
            if options.get(ITER_STATS, True) is not True:
                raise PlanError(
                    f"{recipe.key}: engine.args.extra_llm_api_options.{ITER_STATS} must stay"
                    " on for SPEED-Bench points: a cell reads its AL from the per-iteration"
                    " stats it queues"
                )
            options[ITER_STATS] = True
        spec, k = speculation(point)
        if spec is not None and k is not None:
            options["speculative_config"] = speculative_config(spec, k, paths.draft)
            if asked.synthetic is not None:
                env.update(asked.synthetic.env)
        files: dict[str, str] = {}
        if options:
            files[OPTIONS_FILE] = yaml.safe_dump(options, sort_keys=False)
            argv += ["--extra_llm_api_options", f"{FILES}/{OPTIONS_FILE}"]
        return ServerArgs(argv, env, k, files)

    def speculative_block(
        self, prefix: str, found: Mapping[str, str | None], curves: Mapping[str, str]
    ) -> str | None:
        """The options file's ``speculative_config`` (``found`` holds the file's settings
        under ``--extra-llm-api-options.<key>``) where :func:`speculative_config` writes it back:
        MTP by its ``num_nextn_predict_layers`` and nothing else, the model's head with a curve."""
        try:
            config = json.loads(found.get(SPECULATIVE_OPTION) or "")
        except ValueError:
            return None
        if not isinstance(config, dict) or prefix not in curves:
            return None
        steps = config.get("num_nextn_predict_layers")
        if set(config) != {"decoding_type", "num_nextn_predict_layers"}:
            return None
        if config["decoding_type"] != "MTP" or not isinstance(steps, int) or steps < 1:
            return None
        return f"{{method: mtp, draft-length: {steps}, golden: {curves[prefix]}}}"

    def spec_iterations(self, payload: object) -> tuple[IterationSpec, ...]:
        return spec_iterations(payload)

    def option_set(self, version: str | None) -> OptionSet | None:
        return optionset.load(self.name, version)

    def synthetic(self, al: float, k: int) -> SyntheticSetting:
        return synthetic(al, k)
