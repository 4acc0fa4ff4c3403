"""``infx import-inferencex``: one recipe per single-node key of InferenceX's master configs.

InferenceX's matrix has about 120 single-node keys and over a thousand points; ported by hand,
a concurrency is missed or a variant misnamed, and nothing says so until a number is missing.
The generated recipes hold exactly the points its ``generate_sweep_configs.py`` expands (the
variants named as ``infx compare-configs`` names them), its image, model and runner type, and
are written in a stable order so that the committed tree can be re-generated and compared byte
for byte. A key that a hand-written recipe already holds is left to that recipe.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_infx.cli.compare import (
    DEFAULT_MASTERS,
    SCENARIOS,
    ConfigPoint,
    _concurrencies,
    _configs,
    _field,
    _items,
    variant_of,
)
from pytest_infx.engines.base import SPECULATIVE
from pytest_infx.engines.fidelity import (
    ACCEPTANCE_FLAGS,
    OPTIONS_FLAGS,
    OPTIONS_SETTING,
    OWNED_SERVER,
    SPEC_CONFIG,
    SYNTHETIC_ACCEPTANCE,
    SYNTHETIC_ENV,
    SYNTHETIC_SPEC,
    Difference,
    flags,
    owned,
    speculative_of,
    synthetic_apart,
)
from pytest_infx.engines.registry import installed
from pytest_infx.hardware import gpu_type
from pytest_infx.lint.masters import master_files
from pytest_infx.recipes.errors import RecipeError
from pytest_infx.recipes.loader import recipe_files
from pytest_infx.recipes.owned import OwnedFlags, owner
from pytest_infx.recipes.rules import al_literal_pattern
from pytest_infx.recipes.schema import DEEPSEEK_V4
from pytest_infx.recipes.source import LinedDict, LinedList
from pytest_infx.settings import DEFAULT_RECIPES_DIR

GENERATED_FOLDER = "inferencex"
"""Where the generated recipes go under the recipe folder: apart from the hand-written ones, so
that re-generating replaces exactly its own files."""
AGENTIC_DURATION = 3600
"""The seconds of an AgentX point when its master config names none:
``generate_sweep_configs.py``'s default."""
KV_HEADS = {"dsr1": 128, "dsv4": 1, "glm5.2": 64, "qwen3.5": 2}
"""``num_key_value_heads`` of each model family's ``config.json``, by InferenceX's model prefix,
as the hand-written recipes record them: the master configs do not say, and an engine that
shards attention over TP needs it to check the TP."""
MODEL_LEN_MARGIN = 256
"""A fixed-seq-len key's context beyond its input and output lengths, as the sweep's
``max-model-len`` gives it."""
UNPINNED = (
    "InferenceX's master config names this image by tag only and records no digest; the tag"
    " is what its runners pull"
)


@dataclass(frozen=True)
class Arm:
    """One search-space entry as a recipe writes it: TP, variant, lengths and concurrencies."""

    tp: int
    variant: str
    concurrency: tuple[int, ...]
    isl: int = 0
    osl: int = 0


@dataclass(frozen=True)
class Statement:
    """A difference the generated recipe states: the flag, variable or client setting (as the
    comparison names it), InferenceX's value (``*`` where its points differ), ours, the
    reason and why."""

    field: str
    name: str
    inferencex: str | None
    ours: str | None
    reason: str
    evidence: str


Settings = tuple[tuple[str, str], ...]
"""Names and rendered values: engine args, variables or agentic block settings."""


@dataclass(frozen=True)
class Ported:
    """The server flags and environment that InferenceX's script gave a key's points, read from
    a recording of it: those all points share, and per point (by point name) the rest (args,
    variables and agentic block settings); and the
    speculative decoding all its points run, as a recipe's speculative block writes it."""

    args: tuple[tuple[str, str], ...]
    env: tuple[tuple[str, str], ...]
    per_point: tuple[tuple[str, Settings, Settings, Settings], ...]
    points: int
    speculative: str | None = None
    client: tuple[tuple[str, str], ...] = ()
    stated: tuple[Statement, ...] = ()


