"""The recipe schema: strict, kebab-case, frozen.

Strict pydantic models are the contract between recipe authors and everything downstream: an
unknown or misspelled field, a wrong type or a missing field is rejected here, before any server
starts, instead of silently measuring the wrong configuration. Field names are kebab-case in YAML
(as in InferenceX) and snake_case in Python.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    field_validator,
    model_validator,
)

from pytest_infx.golden.curve import CURVE_NAME_RE, MAX_TOLERANCE
from pytest_infx.images import pinned
from pytest_infx.settings import MAX_REPEATS

ThinkingMode = Literal["thinking_on", "thinking_off"]
EngineName = Annotated[str, Field(min_length=1)]
"""An engine's name; which names exist is the engine registry's answer (checked at load)."""
EMBEDDED_PREFIX = "embedded:"
MAX_TP = 1024
MAX_CONCURRENCY = 1_000_000
MAX_DRAFT_LENGTH = 256
Concurrency = Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
DraftLength = Annotated[int, Field(ge=1, le=MAX_DRAFT_LENGTH)]
Repeats = Annotated[int | None, Field(ge=1, le=MAX_REPEATS)]
"""Passes of each point, whose median the point keeps (None: the ini's ``infx_repeats``, else
1): one pass on a noisy host cannot tell a regression from noise. How a point is judged rather
than what it measures, so it is not part of the fingerprint."""
MAX_ADMISSION_FACTOR = 1000.0
"""Admission limit = factor x the largest concurrency; past this it is no limit at all, and a
factor such as 1e308 overflows when the limit is computed."""


def _curve_name(name: str) -> str:
    """A golden name is a file stem under ``golden/``: ``../x`` or an empty name would only fail
    after the servers ran, when the measured curve is compared or written."""
    if not CURVE_NAME_RE.fullmatch(name):
        raise ValueError(
            f"golden curve name {name!r} must match {CURVE_NAME_RE.pattern} (the stem of"
            " golden/<name>.yaml)"
        )
    return name


CurveName = Annotated[str, AfterValidator(_curve_name)]
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _env_name(name: str) -> str:
    """A key that is no variable name (``A=B``, ``PATH ``) would be dropped or split by the
    process that receives the environment."""
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(f"environment variable name {name!r} must match {_ENV_NAME.pattern}")
    return name


EnvName = Annotated[str, AfterValidator(_env_name)]


def _runner(name: str) -> str:
    from pytest_infx.hardware import unknown_runner

    problem = unknown_runner(name)
    if problem is not None:
        raise ValueError(problem)
    return name


Runner = Annotated[str, AfterValidator(_runner)]

SPECULATIVE_METHODS = (
    "ngram",
    "ngram_gpu",
    "draft_model",
    "suffix",
    "custom_class",
    "eagle",
    "eagle3",
    "extract_hidden_states",
    "dflash",
    "dspark",
    "nextn",
    "standalone",
    "uno",
    "mtp",
)
"""The methods the engines accept: vLLM's ``--speculative-config`` methods (its model-specific
MTP names end in ``mtp``), SGLang's ``--speculative-algorithm`` values (in any case) and ATOM's
``--method``. A misspelled method would otherwise fail only when the server starts."""


def _method(name: str) -> str:
    lowered = name.lower()
    if lowered in SPECULATIVE_METHODS or (lowered.endswith("mtp") and lowered.isidentifier()):
        return name
    import difflib

    close = difflib.get_close_matches(lowered, SPECULATIVE_METHODS, n=2)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise ValueError(
        f"unknown speculative method {name!r}; {hint}methods: {', '.join(SPECULATIVE_METHODS)}"
        " and the model-specific MTP names (deepseek_mtp, ...)"
    )


Method = Annotated[str, AfterValidator(_method)]

PRECISION_LABELS: Final[dict[str, str]] = {
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    "fp4": "fp4",
    "fp8": "fp8",
    "fp8_e4m3": "fp8",
    "fp8-e4m3": "fp8",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "f16": "fp16",
    "float16": "fp16",
    "fp32": "fp32",
    "f32": "fp32",
    "float32": "fp32",
    "int8": "int8",
}
"""Each ``model.precision`` label and the weight class it means (mxfp4 and nvfp4 are fp4): the
precision check compares the checkpoint's census with it, and InferenceX's result names carry
the label."""


def _precision(label: str) -> str:
    if label.strip().lower() in PRECISION_LABELS:
        return label
    import difflib

    close = difflib.get_close_matches(label.strip().lower(), PRECISION_LABELS, n=2)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise ValueError(
        f"unknown precision {label!r}; {hint}labels: {', '.join(sorted(PRECISION_LABELS))}"
    )


Precision = Annotated[str, AfterValidator(_precision)]


def _ratio_range(ratio: list[float]) -> list[float]:
    """aiperf starts each trajectory between these two fractions of its length."""
    if len(ratio) == 2 and not 0 <= ratio[0] <= ratio[1] <= 1:
        raise ValueError(
            f"{ratio} is not a range within [0, 1]: give [low, high] with 0 <= low <= high <= 1"
        )
    return ratio


def _kebab(name: str) -> str:
    return name.replace("_", "-")


DEEPSEEK_V4: Final = "deepseek-v4"
"""The ``chat-template`` value that asks for DeepSeek-V4's own prompt encoding, which ships no
Jinja template (InferenceX's ``--dsv4``)."""


class Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=_kebab,
        populate_by_name=True,
        allow_inf_nan=False,
    )


