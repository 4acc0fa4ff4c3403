"""The result record of each kind as a typed value: what a run writes, what ``--infx-resume``
reuses, what the tables, the report and the ``pytest_infx_result`` hooks read.

Every reader used to re-spell field names and re-check their types on a dict; a record is now
validated once, when it is built or read back, and readers use its attributes. ``version``
numbers the file shape: a file without it is version 1 (the shape before it was numbered), and a
file from a newer pytest-infx is refused by name instead of being misread.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    model_serializer,
    model_validator,
)

from pytest_infx.files import strictjson
from pytest_infx.files.numbers import rate
from pytest_infx.files.textio import InputFileError, read_input

if TYPE_CHECKING:
    from pytest_infx.launch import ServerHandle
    from pytest_infx.launch.telemetry import Summary
from pytest_infx.results import verdict as vocabulary
from pytest_infx.results.identity import ConfigIdentity
from pytest_infx.results.verdict import Verdict

RECORD_VERSION: Final = 3
"""2 added ``config``, the configuration identity the results history keys its rows on; 3
added ``gpu_telemetry``."""
SPEEDBENCH: Final = "speedbench"
AGENTIC: Final = "agentic"
FIXED_SEQ_LEN: Final = "fixed_seq_len"


class RecordError(ValueError):
    """A result file that is not a record this version can use, with what is wrong."""


class NewerRecordError(RecordError):
    """A record written by a newer pytest-infx: not broken, only unreadable here, so an ingest
    skips it where it refuses a broken one."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