AGENTIC_CLIENT: Mapping[str, tuple[str, str]] = {
    "--public-dataset": ("traces", "semianalysis_cc_traces_weka_062126"),
    "--num-dataset-entries": ("num-dataset-entries", "393"),
    "--warmup-grace-period": ("warmup-grace-period", "1800"),
    "--failed-request-threshold": ("failed-request-threshold", "0.1"),
    "--random-seed": ("seed", "42"),
}
"""aiperf flags of InferenceX's AgentX client that an agentic block sets: the recipe setting
and its default. A key whose every point passes another value gets it in its block."""
CHAT_TEMPLATE_FLAGS: Mapping[str, str] = {
    "--use-chat-template": "fixed-seq-len",
    "--apply-chat-template": "agentic",
}
"""The client flag, per block, with which InferenceX's client sends prompts in the model's chat
template (``benchmark_serving.py``'s and aiperf's): a block whose points pass it sets
``chat-template: true``."""


GOLDEN = {
    "dsv4": "dsv4_mtp",
    "glm5.2": "glm5.2_mtp",
    "qwen3.5": "qwen3.5_mtp",
    "Inferact/MiniMax-M3-EAGLE3-GQA": "minimaxm3_eagle3_gqa",
}
"""The golden acceptance curve of each model family's MTP head, by InferenceX's model prefix,
and of each separate draft, by hub id: its synthetic acceptance comes from there, as
InferenceX's scripts take it (MiniMax-M3's GQA draft: 2.78 at 3 tokens, thinking on, the
acceptance its AMD vLLM scripts force)."""

CHAT_TEMPLATE_CLIENT: Mapping[str, str] = {
    "--benchmark-grace-period": "aiperf waits this long for the last requests after the"
    " duration; the plugin's agentic block has no such setting",
}
"""Client flags of InferenceX's that the plugin's clients do not offer, and why."""
CLIENT_ENDPOINT = (
    "the plugin's fixed-seq-len client sends the random prompts to the completions endpoint only"
)
SERVER_FILE = (
    "the script gives the server a file of InferenceX's repository (a chat template); a recipe"
    " gives the server no file but an options file, so the server uses the model's own"
)
NO_CURVE = (
    "the plugin speculates only from a speculative block, at a committed golden curve's"
    " acceptance; no committed curve gives this speculation's (none for this model's MTP head,"
    " or the script forces acceptance lengths the curve does not hold)"
)
OTHER_SPELLING = (
    "the engine's adapter writes its options file's speculative_config in another spelling (the"
    " draft length and the draft under other keys), so no speculative block plans this one"
)


@dataclass(frozen=True)
class MasterKey:
    """One single-node key of a master config, with what its recipe needs."""

    key: str
    source: str
    image: str
    model: str
    prefix: str
    precision: str
    runner_label: str
    framework: str
    engine: str
    spec_decoding: tuple[str, ...]
    max_model_len: int | None
    duration: int | None
    agentic: tuple[Arm, ...]
    fixed: tuple[Arm, ...]
    ported: Ported | None = None


def master_keys(path: Path, masters: str = DEFAULT_MASTERS) -> list[MasterKey]:
    """The single-node keys of the master configs named ``masters`` under ``path`` (a checkout
    root or its configs folder) whose framework an installed engine serves, in file order."""
    engines = {fw: name for name, fw in installed().inferencex_frameworks().items()}
    pattern = f"configs/{masters}" if (path / "configs").is_dir() else masters
    files = master_files(path, pattern)
    if not files:
        raise FileNotFoundError(f"{path}: no {pattern} here; give the checkout root")
    found: list[MasterKey] = []
    for key, parsed in _configs(files):
        config = _field(parsed, key, LinedDict, f"config key {key!r}", "a mapping")
        framework = config.get("framework")
        scenarios = config.get("scenarios")
        if framework not in engines or config.get("multinode") or not scenarios:
            continue
        source = parsed.where(key).path.name
        found.append(_master_key(key, source, config, engines[str(framework)]))
    return found