class ModelInfo(Strict):
    """The served model, plus the facts that recipe rules need (KV heads for attention TP)."""

    hub_id: str
    served_name: str
    prefix: str
    precision: Precision
    path: str | None = None
    kv_heads: int | None = Field(default=None, ge=1)
    max_model_len: int | None = Field(default=None, ge=1)


class Engine(Strict):
    """How the server is started: a pinned image, a local command, or the embedded CPU engine."""

    name: EngineName
    version: str | None = None
    image: str | None = None
    image_unpinned: str | None = Field(default=None, min_length=1)
    """Why ``image`` is run by its tag: the benchmark it mirrors runs a nightly whose digest
    was never published. The tag can move, so the reason stays in the recipe for review."""
    command: list[str] | None = None
    embedded: EngineName | None = None
    """The CPU engine pytest-infx installs itself (``infx engine status`` names it)."""
    port: int = Field(default=8888, ge=1, le=65535)
    ready_timeout: float = Field(default=3600.0, gt=0)
    args: dict[str, JsonValue] = Field(default_factory=dict)
    env: dict[EnvName, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_runtime(self) -> Engine:
        given = [n for n in ("image", "command", "embedded") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of 'image' (pinned by digest), 'command' (a local command) "
                "or 'embedded' (the CPU engine pytest-infx installs); got "
                + (", ".join(given) or "none")
            )
        if self.image_unpinned is not None and (self.image is None or pinned(self.image)):
            raise ValueError(
                "'image-unpinned' explains an image run by its tag; this recipe has "
                + ("no image" if self.image is None else "a pinned image")
                + ": remove 'image-unpinned'"
            )
        return self


class Speculative(Strict):
    """Speculative decoding: the method and its draft; the draft length comes from the point."""

    method: Method
    draft: str | None = None
    draft_subfolder: str | None = None
    block_size: int | None = Field(default=None, ge=2)
    settings: dict[str, JsonValue] = Field(default_factory=dict)


class Sampling(Strict):
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    top_k: int | None = Field(default=None, ge=-1)
    """-1 (or 0) turns it off, as the engines read it; below -1 they refuse the request."""
    seed: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)


class DatasetRef(Strict):
    """A SPEED-Bench subset; no path means the prompt set shipped with pytest-infx."""

    name: Literal["speed-bench"] = "speed-bench"
    subset: str = "qualitative"
    category: str
    path: str | None = None
    expected_rows: int | None = Field(default=None, ge=1)
    num_prompts: int | None = Field(default=None, ge=1)


