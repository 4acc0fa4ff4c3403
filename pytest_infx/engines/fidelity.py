"""What a point plans against what InferenceX ran for it: server flags, environment, files and
client settings, one :class:`Difference` per setting the two sides do not share.

InferenceX's record (its ``commands.jsonl``) and the plan spell one setting in several ways:
``--tp 8`` and ``--tensor-parallel-size=8``, ``0.80`` and ``0.8``, ``--trust_remote_code`` and
``--trust-remote-code``. Compared as plain strings, those are differences nobody needs to read;
so flags are read into (name, value) pairs the way the engines' parsers read them: ``=`` split,
``_`` as ``-``, each engine's aliases under one name, numbers and booleans in one spelling; a
file the record names by a flag or variable is that setting's value, and an options file or a
JSON ``--compilation-config`` is compared setting by setting. What
the plugin sets itself (model path, served name, host, port, result files) is expected to
differ and is stated here once, as owned by the plugin; every other difference must be stated
by its recipe (``differences:``) with InferenceX's value, ours and why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import yaml

from pytest_infx.recipes.schema import DEEPSEEK_V4, Recipe

if TYPE_CHECKING:
    from pytest_infx.engines.registry import EngineRegistry

Where = Literal["server-flag", "server-env", "server-file", "client"]
Reason = Literal["owned", "better-default", "tool-limit"]
REASONS: tuple[Reason, ...] = ("owned", "better-default", "tool-limit")

ALIASES: Mapping[str, Mapping[str, str]] = {
    "sglang": {
        "--tp": "--tp-size",
        "--tensor-parallel-size": "--tp-size",
        "--ep": "--expert-parallel-size",
        "--ep-size": "--expert-parallel-size",
        "--dp": "--data-parallel-size",
        "--dp-size": "--data-parallel-size",
        "--model": "--model-path",
    },
    "vllm": {
        "-tp": "--tensor-parallel-size",
        "--tp": "--tensor-parallel-size",
        "-dp": "--data-parallel-size",
        "-pp": "--pipeline-parallel-size",
    },
    "trtllm": {
        "--tp": "--tp-size",
        "--ep": "--ep-size",
        "--pp": "--pp-size",
        "--config": "--extra-llm-api-options",
    },
    "atom": {"-tp": "--tensor-parallel-size", "--tp": "--tensor-parallel-size"},
}
"""Each engine's spellings of one flag, under the name its parser stores it by."""