def _master_key(key: str, source: str, config: LinedDict, engine: str) -> MasterKey:
    scenarios = _field(config, "scenarios", LinedDict, f"{key}.scenarios", "a mapping")
    arms: dict[str, list[Arm]] = {name: [] for name in SCENARIOS}
    specs: set[str] = set()
    lengths: set[tuple[int, int]] = set()
    durations: set[int] = set()
    for scenario in SCENARIOS:
        if not scenarios.get(scenario):
            continue
        where = f"{key}.scenarios.{scenario}"
        groups = _field(scenarios, scenario, LinedList, where, "a list")
        for group in _items(groups, LinedDict, where, "a mapping"):
            isl = osl = 0
            if scenario == "fixed-seq-len":
                isl = _field(group, "isl", int, f"{key} isl", "a whole number")
                osl = _field(group, "osl", int, f"{key} osl", "a whole number")
            space: list[Any] = _field(
                group, "search-space", list, f"{key} search-space", "a list", []
            )
            for entry in _items(space, LinedDict, f"{key} search-space", "a mapping"):
                specs.add(str(entry.get("spec-decoding", "none")))
                tp = _field(entry, "tp", int, f"{key} tp", "a whole number")
                concs = tuple(_concurrencies(key, entry))
                arms[scenario].append(Arm(tp, variant_of(entry), concs, isl, osl))
            if isl:
                lengths.add((isl, osl))
            if isinstance(group.get("duration"), int):
                durations.add(group["duration"])
    max_model_len = None
    if len(lengths) == 1:
        isl, osl = next(iter(lengths))
        max_model_len = isl + osl + MODEL_LEN_MARGIN
    return MasterKey(
        key=key,
        source=source,
        image=str(config.get("image", "")),
        model=str(config.get("model", "")),
        prefix=str(config.get("model-prefix", "")),
        precision=str(config.get("precision", "")),
        runner_label=str(config.get("runner", "")),
        framework=str(config.get("framework", "")),
        engine=engine,
        spec_decoding=tuple(sorted(specs)),
        max_model_len=max_model_len,
        duration=next(iter(durations)) if len(durations) == 1 else AGENTIC_DURATION,
        agentic=tuple(arms["agentic-coding"]),
        fixed=tuple(arms["fixed-seq-len"]),
    )


def point_name(params: Mapping[str, Any]) -> str:
    """The name of the recipe point for one point of InferenceX's sweep (``sweep.json``)."""
    isl, osl = (int(params["isl"]), int(params["osl"])) if "isl" in params else (0, 0)
    return ConfigPoint(
        "", int(params["tp"]), int(params["conc"]), variant_of(params), isl, osl
    ).name


def read_records(path: Path) -> dict[str, list[dict[str, Any]]]:
    """A recording of InferenceX's commands (``commands.jsonl``) by key: the records whose
    server start was captured, of keys it could tell apart."""
    found: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        server = record.get("server") or {}
        if server.get("argv") and "|" not in record["key"]:
            found.setdefault(record["key"], []).append(record)
    return found


def _portable(name: str, text: str | None, literal: re.Pattern[str]) -> bool:
    """A setting a recipe can carry: one token (or a JSON object or list), no path of InferenceX's
    runner, no acceptance-length setting (those come from the golden curve at launch)."""
    if text is None:
        return True
    return (
        (" " not in text or text.startswith("{") or _json_list(text) is not None)
        and not text.startswith("/")
        and not literal.search(f"{name} {text}")
    )