class Speedbench(Strict):
    speculative: Speculative
    draft_lengths: list[DraftLength] = Field(min_length=1)
    thinking_modes: dict[ThinkingMode, dict[str, JsonValue]] = Field(min_length=1)
    sampling: Sampling = Field(default_factory=Sampling)
    concurrency: int = Field(ge=1, le=MAX_CONCURRENCY)
    dataset: DatasetRef
    output_len: int = Field(ge=1)
    golden: CurveName
    tolerance: float | None = Field(default=None, ge=0, le=MAX_TOLERANCE)
    request_timeout: float = Field(default=3600.0, gt=0)
    repeats: Repeats = None


class AgenticPoints(Strict):
    """One arm of the search space: a TP, its concurrencies and, where a key serves one TP in
    several ways (expert parallel, DP attention, KV offload, speculative or not), the name of
    the arm, which overrides select with ``when: {variant: ...}``."""

    tp: int = Field(ge=1, le=MAX_TP)
    concurrency: list[Concurrency] = Field(min_length=1)
    variant: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.-]*$")


class AgenticSpeculative(Speculative):
    draft_length: int = Field(ge=1, le=MAX_DRAFT_LENGTH)
    golden: CurveName
    thinking: ThinkingMode = "thinking_on"


class Agentic(Strict):
    points: list[AgenticPoints] = Field(min_length=1)
    admission_factor: float = Field(default=2.0, gt=0, le=MAX_ADMISSION_FACTOR)
    speculative: AgenticSpeculative | None = None
    duration: int = Field(default=1800, ge=1)
    trajectory_start_ratio: Annotated[list[float], AfterValidator(_ratio_range)] | None = Field(
        default_factory=lambda: [0.25, 0.75], min_length=2, max_length=2
    )
    trace_idle_gap_cap: float | None = Field(default=300.0, gt=0)
    warmup_grace_period: float | None = Field(default=1800.0, gt=0)
    request_count: int | None = Field(default=None, ge=1)
    seed: int = 42
    traces: str = "semianalysis_cc_traces_weka_062126"
    num_dataset_entries: int | None = Field(default=393, ge=1)
    failed_request_threshold: float = Field(default=0.10, ge=0, le=1)
    repeats: Repeats = None
    chat_template: bool = False
    """Count input tokens with the model's chat template applied, as aiperf's
    ``--apply-chat-template`` does (its synthetic input lengths allow for the template's
    wrapping; the replayed turns are sent as chat requests either way)."""


class FixedSeqLenPoints(Strict):
    """One arm of a fixed-seq-len search space: a TP, one input/output length pair and its
    concurrencies; ``variant`` names an arm as in AgentX blocks."""

    tp: int = Field(ge=1, le=MAX_TP)
    isl: int = Field(ge=1)
    osl: int = Field(ge=1)
    concurrency: list[Concurrency] = Field(min_length=1)
    variant: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.-]*$")


class FixedSeqLen(Strict):
    """InferenceX's fixed-sequence-length benchmark: ``benchmark_serving.py``'s random dataset
    with its workflow's settings (``random-range-ratio`` 0.8, ten prompts and two warm-up
    requests per unit of concurrency, seed 0, ``ignore_eos``)."""

    points: list[FixedSeqLenPoints] = Field(min_length=1)
    speculative: AgenticSpeculative | None = None
    random_range_ratio: float = Field(default=0.8, ge=0, le=1)
    prompts_per_concurrency: int = Field(default=10, ge=1)
    warmups_per_concurrency: int = Field(default=2, ge=0)
    seed: int = 0
    request_timeout: float = Field(default=3600.0, gt=0)
    connections: Literal["per-request", "kept-alive"] = "per-request"
    """``per-request`` opens a connection for each request, as ``benchmark_serving.py`` does, so
    TTFT includes the connection set-up; ``kept-alive`` reuses one per concurrency slot."""
    repeats: Repeats = None
    prompt_workers: int = Field(default=8, ge=0)
    """The workers ``benchmark_serving.py`` splits prompt generation over, which decides the ids
    that pad a prompt that re-encodes short: 8 as on a GPU runner; 0 is its own rule,
    ``min(cpu_count, 8)``, which makes the prompts depend on the machine."""
    chat_template: bool | Literal["deepseek-v4"] = False
    """Send each prompt in the model's chat template, as ``benchmark_serving.py
    --use-chat-template`` does: the template's length is taken off the input length and each
    prompt is wrapped as one user message with the generation prompt (the model folder must
    ship a template); ``deepseek-v4`` wraps it with DeepSeek-V4's own encoding instead, as its
    ``--dsv4`` does."""