OWNED_SERVER = frozenset(
    {
        "--model",
        "--model-path",
        "--served-model-name",
        "--tokenizer",
        "--tokenizer-path",
        "--host",
        "--port",
        "--server-port",
        "--enable-metrics",
        "--per-request-spec-decode-metrics",
        "--allow-run-as-root",
        "--oversubscribe",
    }
)
"""Server flags the plugin sets for every point: where the weights and their tokenizer are (a
tokenizer flag names the model's own folder on InferenceX's runners), the name it serves them
under, the address it listens on, the metrics it reads its measurements from and how its
container runs TensorRT-LLM's MPI launcher."""
OWNED_ENV = frozenset(
    {
        "GPU_COUNT",
        "GPU_METRICS_CSV",
        "HF_HUB_CACHE_MOUNT",
        "OLDPWD",
        "PORT",
        "PWD",
        "RESULT_FILENAME",
        "SHLVL",
        "SLURMD_NODENAME",
        "SLURM_JOBID",
        "SLURM_JOB_ID",
        "SLURM_PROCID",
        "HOME",
        "MODEL",
        "MODEL_PATH",
        "SRT_SLURM_MODEL_PREFIX",
        "WEKA_LOADER_OVERRIDE",
        "EVAL_FRAMEWORK",
        "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION",
    }
)
"""Variables of InferenceX's runner and workflow step (its Slurm job, working folders, result
file names, where and how its storage serves the weights, its eval switch), and the health
check the plugin polls (SGLang's health endpoint without a generation, as the plugin asks),
not settings of the server. So is every ``AIPERF_*`` variable (the workflow exports the aiperf
client's settings to every process; the plugin runs its own client) and every variable whose
value is a path of the runner (caches, tool paths): the plugin keeps its own."""
OWNED_ENV_PREFIXES = ("AIPERF_",)
SYNTHETIC_ENV = frozenset(
    {
        "SGLANG_SIMULATE_ACC_LEN",
        "SGLANG_SIMULATE_ACC_METHOD",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE",
        "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    }
)
"""SGLang's and TensorRT-LLM's variables through which the plugin makes a speculative point
accept drafts as its golden curve says (a recipe's speculative block needs a curve).
InferenceX's fixed-seq-len scripts leave them unset and measure whatever the random prompts
accept, which says little about the draft; where ours sets one, the difference is the plugin's."""
OWNED_CLIENT = frozenset(
    {
        "--model",
        "--tokenizer",
        "--url",
        "--base-url",
        "--backend",
        "--save-result",
        "--result-dir",
        "--result-filename",
        "--percentile-metrics",
        "--trust-remote-code",
        "--tokenizer-trust-remote-code",
        "--output-artifact-dir",
        "--no-gpu-telemetry",
        "--stats-interval",
        "--slice-duration",
        "--server-metrics",
    }
)
"""Client flags the plugin owns: the server's address and model, and where and how results
are written, sampled and summarised (aiperf's artifacts, its GPU telemetry, stats intervals
and time slices, the server metrics it scrapes: the plugin reads its own)."""

CLIENT_SETTINGS: Mapping[str, str] = {
    "--dataset-name": "dataset",
    "--random-input-len": "input_len",
    "--random-output-len": "output_len",
    "--random-range-ratio": "random_range_ratio",
    "--num-prompts": "num_prompts",
    "--max-concurrency": "max_concurrency",
    "--request-rate": "request_rate",
    "--ignore-eos": "ignore_eos",
    "--num-warmups": "num_warmups",
    "--seed": "seed",
    "--endpoint": "endpoint",
    "--concurrency": "concurrency",
    "--benchmark-duration": "duration_s",
    "--random-seed": "seed",
    "--failed-request-threshold": "failed_request_threshold",
    "--trace-idle-gap-cap-seconds": "trace_idle_gap_cap_s",
    "--warmup-grace-period": "warmup_grace_period_s",
    "--trajectory-start-min-ratio": "trajectory_start_ratio.0",
    "--trajectory-start-max-ratio": "trajectory_start_ratio.1",
    "--endpoint-type": "endpoint_type",
    "--streaming": "stream",
    "--use-server-token-count": "use_server_token_count",
    "--num-dataset-entries": "num_dataset_entries",
    "--public-dataset": "traces",
    "--scenario": "scenario",
    "--use-chat-template": "chat_template",
    "--apply-chat-template": "chat_template",
}
"""InferenceX's client flags (``benchmark_serving.py``'s and aiperf's) and the name of the plan's
client setting that holds the same value."""
CLIENT_DEFAULTS: Mapping[str, str] = {
    "seed": "0",
    "endpoint": "/v1/completions",
    "stream": "true",
    "chat_template": "false",
}
"""``benchmark_serving.py``'s values for the settings InferenceX's command line leaves out
(the chat template is off in aiperf too without its flag)."""


@dataclass(frozen=True, order=True)
class Difference:
    """One setting the two sides do not share; ``None`` where a side does not set it."""

    where: Where
    name: str
    inferencex: str | None
    ours: str | None

    def render(self) -> str:
        theirs = "unset" if self.inferencex is None else repr(self.inferencex)
        mine = "unset" if self.ours is None else repr(self.ours)
        return f"{self.where} {self.name}: InferenceX {theirs}, ours {mine}"


@dataclass(frozen=True)
class Stated:
    """A difference its recipe (or the plugin, for what it owns) states, with the reason."""

    name: str
    inferencex: str | None
    ours: str | None
    reason: Reason
    evidence: str | None = None

    def covers(self, difference: Difference) -> bool:
        return (
            self.name == difference.name
            and _same(self.inferencex, difference.inferencex)
            and _same(self.ours, difference.ours)
        )


def _same(stated: str | None, found: str | None) -> bool:
    """``*`` stands for any value, so a per-point value (a concurrency) is stated once."""
    return stated == "*" or value(stated) == value(found)


def value(raw: object) -> str | None:
    """One spelling of a value: numbers as Python writes them (``0.80`` is ``0.8``, ``8.0`` is
    ``8``), booleans lower-case, JSON with sorted keys and no spaces, other text as it is."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        return "true" if raw else "false"
    text = str(raw)
    if text.lower() in ("true", "false"):
        return text.lower()
    if text.startswith(("{", "[")):
        try:
            return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
        except ValueError:
            return text
    try:
        number = float(text)
    except ValueError:
        return text
    if number != number or number in (float("inf"), float("-inf")):
        return text.lower()
    return str(int(number)) if number.is_integer() and "e" not in text.lower() else repr(number)


def flags(argv: Sequence[str], engine: str, *, spelled: bool = True) -> dict[str, str | None]:
    """A command line's flags by the name the engine's parser stores them under: ``--a=b`` and
    ``--a b`` are one, a bare flag has ``None``, what comes before the first ``--`` flag (the
    command, ``python3 -m module``, vLLM's model) is left out and a positional after a flag is
    its value. With ``spelled``, values in one spelling (:func:`value`) and an options file's
    path as :data:`OPTIONS_FILE`; without, as written."""
    aliases = ALIASES.get(engine, {})
    found: dict[str, str | None] = {}
    name: str | None = None
    start = next((i for i, token in enumerate(argv) if token.startswith("--")), len(argv))
    for token in argv[start:]:
        if token.startswith("-") and not _negative_number(token):
            flag, has_value, given = token.partition("=")
            flag = _canonical(flag, aliases)
            found[flag] = given if has_value else None
            name = None if has_value else flag
        elif name is not None:
            found[name] = token if found[name] is None else f"{found[name]} {token}"
    if not spelled:
        return found
    return {k: OPTIONS_FILE if k in OPTIONS_FLAGS else value(v) for k, v in found.items()}


def _negative_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def setting_name(flag: str, engine: str) -> str:
    """The name :func:`flags` reads ``flag`` under for ``engine`` (``--tp`` is SGLang's
    ``--tp-size``), so a check of this reading against the engine's parser names it as it does."""
    return _canonical(flag, ALIASES.get(engine, {}))


def _canonical(flag: str, aliases: Mapping[str, str]) -> str:
    if flag in aliases:
        return aliases[flag]
    dashed = flag[:2] + flag[2:].replace("_", "-") if flag.startswith("--") else flag
    return aliases.get(dashed, dashed)


def _compare(
    where: Where, theirs: Mapping[str, str | None], ours: Mapping[str, str | None]
) -> Iterator[Difference]:
    missing = object()
    for name in sorted(theirs.keys() | ours.keys()):
        a = theirs.get(name, missing)
        b = ours.get(name, missing)
        if a is missing or b is missing or a != b:
            yield Difference(
                where,
                name,
                None if a is missing else _flag_value(a),
                None if b is missing else _flag_value(b),
            )


def _flag_value(raw: object) -> str:
    """A bare flag is there with no value; it reads as ``true``, as a store-true flag does."""
    return "true" if raw is None else str(raw)


def server_differences(
    engine: str,
    planned_argv: Sequence[str],
    planned_env: Mapping[str, str],
    planned_files: Mapping[str, str],
    record: Mapping[str, Any],
) -> list[Difference]:
    """The server's flags, environment and files, InferenceX's record against the plan. A
    recorded file that a flag or variable names is compared as that setting's value (its name
    and digest), one difference rather than two; one options file a side is compared setting
    by setting, as is a JSON ``--compilation-config``."""
    recorded = {
        path: entry
        for path, entry in (record.get("files") or {}).items()
        if isinstance(entry, Mapping)
    }
    named: set[str] = set()

    def by_file(given: str | None) -> str | None:
        if given is None or given not in recorded:
            return given
        named.add(given)
        return _file_value(given, recorded[given])

    theirs_flags = {
        k: OPTIONS_FILE if k in OPTIONS_FLAGS else value(by_file(v))
        for k, v in flags(record.get("argv") or (), engine, spelled=False).items()
    }
    theirs = _json_apart(synthetic_apart(theirs_flags))
    ours = _json_apart(synthetic_apart(flags(planned_argv, engine)))
    found = list(_compare("server-flag", theirs, ours))
    env = {
        k: value(by_file(str(v)))
        for k, v in (record.get("env") or {}).items()
        if k not in OWNED_ENV
    }
    found += _compare("server-env", env, {k: value(v) for k, v in planned_env.items()})
    files = {
        name.rsplit("/", 1)[-1]: entry.get("text")
        for name, entry in recorded.items()
        if name not in named
    }
    ours_files: dict[str, str | None] = {
        name.rsplit("/", 1)[-1]: text for name, text in planned_files.items()
    }
    if len(files) == 1 and len(ours_files) == 1:
        found += _compare(
            "server-file",
            _options_settings(next(iter(files.values()))),
            _options_settings(next(iter(ours_files.values()))),
        )
    else:
        found += _compare("server-file", files, ours_files)
    return found


def _file_value(path: str, entry: Mapping[str, Any]) -> str:
    """A recorded file as a setting's value: its name and digest (the path is the runner's)."""
    digest = str(entry.get("sha256") or "")[:12]
    name = path.rsplit("/", 1)[-1]
    return f"{name} sha256:{digest}" if digest else name


JSON_FLAGS = frozenset({"--compilation-config"})
"""Flags whose JSON object holds independent settings, compared key by key
(``--compilation-config.cudagraph_mode``), so that one setting's difference is stated alone."""


def _json_apart(found: dict[str, str | None]) -> dict[str, str | None]:
    for name in JSON_FLAGS & found.keys():
        try:
            parsed = json.loads(found[name] or "")
        except ValueError:
            continue
        if isinstance(parsed, dict):
            del found[name]
            for key, given in parsed.items():
                found[f"{name}.{key}"] = value(json.dumps(given))
    return found


ACCEPTANCE_FLAGS = ("--spec-decode-acceptance-length", "--spec-decode-acceptance-rate")
SYNTHETIC_ACCEPTANCE = "--spec-decode-acceptance-length|-rate"
"""ATOM forces acceptance by a length or a rate; the plugin writes the length its curve gives
where InferenceX's script may write the rate, one setting in two spellings."""
SPEC_CONFIG = "--speculative-config"
SYNTHETIC_SPEC = SPEC_CONFIG + " synthetic acceptance"
"""The synthetic-acceptance keys of vLLM's speculative config, compared apart from the rest of
it: the plugin sets them from the golden curve wherever a point speculates."""


def synthetic_apart(found: dict[str, str | None]) -> dict[str, str | None]:
    """ATOM's acceptance flags, either spelling (length or rate), as one setting under
    :data:`SYNTHETIC_ACCEPTANCE`; a speculative config with its synthetic-acceptance keys under
    :data:`SYNTHETIC_SPEC`, and
    its draft ``model`` by folder name: where the draft's weights are (a runner path, a hub id,
    the plugin's model folder) is the plugin's, which draft it is is compared."""
    forced = sorted(name for name in ACCEPTANCE_FLAGS if name in found)
    if forced:
        given = ", ".join(f"{name}={found[name]}" for name in forced)
        found = {k: v for k, v in found.items() if k not in ACCEPTANCE_FLAGS}
        found[SYNTHETIC_ACCEPTANCE] = given
    try:
        parsed = json.loads(found.get(SPEC_CONFIG) or "")
    except ValueError:
        return found
    if not isinstance(parsed, dict):
        return found
    if isinstance(parsed.get("model"), str):
        parsed["model"] = parsed["model"].rstrip("/").rsplit("/", 1)[-1]
    synthetic = {k: parsed.pop(k) for k in ("synthetic_acceptance_length",) if k in parsed}
    if parsed.get("rejection_sample_method") == "synthetic":
        synthetic["rejection_sample_method"] = parsed.pop("rejection_sample_method")
    if not synthetic:
        return {**found, SPEC_CONFIG: value(json.dumps(parsed))}
    return {
        **found,
        SPEC_CONFIG: value(json.dumps(parsed)),
        SYNTHETIC_SPEC: value(json.dumps(synthetic)),
    }


SYNTHETIC_FLAGS = frozenset({SYNTHETIC_SPEC, SYNTHETIC_ACCEPTANCE, *ACCEPTANCE_FLAGS})
"""The flags that carry the synthetic acceptance the plugin sets (ATOM's are flags)."""

OPTIONS_FILE = "options file"
"""The name under which one options file on each side is compared, whatever each names it."""
OPTIONS_SETTING = "--extra-llm-api-options"
OPTIONS_FLAGS = frozenset({OPTIONS_SETTING})
"""Flags that name an options file: its path is where each side wrote it, its settings are
compared as the file."""


def _options_settings(text: str | None) -> dict[str, str | None]:
    """An options file's settings by top-level key, each in one spelling (:func:`value`), named
    as the flag that names the file with the key (``--extra-llm-api-options.speculative_config``):
    key order and quoting are no difference, and one setting's difference is stated alone. A
    file that is no mapping is one setting, :data:`OPTIONS_FILE`."""
    if text is None:
        return {}
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError:
        return {OPTIONS_FILE: text}
    if not isinstance(parsed, dict):
        return {OPTIONS_FILE: json.dumps(parsed, sort_keys=True)}
    return {
        f"{OPTIONS_SETTING}.{key}": value(json.dumps(given, sort_keys=True))
        for key, given in parsed.items()
    }


def client_differences(settings: Mapping[str, Any], record: Mapping[str, Any]) -> list[Difference]:
    """The client's settings: each InferenceX flag read as the plan's setting that holds it;
    a flag with no such setting is a difference with no value on our side. The request's
    ``--model`` is compared where the plan names the model it sends (a fixed-seq-len point);
    elsewhere it is the plugin's."""
    argv = list(record.get("argv") or ())
    theirs: dict[str, str | None] = {"client": "aiperf"} if argv[:1] == ["aiperf"] else {}
    for flag, given in flags(argv, "client").items():
        name = (
            "model"
            if flag == "--model" and "model" in settings
            else CLIENT_SETTINGS.get(flag, flag)
        )
        theirs[name] = "true" if given is None else given
    ours = {name: value(v) for name, v in _flatten(settings)}
    if theirs.get("--dsv4") == "true" and theirs.get("chat_template") == "true":
        # --dsv4 picks DeepSeek-V4's own encoding for the template --use-chat-template applies.
        del theirs["--dsv4"]
        theirs["chat_template"] = DEEPSEEK_V4
    for name, default in CLIENT_DEFAULTS.items():
        theirs.setdefault(name, default)
    return list(_compare("client", theirs, ours))


def _flatten(settings: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, object]]:
    for name, given in settings.items():
        if isinstance(given, list):
            for index, item in enumerate(given):
                yield f"{prefix}{name}.{index}", item
        elif isinstance(given, Mapping):
            yield from _flatten(given, f"{prefix}{name}.")
        elif given is not None:
            yield f"{prefix}{name}", given


def owned(difference: Difference, admission: Iterable[str] = ()) -> bool:
    """Whether the plugin states this difference itself: a flag or variable it owns (the
    synthetic acceptance it sets, :data:`SYNTHETIC_ENV` and :data:`SYNTHETIC_FLAGS`), a request
    model InferenceX names by a path of its runner (its server serves the folder it loads
    under that path; the plugin serves the hub id); for an
    AgentX point, also the ``admission`` flags (its engine's spellings, without dashes), which
    the plugin sets per point from the concurrency."""
    if difference.where == "server-flag":
        return (
            difference.name in OWNED_SERVER
            or _own_template(difference)
            or difference.name.lstrip("-") in set(admission)
            or (difference.name in SYNTHETIC_FLAGS and difference.ours is not None)
        )
    if difference.where == "server-env":
        return (
            difference.name in OWNED_ENV
            or (difference.name in SYNTHETIC_ENV and difference.ours is not None)
            or difference.name.startswith(OWNED_ENV_PREFIXES)
            or (difference.inferencex or "").startswith("/")
        )
    if difference.where == "client":
        return difference.name in OWNED_CLIENT or (
            difference.name == "model" and (difference.inferencex or "").startswith("/")
        )
    return False


MODEL_TEMPLATE = "/chat_template.jinja"


def _own_template(difference: Difference) -> bool:
    """A ``--chat-template`` that names the model folder's own template on InferenceX's runner,
    the template the server reads from the model's folder without the flag."""
    return (
        difference.name == "--chat-template"
        and difference.ours is None
        and (difference.inferencex or "").startswith("/")
        and (difference.inferencex or "").endswith(MODEL_TEMPLATE)
    )


TOOL_LIMITS: tuple[Stated, ...] = (Stated("--warmup-requests-per-lane", "*", None, "tool-limit"),)
"""Differences every point has because a tool the plugin pins cannot do what InferenceX's
does: aiperf 0.13.0 has no ``--warmup-requests-per-lane`` (its agentic replay warms each lane
by replaying the trajectory up to a random start turn, which the plan passes as
``trajectory_start_ratio``)."""


def unstated(
    differences: Iterable[Difference], stated: Iterable[Stated], admission: Iterable[str] = ()
) -> tuple[list[Difference], dict[Reason, int]]:
    """The differences neither the plugin nor the recipe states, and the count of the stated
    ones per reason (``admission``: see :func:`owned`; the plugin's :data:`TOOL_LIMITS` are
    stated for every recipe)."""
    admission = tuple(admission)
    statements = [*stated, *TOOL_LIMITS]
    left: list[Difference] = []
    counts: dict[Reason, int] = dict.fromkeys(REASONS, 0)
    for difference in differences:
        if owned(difference, admission):
            counts["owned"] += 1
            continue
        match = next((s for s in statements if s.covers(difference)), None)
        if match is None:
            left.append(difference)
        else:
            counts[match.reason] += 1
    return left, counts


def stated_in(recipe: Recipe) -> list[Stated]:
    """The differences a recipe states, in the terms the comparison finds them."""
    return [
        Stated(d.name, value(d.inferencex), value(d.ours), d.reason, d.evidence)
        for d in recipe.differences
    ]


def speculative_of(
    engine: str,
    prefix: str,
    argv: Sequence[str],
    curves: Mapping[str, str],
    engines: EngineRegistry | None = None,
    files: Mapping[str, Any] | None = None,
) -> str | None:
    """The speculative block that plans a recorded command line's speculative flags (and an
    options file's, ``files`` as the record holds them), as the engine's adapter reads them
    (``speculative_block``); ``curves``: the golden curve by model prefix (the model's own MTP
    head) or by draft hub id. ``None`` where no block plans them (no adapter, no curve, a shape
    its plan does not write back): they keep their difference."""
    from pytest_infx.engines.registry import installed

    adapter = (engines or installed()).adapters.get(engine)
    if adapter is None:
        return None
    found = flags(argv, engine)
    options = [
        entry.get("text")
        for name, entry in (files or {}).items()
        if isinstance(entry, Mapping)
        and found.get(OPTIONS_SETTING) is not None
        and any(given == name for given in flags(argv, engine, spelled=False).values())
    ]
    if len(options) == 1:
        found = {**found, **_options_settings(options[0])}
    return adapter.speculative_block(prefix, found, curves)