def port(
    engine: str, prefix: str, records: Iterable[Mapping[str, Any]], *, agentic: bool
) -> Ported | None:
    """The flags and variables of a key's recorded server starts that a recipe sets: those the
    plugin owns (model, address, TP, speculative decoding, an AgentX admission) left out."""
    rules = installed().engine_rules()
    tables = rules.tables(engine, agentic=agentic)
    literal = al_literal_pattern(installed().synthetic_knobs())
    per_point: dict[str, tuple[dict[str, str], dict[str, str], dict[str, str]]] = {}
    specs: set[str | None] = set()
    for record in records:
        client = _client_settings(record, agentic=agentic)
        recorded = record["server"].get("files") or {}
        argv = record["server"]["argv"]
        specs.add(speculative_of(engine, prefix, argv, GOLDEN, files=recorded))
        files = _options_files(recorded)
        args: dict[str, str] = {}
        for flag, given in flags(record["server"]["argv"], engine, spelled=False).items():
            if flag in OWNED_SERVER or owner(flag, tables) is not None:
                continue
            options = files.get(given.rsplit("/", 1)[-1]) if given else None
            if options is not None:
                args[flag.lstrip("-")] = json.dumps(options)
            elif given in recorded:
                continue
            elif _portable(flag, given, literal):
                args[flag.lstrip("-")] = _arg_text(given)
        env = {
            name: json.dumps(str(given))
            for name, given in (record["server"].get("env") or {}).items()
            if not owned(Difference("server-env", name, str(given), None))
            and _portable(name, str(given), literal)
        }
        per_point[point_name(record["params"])] = (args, env, client)
    if not per_point:
        return None
    speculative = next(iter(specs)) if len(specs) == 1 else None
    stated = statements(engine, prefix, records, tables, speculative is not None, agentic=agentic)
    shared_args = _shared(a for a, _, _ in per_point.values())
    shared_env = _shared(e for _, e, _ in per_point.values())
    shared_client = _shared(c for _, _, c in per_point.values())
    rest = tuple(
        (
            name,
            tuple(sorted((k, v) for k, v in args.items() if k not in shared_args)),
            tuple(sorted((k, v) for k, v in env.items() if k not in shared_env)),
            tuple(sorted((k, v) for k, v in client.items() if k not in shared_client)),
        )
        for name, (args, env, client) in sorted(per_point.items())
    )
    return Ported(
        tuple(sorted(shared_args.items())),
        tuple(sorted(shared_env.items())),
        rest,
        len(rest),
        speculative,
        tuple(sorted(shared_client.items())),
        stated,
    )