Count = Annotated[int, Field(ge=0)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
"""An AL a reused cell gates on: NaN or infinity there is a broken file (a measured cell whose
counters were not finite has no AL, so it never writes one)."""
Figure = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""A measured figure as a record field: what :func:`pytest_infx.files.numbers.figure` accepts
(finite, not negative), spelled for pydantic, which the number readers leave out so that a warm
collection never imports it."""
Positive = Annotated[int, Field(ge=1)]


class ServerInfo(_Model):
    """The server a result was measured on: its command line, port and log."""

    argv: list[str]
    port: int
    log: str
    base_url: str | None = None
    port_note: str | None = None

    @classmethod
    def of(cls, server: ServerHandle) -> ServerInfo:
        return cls(
            argv=list(server.argv),
            port=server.port,
            log=str(server.log_path),
            base_url=server.base_url,
            port_note=server.port_note,
        )


class EngineInfo(_Model):
    """The engine as the recipe names it: an image on a GPU node, an embedded engine, or a
    command; which of the three is set says how it was launched."""

    name: str
    version: str | None
    image: str | None = None
    embedded: str | None = None
    command: list[str] | None = None


class CellPoint(_Model):
    draft_length: int
    thinking: str
    tp: Positive
    concurrency: Positive


class DatasetInfo(_Model):
    name: str
    path: str
    category: str | None
    sha256: str | None
    n: Count


class ClientInfo(_Model):
    concurrency: Positive
    max_tokens: Positive
    chat_template_kwargs: dict[str, JsonValue]


class CellRequests(_Model):
    total: Count
    completed: Count
    failed: Count
    empty: Count
    completion_tokens: Count
    wall_s: Figure

    @model_validator(mode="after")
    def _finite_rate(self) -> CellRequests:
        """A wall time so small (``1e-320``) that the output rate over it is infinite is a
        broken file: the history would store that rate as the cell's throughput."""
        rate(self.completion_tokens, self.wall_s, "requests.wall_s")
        return self


class CounterValues(_Model):
    """One scrape's speculative-decoding counters; None where the series is absent."""

    drafts: float | None
    draft_tokens: float | None
    accepted: float | None
    accepted_per_pos: list[float]
    generation_tokens: float | None


class CounterChange(_Model):
    drafts: float | None
    accepted: float | None
    draft_tokens: float | None
    decreased: list[str]


class Counters(_Model):
    before: CounterValues
    after: CounterValues
    delta: CounterChange


class GoldenSummary(_Model):
    """A cell's golden comparison; ``recorded`` when the cell was written into the curve
    (``--snapshot-update``, or a curve that had no value for it) rather than checked."""

    curve: str
    ok: bool
    recorded: bool
    checked: Count | None = None
    drifted: Count | None = None
    largest_delta: float | None = None
    tolerance: float | None = None
    lines: list[str] = []


def _known_word(word: str) -> str:
    if vocabulary.read(word) is None:
        raise ValueError(f"{word!r} is not a verdict (pass or fail)")
    return word


Word = Annotated[str, AfterValidator(_known_word)]


class GpuTelemetry(_Model):
    """The point's GPUs while it measured (:mod:`pytest_infx.launch.telemetry`): power summed
    over them, ``file`` the CSV of every sample (relative to the results folder), ``error`` why
    sampling stopped early, if it did."""

    gpus: list[int]
    samples: Count
    seconds: float
    mean_power_w: float | None
    peak_power_w: float | None
    energy_j: float | None
    mean_utilization_pct: float | None
    peak_temperature_c: float | None
    peak_memory_mib: float | None
    output_tokens_per_joule: float | None = None
    file: str | None = None
    error: str | None = None

    @classmethod
    def of(cls, summary: Summary, *, output_tokens_per_s: float | None, file: str) -> GpuTelemetry:
        """The record of a sampler's summary; tokens per joule is the point's output rate over
        its GPUs' mean power."""
        power = summary.mean_power_w
        rate = output_tokens_per_s
        return cls(
            **{**dataclasses.asdict(summary), "gpus": list(summary.gpus)},
            output_tokens_per_joule=rate / power if rate is not None and power else None,
            file=file,
        )


def _whole_rate(figures: dict[str, float], config: ConfigIdentity | None) -> float | None:
    """The output rate of the whole server, from the per-GPU figure InferenceX's processed
    files (and a provided kind's figures) hold."""
    per_gpu = figures.get("output_tput_per_gpu")
    return None if per_gpu is None or config is None else per_gpu * config.gpus


class ResultRecord(_Model):
    """What every kind's record has: its item, recipe, fingerprint, server, verdict and config
    identity, which resume, the history and the report read without asking the kind."""

    version: Positive = 1
    """A file without it is version 1; the builders write ``RECORD_VERSION``."""
    id: Annotated[str, Field(min_length=1)]
    recipe: str
    fingerprint: str
    server: ServerInfo
    verdict: Word | None
    reasons: list[str]
    config: ConfigIdentity | None = None
    """None in a version 1 file."""
    gpu_telemetry: GpuTelemetry | None = None
    """None for a point without GPUs (or whose vendor tool is missing), and before version 3."""

    @property
    def passed(self) -> bool:
        return vocabulary.read(self.verdict) is Verdict.PASS

    def as_json(self) -> dict[str, JsonValue]:
        """The file's content, and what the ``pytest_infx_result`` hooks and the end-of-run
        tables receive (plain JSON values cross xdist's wire)."""
        return self.model_dump(mode="json")


class Repeated(_Model):
    """The passes of a point measured more than once (``repeats``): each pass's figures, under
    the history's names, and their medians, which the history stores and the gates judge. A
    point measured once has neither, and its file is as it always was."""

    passes: list[dict[str, Figure]] | None = None
    median: dict[str, Figure] | None = None

    @model_serializer(mode="wrap")
    def _once(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        for name in ("passes", "median"):
            if data.get(name) is None:
                data.pop(name, None)
        return data


class CellRecord(ResultRecord, Repeated):
    """A SPEED-Bench cell: its point, engine, server, dataset, client settings, requests, every
    AL estimate, the counters, the golden comparison and the verdict."""

    kind: Literal["speedbench"] = SPEEDBENCH
    point: CellPoint
    engine: EngineInfo
    dataset: DatasetInfo
    client: ClientInfo
    requests: CellRequests
    rendered_prompt_tail: str | None
    al: Finite | None
    al_raw: float | None
    al_per_position: list[float]
    acceptance_rate: float | None
    al_request_weighted: float | None
    al_token_weighted: float | None
    al_standard_error: Finite | None
    counters: Counters
    golden: GoldenSummary | None

    @property
    def output_tokens_per_s(self) -> float | None:
        requests = self.requests
        return rate(requests.completion_tokens, requests.wall_s, "requests.wall_s")

    @property
    def passed(self) -> bool:
        """A cell passed only with an AL: a cell whose checks failed has none to reuse."""
        return super().passed and self.al is not None

    @property
    def data_sha256(self) -> str | None:
        """The digest of the prompts the cell was measured on."""
        return self.dataset.sha256


class PointCoordinates(_Model):
    tp: Positive
    concurrency: Positive
    variant: str | None = None


class PointRequests(_Model):
    total: Count
    completed: Count
    failed: Count
    error_ratio: Figure


class AiperfThroughput(_Model):
    """aiperf's own summary figures: the output rate over the benchmark's duration."""

    method: Literal["aiperf"]
    output_tokens_per_s: Figure | None
    output_tokens_per_s_per_gpu: Figure | None
    requests_per_s: Figure | None
    """None where aiperf measured no finite figure: the point failed, with that reason."""
    gpus: Positive


class InferencexThroughput(_Model):
    """Figures computed as InferenceX computes them, over the requests' span."""

    method: Literal["inferencex"]
    total_tokens_per_s: Figure
    output_tokens_per_s: Figure
    input_tokens_per_s: Figure
    total_tokens_per_s_per_gpu: Figure
    output_tokens_per_s_per_gpu: Figure
    input_tokens_per_s_per_gpu: Figure
    output_tokens_per_s_per_user: Figure | None
    duration_s: Figure
    gpus: Positive
    requests_per_s: Figure | None
    """aiperf's request rate; None where it was not a finite figure (the point failed)."""


class Percentiles(_Model):
    p50: Figure
    p90: Figure
    p99: Figure


class Latency(_Model):
    ttft: Percentiles | None
    tpot: Percentiles | None
    e2e: Percentiles | None


class AiperfRun(_Model):
    version: str
    scenario: str | None
    export: str
    duration_s: Figure | None
    was_cancelled: bool
    exit_code: int
    output_tokens: Count
    output_tokens_per_s: Figure | None


class ErrorCount(_Model):
    code: int | None
    type: str
    message: str
    count: Count


class PointRecord(ResultRecord, Repeated):
    """An AgentX point: its identity, requests, throughput, latency, aiperf's run and errors,
    and the verdict of the failed-request gate."""

    kind: Literal["agentic"] = AGENTIC
    model: str
    engine: str
    image: str | None
    tp: Positive
    concurrency: Positive
    gpu: str
    point: PointCoordinates
    requests: PointRequests
    throughput: Annotated[AiperfThroughput | InferencexThroughput, Field(discriminator="method")]
    latency_ms: Latency
    """Every figure of the record is checked when it is read back, as a fixed-seq-len
    record's are: a NaN, infinite or negative one is a broken file, never a passing point that
    resume reuses, the report shows or the history stores."""
    interactivity_tokens_per_s_per_user: Figure | None
    submission_valid: bool | None
    submission_invalid_reasons: list[str]
    aiperf: AiperfRun
    errors: list[ErrorCount]
    failed_request_threshold: float | None
    inferencex_result: str | None
    traces_sha256: str | None

    @property
    def data_sha256(self) -> str | None:
        """The digest of the shipped traces the point replayed; None for a hub corpus."""
        return self.traces_sha256

    @property
    def output_tokens_per_s(self) -> float | None:
        return self.throughput.output_tokens_per_s


class FixedPoint(_Model):
    tp: Positive
    concurrency: Positive
    isl: Positive
    osl: Positive
    variant: str | None = None


class FixedRequests(_Model):
    """The measured requests (warm-ups apart): ``short`` ended before their output length,
    which ``ignore_eos`` should never allow, and ``empty`` counted no output token."""

    sent: Count
    completed: Count
    failed: Count
    empty: Count
    short: Count
    warmups: Count


class FixedPrompts(_Model):
    dataset: Literal["random"] = "random"
    sha256: str
    seed: int
    random_range_ratio: float
    mean_input_len: float
    mean_output_len: float


class FixedRecord(ResultRecord):
    """A fixed-seq-len point: its identity, prompts, requests, and the figures of InferenceX's
    processed file (its names and units: tokens/s per GPU, seconds), beside the paths of the
    raw and processed files in InferenceX's shapes."""

    kind: Literal["fixed_seq_len"] = FIXED_SEQ_LEN
    model: str
    engine: EngineInfo
    gpu: str
    point: FixedPoint
    prompts: FixedPrompts
    requests: FixedRequests
    duration_s: Figure
    figures: dict[str, Figure]
    """The median over ``passes`` where the point was measured more than once. Checked when read
    back: a NaN, infinite or negative figure is a broken file, never a passing point that resume
    reuses or the history stores."""
    errors: list[str]
    raw_result: str
    inferencex_result: str
    passes: list[dict[str, float]] = Field(default_factory=list)
    """Each pass's figures when the point was measured more than once (``repeats``): the
    spread its median was taken from; the raw and processed files are the median pass's."""

    @property
    def data_sha256(self) -> str | None:
        """None: the prompts follow from the lengths and the seed, which the fingerprint covers,
        and from the tokenizer, which resume does not load; ``prompts.sha256`` is for the
        reader comparing two clients."""
        return None

    @property
    def output_tokens_per_s(self) -> float | None:
        return _whole_rate(self.figures, self.config)


BUILT_IN: Final = frozenset({SPEEDBENCH, AGENTIC, FIXED_SEQ_LEN})
"""The kinds whose records are typed here; every other kind writes a :class:`KindRecord`."""


def _not_built_in(kind: str) -> str:
    if kind in BUILT_IN:
        raise ValueError(f"{kind!r} is a built-in kind, whose record has its own fields")
    return kind


class KindRecord(ResultRecord, Repeated):
    """A point of a kind that another package provides (an evaluation, a test's kind): the
    fields every record has, its coordinates, the figures the history keeps and the gate
    judges (under :mod:`pytest_infx.baseline_tolerance`'s names), and what else the kind
    keeps of it in ``details``. One shape for every such kind, so resume, the history and the
    end-of-run table read its records as they read the built-in ones."""

    kind: Annotated[str, Field(min_length=1), AfterValidator(_not_built_in)]
    model: str
    gpu: str
    point: PointCoordinates
    figures: dict[str, Figure]
    details: dict[str, JsonValue] = Field(default_factory=dict)
    data_sha256: str | None = None
    """The digest of the data the point was measured on, which resume compares; None when
    the fingerprint covers it."""

    @property
    def output_tokens_per_s(self) -> float | None:
        return _whole_rate(self.figures, self.config)


def _record_tag(data: object) -> str:
    kind = data.get("kind") if isinstance(data, dict) else getattr(data, "kind", None)
    return kind if kind in BUILT_IN else "other"


Record = CellRecord | PointRecord | FixedRecord | KindRecord
_RECORD: TypeAdapter[Record] = TypeAdapter(
    Annotated[
        Annotated[CellRecord, Tag(SPEEDBENCH)]
        | Annotated[PointRecord, Tag(AGENTIC)]
        | Annotated[FixedRecord, Tag(FIXED_SEQ_LEN)]
        | Annotated[KindRecord, Tag("other")],
        Discriminator(_record_tag),
    ]
)


def parse_record(data: object) -> Record:
    """The record a result file's JSON value holds; RecordError says what is wrong with it."""
    if not isinstance(data, dict):
        raise RecordError(f"holds a JSON {type(data).__name__}, not a result record")
    version = data.get("version", RECORD_VERSION)
    if isinstance(version, int) and not isinstance(version, bool) and version > RECORD_VERSION:
        raise NewerRecordError(
            f"is a version {version} record, written by a newer pytest-infx (this one reads "
            f"version {RECORD_VERSION}); upgrade pytest-infx or use another --infx-results folder"
        )
    data = data if "kind" in data else {**data, "kind": SPEEDBENCH}
    try:
        return _RECORD.validate_python(data)
    except ValidationError as exc:
        raise RecordError(_first_problem(exc)) from None


def _first_problem(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"][1:]) or "the record"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"'{where}': {first['msg']}{more}"


def read_record(path: Path) -> Record:
    """The record in a result file; ``FileNotFoundError`` when there is none,
    ``InputFileError`` when it is not a regular file or too large, RecordError (naming the file)
    when it is not JSON, nested past what the parser can follow, or not a record of this
    version."""
    try:
        data = strictjson.loads(read_input(path))
    except (FileNotFoundError, InputFileError):
        raise
    except RecursionError:
        raise RecordError(f"{path}: nested too deeply to be a result record") from None
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path}: does not parse ({exc})") from None
    try:
        return parse_record(data)
    except RecordError as exc:
        raise type(exc)(f"{path}: {exc}") from None
