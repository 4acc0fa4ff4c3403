"""Time ``pytest --collect-only`` over an InferenceX-sized recipe tree, as a whole process.

The tree is generated: speedbench recipes with 7-8 draft lengths x 2 thinking modes and agentic
recipes with 2-3 TPs x 5-6 concurrencies, many extending a shared base and some carrying
overrides, so the loader, the expansion and the plugin hooks all do their real work. The goal is
at most 1.5 s including pytest start-up. Timed warm (nothing changed since the last run), after
an edit of one recipe file, and cold (``-p no:cacheprovider``: a fresh clone).

Run: ``python benchmarks/collect_speed.py [--keys 208] [--runs 7] [--keep DIR] [--profile]``;
``--recipes recipes`` times the repository's own recipe folder instead of a generated tree.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import os
import pstats
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

GOAL_S = 1.5
_MODELS = (
    ("dsr1", "deepseek-ai/DeepSeek-R1-0528", 8),
    ("dsv4", "deepseek-ai/DeepSeek-V4", 8),
    ("glm5.2", "zai-org/GLM-5.2", 8),
    ("kimik2.5", "moonshotai/Kimi-K2.5", 8),
    ("qwen3.5", "Qwen/Qwen3.5-397B-A17B", 4),
    ("gptoss", "openai/gpt-oss-120b", 8),
    ("minimaxm3", "MiniMaxAI/MiniMax-M3", 8),
    ("mimov2.6flash", "XiaomiMiMo/MiMo-V2.6-Flash-RL", 4),
)
_PRECISIONS = ("fp4", "fp8", "bf16")
_HARDWARE = ("b300", "b200", "gb200", "h200", "h100", "mi355x")
_ENGINES = {
    "vllm": "vllm/vllm-openai:v0.31.0",
    "sglang": "lmsysorg/sglang:v0.5.21-cu130",
}
_METHODS = ("mtp", "eagle3", "dflash")
_VLLM_ARGS: dict[str, Any] = {
    "gpu-memory-utilization": 0.92,
    "max-num-batched-tokens": 16384,
    "compilation-config": {"cudagraph_mode": "FULL_DECODE_ONLY"},
    "reasoning-parser": "deepseek_r1",
    "tool-call-parser": "hermes",
    "enable-auto-tool-choice": True,
}
_SGLANG_ARGS: dict[str, Any] = {
    "mem-fraction-static": 0.85,
    "chunked-prefill-size": 16384,
    "attention-backend": "fa4",
    "moe-runner-backend": "flashinfer_mxfp4",
    "reasoning-parser": "deepseek-r1",
}


def _digest(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(64))


def _model(prefix: str, hub_id: str, precision: str, kv_heads: int) -> dict[str, Any]:
    return {
        "hub-id": hub_id,
        "served-name": hub_id.split("/")[1].lower(),
        "prefix": prefix,
        "precision": precision,
        "kv-heads": kv_heads,
    }


def _engine(name: str, rng: random.Random) -> dict[str, Any]:
    args = dict(_VLLM_ARGS if name == "vllm" else _SGLANG_ARGS)
    return {
        "name": name,
        "version": _ENGINES[name].split(":")[1],
        "image": f"{_ENGINES[name]}@sha256:{_digest(rng)}",
        "args": args,
        "env": {"NCCL_CUMEM_ENABLE": "0"} if rng.random() < 0.5 else {},
    }


def _speedbench_block(prefix: str, method: str, rng: random.Random) -> dict[str, Any]:
    top = rng.choice((7, 8))
    return {
        "speculative": {"method": method, "draft": f"org/{prefix}-{method}-draft"},
        "draft-lengths": list(range(1, top + 1)),
        "thinking-modes": {
            "thinking_off": {"enable_thinking": False},
            "thinking_on": {"enable_thinking": True},
        },
        "sampling": {"temperature": 1.0, "top-p": 0.95},
        "concurrency": rng.choice((16, 32, 64)),
        "dataset": {"category": rng.choice(("coding", "math", "writing"))},
        "output-len": 4096,
        "golden": f"{prefix}_{method}",
    }


def _agentic_block(rng: random.Random) -> dict[str, Any]:
    tps = sorted(rng.sample((1, 2, 4, 8), rng.choice((2, 3))))
    concurrencies = (1, 4, 8, 16, 32, 64)
    return {
        "points": [
            {"tp": tp, "concurrency": list(concurrencies[: rng.choice((5, 6))])} for tp in tps
        ],
        "admission-factor": 2.0,
        "duration": 1800,
        "seed": 42,
    }


def generate_tree(root: Path, n_keys: int = 208, *, seed: int = 0) -> int:
    """Write ``n_keys`` recipes (plus their bases and a pytest.ini) under ``root``; return the
    number of recipe files written."""
    rng = random.Random(seed)
    recipes = root / "recipes"
    (recipes / "_base").mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = recipes\n", encoding="utf-8")
    bases: set[str] = set()
    keys: set[str] = set()
    while len(keys) < n_keys:
        prefix, hub_id, kv_heads = rng.choice(_MODELS)
        precision = rng.choice(_PRECISIONS)
        hardware = rng.choice(_HARDWARE)
        engine = rng.choice(tuple(_ENGINES))
        is_agentic = rng.random() < 0.4
        method = rng.choice(_METHODS)
        variant = "agentic" if is_agentic else method
        key = f"{prefix}-{precision}-{hardware}-{engine}-{variant}"
        if key in keys:
            continue
        keys.add(key)
        common = {
            "model": _model(prefix, hub_id, precision, kv_heads),
            "runner": hardware,
            "engine": _engine(engine, rng),
        }
        recipe: dict[str, Any] = {"key": key}
        if rng.random() < 0.6:
            base = f"{prefix}-{precision}-{hardware}-{engine}.yaml"
            if base not in bases:
                bases.add(base)
                text = yaml.safe_dump(common, sort_keys=False)
                (recipes / "_base" / base).write_text(text, encoding="utf-8")
            recipe["extends"] = f"../_base/{base}"
        else:
            recipe.update(common)
        if is_agentic:
            recipe["agentic"] = _agentic_block(rng)
            tps = [p["tp"] for p in recipe["agentic"]["points"]]
            if rng.random() < 0.4:
                recipe["overrides"] = [
                    {"when": {"tp": tps[-1]}, "engine": {"args": {"max-num-batched-tokens": 8192}}}
                ]
        else:
            recipe["tp"] = rng.choice((4, 8))
            recipe["speedbench"] = _speedbench_block(prefix, method, rng)
            if rng.random() < 0.4:
                recipe["overrides"] = [
                    {"when": {"thinking": "thinking_on"}, "speedbench": {"output-len": 8192}},
                    {"when": {"draft-length": [7, 8]}, "engine": {"env": {"SPEC_BIG_K": "1"}}},
                ]
        folder = recipes / hardware
        folder.mkdir(exist_ok=True)
        (folder / f"{key}.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False), "utf-8")
    return len(keys)


def copy_tree(recipes: Path, root: Path) -> None:
    """A repository's own recipe folder under ``root``, with the pytest.ini the timing uses."""
    import shutil

    shutil.copytree(recipes, root / "recipes", dirs_exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = recipes\n", encoding="utf-8")


def count_points(root: Path) -> tuple[int, int]:
    """Recipe keys and points, straight from the loader (no pytest)."""
    from pytest_infx.recipes.loader import load_tree
    from pytest_infx.recipes.points import expand_all

    sources = load_tree(root / "recipes")
    return len(sources), len(expand_all(sources))


_COLLECTED = re.compile(r"(\d+)(?:/(\d+))? tests? collected")


def child_env(*, bytecode: bool) -> dict[str, str]:
    """The timed processes' environment: by default Python may cache bytecode, as on a user's
    machine; without the cache every run recompiles and assertion-rewrites the plugin."""
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@dataclass(frozen=True)
class Timing:
    wall: list[float]
    cpu: list[float]
    items: int

    @property
    def median(self) -> float:
        return statistics.median(self.wall)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def unchanged() -> None:
    """Nothing changes between runs."""


def edit_one_recipe(root: Path) -> Callable[[], None]:
    """Before each run, rewrite one recipe file with new content, as a developer's save does."""
    path = next(
        p
        for p in sorted((root / "recipes").rglob("*.yaml"))
        if "output-len: 4096" in p.read_text(encoding="utf-8")
    )
    edits = [0]

    def edit() -> None:
        edits[0] += 1
        text = path.read_text(encoding="utf-8")
        old, new = ("4096", "4097") if edits[0] % 2 else ("4097", "4096")
        path.write_text(text.replace(f"output-len: {old}", f"output-len: {new}"), "utf-8")
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, max(stat.st_mtime_ns + 1_000_000, time.time_ns())))

    return edit