def statements(
    engine: str,
    prefix: str,
    records: Iterable[Mapping[str, Any]],
    tables: tuple[OwnedFlags, ...],
    speculates: bool,
    *,
    agentic: bool,
) -> tuple[Statement, ...]:
    """The differences a key's recorded commands keep against its generated recipe, each with
    its reason: client flags the plugin's clients do not offer, a fixed-seq-len chat endpoint,
    a file of InferenceX's repository given to the server, and the speculation a recipe cannot
    plan (no speculative block was ported: no golden curve, or an options file's config in a
    spelling the adapter does not write)."""
    found: dict[tuple[str, str], list[tuple[str | None, str | None, str, str]]] = {}

    def add(
        field: str, name: str, theirs: str | None, ours: str | None, reason: str, why: str
    ) -> None:
        found.setdefault((field, name), []).append((theirs, ours, reason, why))

    for record in records:
        server = record["server"]
        client_argv = (record.get("client") or {}).get("argv") or ()
        for flag, given in flags(client_argv, "client", spelled=False).items():
            if flag in CHAT_TEMPLATE_CLIENT:
                reason = "tool-limit"
                add("setting", flag, given or "true", None, reason, CHAT_TEMPLATE_CLIENT[flag])
            elif flag == "--endpoint" and not agentic and given != "/v1/completions":
                add("setting", "endpoint", given, "/v1/completions", "tool-limit", CLIENT_ENDPOINT)
        recorded = server.get("files") or {}
        spelled = flags(server["argv"], engine)
        for flag, given in flags(server["argv"], engine, spelled=False).items():
            if given in recorded and flag not in OPTIONS_FLAGS:
                add("flag", flag, "*", None, "tool-limit", SERVER_FILE)
            elif flag in ACCEPTANCE_FLAGS:
                continue
            elif not speculates and owner(flag, tables) == SPECULATIVE:
                add("flag", flag, spelled[flag], None, "owned", NO_CURVE)
        if not speculates:
            for name in ACCEPTANCE_FLAGS:
                if name in spelled:
                    add("flag", SYNTHETIC_ACCEPTANCE, "*", None, "owned", NO_CURVE)
            config = _speculative_config(spelled.get(SPEC_CONFIG))
            if config:
                apart = synthetic_apart(dict(spelled))
                add("flag", SPEC_CONFIG, apart.get(SPEC_CONFIG), None, "owned", NO_CURVE)
                if config.get("rejection_sample_method") == "synthetic":
                    add("flag", SYNTHETIC_SPEC, "*", None, "owned", NO_CURVE)
            for options in _options_files(recorded, keep=True).values():
                written = options.get("speculative_config")
                if isinstance(written, dict):
                    text = json.dumps(written, sort_keys=True)
                    reason, why = _options_reason(prefix, written)
                    add("flag", f"{OPTIONS_SETTING}.speculative_config", text, None, reason, why)
                    for name in sorted(SYNTHETIC_ENV & (server.get("env") or {}).keys()):
                        add("variable", name, "*", None, reason, why)
    stated: list[Statement] = []
    for (field, name), seen in sorted(found.items()):
        values = {theirs for theirs, _, _, _ in seen}
        _, ours, reason, evidence = seen[0]
        only = next(iter(values)) if len(values) == 1 else "*"
        stated.append(Statement(field, name, only, ours, reason, evidence))
    return tuple(stated)


def _options_reason(prefix: str, config: Mapping[str, Any]) -> tuple[str, str]:
    """Why an options file's speculative config is not planned: no curve for what drafts (the
    plugin's to decide), else a spelling the engine's adapter does not write (its limit)."""
    drafts = {name.rsplit("/", 1)[-1] for name in GOLDEN if "/" in name}
    named = {str(v).rstrip("/").rsplit("/", 1)[-1] for v in config.values() if isinstance(v, str)}
    if prefix in GOLDEN or named & drafts:
        return "tool-limit", OTHER_SPELLING
    return "owned", NO_CURVE


def _speculative_config(text: str | None) -> dict[str, Any]:
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _client_settings(record: Mapping[str, Any], *, agentic: bool) -> dict[str, str]:
    """The block settings a recorded client call gives other than their defaults: the chat
    template, and for an aiperf call its other block settings."""
    found: dict[str, str] = {}
    block = "agentic" if agentic else "fixed-seq-len"
    for flag, given in flags((record.get("client") or {}).get("argv") or (), "client").items():
        if CHAT_TEMPLATE_FLAGS.get(flag) == block:
            found.setdefault("chat-template", "true")
        elif flag == "--dsv4" and not agentic:
            found["chat-template"] = DEEPSEEK_V4
        elif agentic and flag in AGENTIC_CLIENT and given is not None:
            name, default = AGENTIC_CLIENT[flag]
            if given != default:
                found[name] = _arg_text(given)
    return found


OWNED_OPTIONS = ("speculative_config",)
"""LLM-API options the plugin sets from the recipe's speculative block and the point."""