Scalar = str | int | float | bool | None


class StatedDifference(Strict):
    """A setting in which the recipe's planned command differs from the InferenceX command it
    mirrors, and why: the plugin owns it, ours is a better default (with the evidence), or a
    tool cannot do what InferenceX does. ``"*"`` for a value matches any (a per-point value)."""

    flag: str | None = Field(default=None, pattern=r"^-")
    variable: EnvName | None = None
    setting: str | None = None
    """A client setting, by the plan's name for it (``num_prompts``)."""
    inferencex: Scalar
    ours: Scalar
    reason: Literal["owned", "better-default", "tool-limit"]
    evidence: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_name(self) -> StatedDifference:
        named = [n for n in ("flag", "variable", "setting") if getattr(self, n) is not None]
        if len(named) != 1:
            raise ValueError(
                "a stated difference names exactly one 'flag', 'variable' or 'setting'; got "
                + (", ".join(named) or "none")
            )
        if self.reason == "better-default" and self.evidence is None:
            raise ValueError("a better default needs its 'evidence' (a measurement, an issue)")
        return self

    @property
    def name(self) -> str:
        return self.flag or self.variable or self.setting or ""


class Recipe(Strict):
    """One benchmark configuration: one recipe key, one or both benchmark kinds."""

    key: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    model: ModelInfo
    runner: Runner
    engine: Engine
    tp: int = Field(default=1, ge=1, le=MAX_TP)
    speedbench: Speedbench | None = None
    agentic: Agentic | None = None
    fixed_seq_len: FixedSeqLen | None = None
    kinds: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """The blocks of kinds that other packages provide, by kind name: the kind reads its own
    block (:mod:`pytest_infx.recipes.blocks`), since this schema cannot know its fields."""
    docs: str | None = None
    """Prose for the reader: where and why the recipe departs from the script it mirrors. It
    changes no result, so it is not part of any fingerprint."""
    differences: list[StatedDifference] = Field(default_factory=list)
    """Where the planned commands differ from InferenceX's, and why. It judges the plan rather
    than making it, so it is not part of any fingerprint."""
    tolerance: dict[str, str] = Field(default_factory=dict)
    """The baseline gate's tolerance per metric (``tput_per_gpu: -5%``), over the ini's. It
    judges results rather than making them, so it is not part of any fingerprint either."""

    @field_validator("tolerance")
    @classmethod
    def _tolerances(cls, value: dict[str, str]) -> dict[str, str]:
        from pytest_infx.baseline_tolerance import parse_tolerance

        for name, change in value.items():
            parse_tolerance(f"{name}: {change}", source=f"tolerance.{name}")
        return value

    @model_validator(mode="after")
    def _has_benchmark(self) -> Recipe:
        kinds = (self.speedbench, self.agentic, self.fixed_seq_len)
        if all(block is None for block in kinds) and not self.kinds:
            raise ValueError(
                "a recipe needs a 'speedbench', an 'agentic' or a 'fixed-seq-len' block"
                " (or a block under 'kinds' for a kind another package provides)"
            )
        return self


POINT_FIELDS = (
    "kind",
    "tp",
    "concurrency",
    "draft-length",
    "thinking",
    "variant",
    "isl",
    "osl",
)