def time_collect(
    root: Path,
    extra: Sequence[str],
    runs: int,
    env: dict[str, str],
    before_each: Callable[[], None] = lambda: None,
) -> Timing:
    """Wall and CPU time of ``pytest --collect-only -q`` in fresh processes, and items seen.

    One untimed run first, so the bytecode cache (when allowed) and pytest's cache are warm as
    they are for a user. CPU time (user + system) is reported too because on a busy machine
    wall time mostly measures the other processes.
    """
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", *extra]
    wall: list[float] = []
    cpu: list[float] = []
    items = 0
    for attempt in range(runs + 1):
        if attempt:
            before_each()
        cpu_before = _children_cpu()
        started = time.perf_counter()
        proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        if proc.returncode not in (0, 5):
            raise SystemExit(f"pytest failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
        if attempt:
            wall.append(elapsed)
            cpu.append(_children_cpu() - cpu_before)
        match = _COLLECTED.search(proc.stdout.splitlines()[-1])
        if match:
            items = int(match.group(2) or match.group(1))
    return Timing(wall, cpu, items)


class _GcTimer:
    """Time spent in the cyclic garbage collector, which grows with every long-lived object."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.runs = [0, 0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.runs[info["generation"]] += 1


def profile_collect(root: Path, extra: Sequence[str], top: int = 25) -> None:
    """Where one collection spends its time: cProfile and GC time in-process, then imports."""
    import pytest

    profiler = cProfile.Profile()
    gc_timer = _GcTimer()
    cwd = Path.cwd()
    os.chdir(root)
    gc.callbacks.append(gc_timer)
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            profiler.enable()
            pytest.main(["--collect-only", "-q", *extra])
            profiler.disable()
    finally:
        gc.callbacks.remove(gc_timer)
        os.chdir(cwd)
    elapsed = time.perf_counter() - started
    print(
        f"in-process collection (profiled): {elapsed:.2f} s, of which cyclic GC "
        f"{gc_timer.seconds:.2f} s over {gc_timer.runs} collections per generation"
    )
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pytest", "--collect-only", "-q", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("slowest imports (cumulative us):")
    for cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative:>9}  {name}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keys", type=int, default=208, help="recipe keys to generate")
    parser.add_argument(
        "--recipes", type=Path, help="time this recipe folder (copied) instead of a generated tree"
    )
    parser.add_argument("--runs", type=int, default=7, help="timed runs per variant")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument("--gpu", default="b300", help="--gpu passed to pytest")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="time with PYTHONDONTWRITEBYTECODE=1"
    )
    parser.add_argument("--profile", action="store_true", help="also profile one collection")
    args = parser.parse_args(argv)
    env = child_env(bytecode=not args.no_bytecode)
    with tempfile.TemporaryDirectory(prefix="infx-collect-") as scratch:
        root = args.keep or Path(scratch)
        if args.recipes is not None:
            copy_tree(args.recipes, root)
        else:
            generate_tree(root, args.keys)
        empty = Path(scratch) / "empty"
        (empty / "recipes").mkdir(parents=True)
        (empty / "pytest.ini").write_text("[pytest]\ntestpaths = recipes\n", encoding="utf-8")
        keys, points = count_points(root)
        cache = "off" if args.no_bytecode else "on"
        print(f"tree: {keys} recipe keys, {points} points; bytecode cache {cache}")
        gpu = ["--gpu", args.gpu]
        no_cache = ["-p", "no:cacheprovider"]
        variants = (
            ("start-up only (no recipes)", empty, [*gpu, *no_cache], unchanged),
            ("pytest --collect-only -q, warm", root, gpu, unchanged),
            ("pytest --collect-only -q, after an edit", root, gpu, edit_one_recipe(root)),
            (
                "pytest --collect-only -q, cold (-p no:cacheprovider)",
                root,
                [*gpu, *no_cache],
                unchanged,
            ),
        )
        over = False
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for label, folder, extra, before_each in variants:
            timing = time_collect(folder, extra, args.runs, env, before_each)
            spread = ", ".join(f"{t:.2f}" for t in sorted(timing.wall))
            verdict = "ok" if timing.median <= GOAL_S else f"OVER the {GOAL_S} s goal"
            print(
                f"{label} --gpu {args.gpu}: wall median {timing.median:.2f} s of {args.runs} "
                f"[{spread}], CPU median {statistics.median(timing.cpu):.2f} s, "
                f"{timing.items} items: {verdict}"
            )
            over = over or timing.median > GOAL_S
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.profile:
            profile_collect(root, [*gpu, *no_cache])
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