def _options_files(files: Mapping[str, Any], *, keep: bool = False) -> dict[str, dict[str, Any]]:
    """The recorded files that are options mappings (TensorRT-LLM's LLM-API options YAML), by
    file name: a recipe carries them as a mapping, and the plugin writes the file."""
    import yaml

    found: dict[str, dict[str, Any]] = {}
    for path, entry in files.items():
        text = entry.get("text") if isinstance(entry, Mapping) else None
        if not isinstance(text, str):
            continue
        try:
            parsed = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if isinstance(parsed, dict):
            options = {k: v for k, v in parsed.items() if keep or k not in OWNED_OPTIONS}
            found[path.rsplit("/", 1)[-1]] = options
    return found


def _arg_text(given: str | None) -> str:
    """An engine arg as the recipe writes it: ``true`` for a bare flag, a number as a number
    (the engines' parsers type their sizes), a JSON object or list as a mapping or list (the
    engines take it as JSON), other text as a string."""
    if given is None:
        return "true"
    if given.startswith("{"):
        try:
            parsed = json.loads(given)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return json.dumps(parsed)
    listed = _json_list(given)
    if listed is not None:
        return json.dumps(listed)
    try:
        float(given)
    except ValueError:
        return json.dumps(given)
    return given if given.lower() not in ("nan", "inf", "-inf", "infinity") else json.dumps(given)


def _json_list(text: str) -> list[Any] | None:
    """A JSON list written as one token (``[1, 2, 4]``), which the engines read as JSON."""
    if not text.startswith("["):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, list) else None


