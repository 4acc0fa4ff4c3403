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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_infx.cli.compare import (
    DEFAULT_MASTERS,
    SCENARIOS,
    _concurrencies,
    _configs,
    _field,
    _items,
    variant_of,
)
from pytest_infx.engines.registry import installed
from pytest_infx.hardware import gpu_type
from pytest_infx.lint.masters import master_files
from pytest_infx.recipes.errors import RecipeError
from pytest_infx.recipes.loader import recipe_files
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
    lengths: set[tuple[int, int, int | None]] = set()
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
                lengths.add((isl, osl, None))
            if isinstance(group.get("duration"), int):
                durations.add(group["duration"])
    max_model_len = None
    if len(lengths) == 1:
        isl, osl, _ = next(iter(lengths))
        max_model_len = isl + osl + 256
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


def render(master: MasterKey) -> str:
    """The recipe text of one key: the same input always gives the same bytes."""
    name = master.image.split("@", 1)[0]
    tag = name.rsplit(":", 1)[-1] if ":" in name else name
    served = master.model.rsplit("/", 1)[-1].lower()
    spec = ", ".join(master.spec_decoding)
    docs = (
        f"InferenceX's {master.source} key {master.key} on runner label {master.runner_label},"
        f" generated by infx import-inferencex: its points are the master config's search"
        f" space; regenerate rather than edit. Engine settings are the engine's defaults: the"
        f" per-key script's flags and environment are not ported here (spec-decoding: {spec})."
    )
    lines = [
        f"key: {master.key}",
        f"docs: {_q(docs)}",
        "model:",
        f"  hub-id: {_q(master.model)}",
        f"  served-name: {_q(served)}",
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
    if master.agentic:
        lines.append("agentic:")
        if master.duration is not None:
            lines.append(f"  duration: {master.duration}")
        lines.append("  points:")
        lines += [_arm_line(arm, fixed=False) for arm in master.agentic]
    if master.fixed:
        lines += ["fixed-seq-len:", "  points:"]
        lines += [_arm_line(arm, fixed=True) for arm in master.fixed]
    return "\n".join(lines) + "\n"


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


def generate(masters: Iterable[MasterKey], skip: Iterable[str] = ()) -> dict[str, str]:
    """File name -> recipe text for each key not in ``skip``."""
    skipped = set(skip)
    return {f"{m.key}.yaml": render(m) for m in masters if m.key not in skipped}


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
    wanted = generate(masters, hand_written_keys(args.recipes, out))
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