def _shared(settings: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """The settings every mapping has, with the same value."""
    items = list(settings)
    if not items:
        return {}
    first = dict(items[0])
    return {k: v for k, v in first.items() if all(other.get(k) == v for other in items[1:])}


def _q(value: str) -> str:
    """A YAML scalar that reads back as this string: a JSON string is one."""
    return json.dumps(value)


def _arm_line(arm: Arm, fixed: bool) -> str:
    fields = [f"tp: {arm.tp}"]
    if fixed:
        fields += [f"isl: {arm.isl}", f"osl: {arm.osl}"]
    if arm.variant:
        fields.append(f"variant: {arm.variant}")
    fields.append(f"concurrency: [{', '.join(str(c) for c in arm.concurrency)}]")
    return f"  - {{{', '.join(fields)}}}"


_NAME = re.compile(r"tp(?P<tp>\d+)(?:-isl(?P<isl>\d+)-osl(?P<osl>\d+))?-c(?P<c>\d+)(?:-(?P<v>.+))?")


def _mapping(items: Iterable[tuple[str, str]]) -> str:
    """A flow mapping of args or variables, whose values are rendered already."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"


def _overrides(ported: Ported, block: str) -> list[str]:
    """One override per arm and set of per-point settings, with the concurrencies that have
    them; arms without a variant first, so that a variant's own settings come after.
    ``block``: the benchmark block the per-point client settings go in."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for name, args, env, client in ported.per_point:
        if not args and not env and not client:
            continue
        found = _NAME.fullmatch(name)
        if found is None:
            continue
        arm = (found["v"] or "", int(found["tp"]), int(found["isl"] or 0), int(found["osl"] or 0))
        groups.setdefault((*arm, args, env, client), []).append(int(found["c"]))
    lines: list[str] = []
    for (variant, tp, isl, osl, args, env, client), concs in sorted(
        groups.items(), key=lambda item: (item[0][0] != "", item[0][:4], sorted(item[1]))
    ):
        when = [f"tp: {tp}"]
        if isl:
            when += [f"isl: {isl}", f"osl: {osl}"]
        if variant:
            when.append(f"variant: {variant}")
        when.append(f"concurrency: [{', '.join(str(c) for c in sorted(concs))}]")
        lines.append(f"  - when: {{{', '.join(when)}}}")
        if args or env:
            lines.append("    engine:")
        if args:
            lines.append(f"      args: {_mapping(args)}")
        if env:
            lines.append(f"      env: {_mapping(env)}")
        if client:
            lines.append(f"    {block}: {_mapping(client)}")
    return lines


def _points_block(block: str, head: list[str], master: MasterKey, *, fixed: bool) -> list[str]:
    """The agentic or fixed-seq-len block: its own ``head`` lines, the client settings and
    speculative block ported from the scripts, then one line per point."""
    lines = [f"{block}:", *head]
    if master.ported is not None:
        lines += [f"  {name}: {given}" for name, given in master.ported.client]
    if master.ported is not None and master.ported.speculative is not None:
        lines.append(f"  speculative: {master.ported.speculative}")
    lines.append("  points:")
    lines += [_arm_line(arm, fixed=fixed) for arm in (master.fixed if fixed else master.agentic)]
    return lines


def render(master: MasterKey) -> str:
    """The recipe text of one key: the same input always gives the same bytes. The model is
    served under its hub id, the name InferenceX's client puts in every request (its servers
    serve the model under the path they load, the hub id where they load it from the hub)."""
    name = master.image.split("@", 1)[0]
    tag = name.rsplit(":", 1)[-1] if ":" in name else name
    spec = ", ".join(master.spec_decoding)
    docs = (
        f"InferenceX's {master.source} key {master.key} on runner label {master.runner_label},"
        f" generated by infx import-inferencex: its points are the master config's search"
        f" space; regenerate rather than edit."
    )
    if master.ported is None:
        docs += (
            " Engine settings are the engine's defaults: no recording of the per-key script's"
            f" server start was given (spec-decoding: {spec})."
        )
    else:
        docs += (
            " Server flags and environment are those the per-key script gave each point, as"
            f" recorded for {master.ported.points} points, less what the plugin sets itself,"
            " multi-token values, runner paths and acceptance-length settings"
            f" (spec-decoding: {spec}"
            + (
                ", ported"
                if master.ported.speculative
                else ", not ported"
                if spec != "none"
                else ""
            )
            + ")."
        )
        if master.ported.stated:
            docs += (
                " What it does not plan of the recorded commands is in differences, each with"
                " its reason."
            )
    lines = [
        f"key: {master.key}",
        f"docs: {_q(docs)}",
        "model:",
        f"  hub-id: {_q(master.model)}",
        f"  served-name: {_q(master.model)}",
        f"  prefix: {_q(master.prefix)}",
        f"  precision: {master.precision}",
    ]
    if master.prefix in KV_HEADS:
        lines.append(f"  kv-heads: {KV_HEADS[master.prefix]}")
    if master.max_model_len is not None:
        lines.append(f"  max-model-len: {master.max_model_len}")
    lines += [
        f"runner: {gpu_type(master.runner_label)}",
        "engine:",
        f"  name: {master.engine}",
        f"  version: {_q(tag)}",
        f"  image: {_q(master.image)}",
    ]
    if "@sha256:" not in master.image:
        lines.append(f"  image-unpinned: {_q(UNPINNED)}")
    if master.ported is not None and master.ported.args:
        lines.append(f"  args: {_mapping(master.ported.args)}")
    if master.ported is not None and master.ported.env:
        lines.append(f"  env: {_mapping(master.ported.env)}")
    if master.agentic:
        duration = [] if master.duration is None else [f"  duration: {master.duration}"]
        lines += _points_block("agentic", duration, master, fixed=False)
    if master.fixed:
        lines += _points_block("fixed-seq-len", [], master, fixed=True)
    block = "agentic" if master.agentic else "fixed-seq-len"
    overrides = _overrides(master.ported, block) if master.ported is not None else []
    if overrides:
        lines += ["overrides:", *overrides]
    if master.ported is not None and master.ported.stated:
        lines.append("differences:")
        lines += [_statement_line(s) for s in master.ported.stated]
    return "\n".join(lines) + "\n"


def _statement_line(stated: Statement) -> str:
    fields = [f"{stated.field}: {_q(stated.name)}"]
    fields += [f"inferencex: {_scalar(stated.inferencex)}", f"ours: {_scalar(stated.ours)}"]
    fields += [f"reason: {stated.reason}", f"evidence: {_q(stated.evidence)}"]
    return f"- {{{', '.join(fields)}}}"


def _scalar(given: str | None) -> str:
    return "null" if given is None else _q(given)


def hand_written_keys(recipes: Path, generated: Path) -> set[str]:
    """The keys of the recipes under ``recipes`` outside the ``generated`` folder."""
    import yaml

    keys: set[str] = set()
    if not recipes.is_dir():
        return keys
    for path in recipe_files(recipes):
        if path.resolve().is_relative_to(generated.resolve()):
            continue
        parsed = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(parsed, Mapping) and isinstance(parsed.get("key"), str):
            keys.add(parsed["key"])
    return keys


def generate(
    masters: Iterable[MasterKey],
    skip: Iterable[str] = (),
    records: Mapping[str, list[dict[str, Any]]] | None = None,
) -> dict[str, str]:
    """File name -> recipe text for each key not in ``skip``; with ``records`` (a recording of
    InferenceX's commands, by key), with the server settings its script gave each point."""
    skipped = set(skip)
    found: dict[str, str] = {}
    for master in masters:
        if master.key in skipped:
            continue
        recorded = records.get(master.key) if records else None
        ported = (
            port(master.engine, master.prefix, recorded, agentic=bool(master.agentic))
            if recorded
            else None
        )
        found[f"{master.key}.yaml"] = render(replace(master, ported=ported))
    return found


def differences(out: Path, wanted: Mapping[str, str]) -> Iterator[str]:
    """The file names under ``out`` that differ from ``wanted``: missing, changed or extra."""
    have = {p.name: p for p in out.glob("*.yaml")} if out.is_dir() else {}
    for name in sorted(wanted.keys() | have.keys()):
        if name not in have:
            yield f"{name}: missing"
        elif name not in wanted:
            yield f"{name}: not generated (no such key, or a hand-written recipe holds it)"
        elif have[name].read_text(encoding="utf-8") != wanted[name]:
            yield f"{name}: differs from the generator's output"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "import-inferencex",
        help="write one recipe per single-node key of InferenceX's master configs",
    )
    parser.add_argument("path", type=Path, help="checkout root, or its configs folder")
    parser.add_argument("--recipes", default=DEFAULT_RECIPES_DIR, type=Path, help="recipe folder")
    parser.add_argument(
        "-o",
        "--out",
        type=Path,
        default=None,
        help=f"folder of the generated recipes (default <recipes>/{GENERATED_FOLDER})",
    )
    parser.add_argument(
        "--masters",
        default=DEFAULT_MASTERS,
        help=f"master-config files to read, a glob (default {DEFAULT_MASTERS})",
    )
    parser.add_argument(
        "--commands",
        type=Path,
        default=None,
        help="a recording of InferenceX's commands (commands.jsonl): port each point's server"
        " flags and environment from it",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the folder is not the generator's output",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out: Path = args.out if args.out is not None else args.recipes / GENERATED_FOLDER
    try:
        masters = master_keys(args.path, args.masters)
    except (FileNotFoundError, RecipeError) as exc:
        print(f"infx import-inferencex: {exc}")
        return 2
    try:
        records = read_records(args.commands) if args.commands is not None else None
    except (OSError, ValueError, KeyError) as exc:
        print(f"infx import-inferencex: {args.commands}: not a recording of commands ({exc})")
        return 2
    wanted = generate(masters, hand_written_keys(args.recipes, out), records)
    stale = list(differences(out, wanted))
    if args.check:
        for line in stale:
            print(line)
        print(f"{len(wanted)} generated recipes, {len(stale)} files differ in {out}")
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for path in out.glob("*.yaml"):
        if path.name not in wanted:
            path.unlink()
    for name, text in wanted.items():
        target = out / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    print(f"{len(wanted)} recipes in {out}, {len(stale)} written or removed")
    return 0
