"""Time ``pytest -m lint`` on an InferenceX-sized repository, as a whole process.

The repository is generated: a 772-entry, ~400 KB changelog, 208 recipe keys (about 3,000 points,
bases and overrides included), their golden curves with the README registry, 150 collector
scripts, and a git base ref; the working tree changes one recipe and appends its entry, so every
rule runs, including the recipe diff against the base. The goal is at most 1.0 s.

Three states are timed: warm (nothing changed since the last lint run, so the stored changelog
parse, recipe problems, base diff and script scans are reused), after an edit (the changed
recipe and the new entry are touched before each run: what a developer fixing a finding sees),
and cold (``-p no:cacheprovider``: a fresh clone, as in CI).
Run: ``python benchmarks/lint_speed.py [--entries 772] [--keys 208] [--runs 7] [--profile]``.
``--checkout FOLDER`` times the pre-PR ``pytest -m lint`` and CI's ``pytest -m infx_lint`` as
typed in an existing checkout (this repository; an InferenceX checkout's ``utils/``).

``--inferencex CHECKOUT --agreement N`` replays the checkout's last N changelog commits, each
against its parent (``infx lint``, changelog-only entries allowed as InferenceX's results
recovery writes them), and counts the verdicts that agree with InferenceX's validator and with
a literal reading of its written byte rules.
``--inferencex CHECKOUT [--base REF]`` times PR mode on a real InferenceX checkout instead (the
work tree at a pull request's commit, ``REF`` its parent, default ``HEAD^``), warm and cold, and
InferenceX's own ``utils/validate_perf_changelog.py`` on the same commit; goals: at most 1.0 s
warm, 1.5 s cold, and at least 3x faster than the validator.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_infx.files.atomic import atomic_write_text

GOAL_S = 1.0
WARM_GOAL_S = GOAL_S
COLD_GOAL_S = 1.5
_MODELS = (
    "dsv4",
    "dsr1",
    "glm5.2",
    "kimik2.5",
    "kimik3",
    "minimaxm3",
    "qwen3.5",
    "gptoss",
    "llama4",
    "mimov2.6flash",
)
_PRECISIONS = ("fp4", "fp8", "bf16")
_HARDWARE = ("b200", "b300", "h200", "h100", "gb200", "mi355x", "mi300x")
_ENGINES = ("vllm", "sglang", "trtllm", "atom")
_SUFFIXES = ("", "-mtp", "-agentic", "-agentic-mtp", "-dflash", "-eagle3")
_SENTENCES = (
    "Serve the TP8 arm with FULL_AND_PIECEWISE cudagraphs and raise max-num-batched-tokens to"
    " 16384 so long agentic prompts are not split across steps",
    "Bump the image to vllm/vllm-openai:v0.31.0 pinned by digest; the previous image crashed on"
    " the MXFP4 MoE kernel at concurrency 64",
    "Drop the TP8 points: attention TP must divide the 4 KV heads, so the server rejected them",
    "Admission is twice the concurrency so subagent fan-out never queues behind the main lane",
    "Enable prefix caching and chunked prefill 8192; TTFT at concurrency 32 improves by 18%",
    "Switch the attention backend to fa4 and the MoE runner to flashinfer_mxfp4",
    "Re-run after the driver upgrade on the B300 pool; no recipe change beyond the image",
    "Add the EP8 decode arm with DP attention, measured at concurrency 4 through 256",
)


def make_keys(n_keys: int = 208, *, seed: int = 0) -> list[str]:
    """Recipe keys shaped like InferenceX's (``model-precision-hardware-engine[-variant]``)."""
    rng = random.Random(seed)
    keys: set[str] = set()
    while len(keys) < n_keys:
        parts = (
            rng.choice(_MODELS),
            rng.choice(_PRECISIONS),
            rng.choice(_HARDWARE),
            rng.choice(_ENGINES),
        )
        keys.add("-".join(parts) + rng.choice(_SUFFIXES))
    return sorted(keys)


def render_entry(
    keys: Sequence[str], description: Sequence[str], pr_link: str, scenario: str | None = None
) -> str:
    lines = ["- config-keys:", *(f"    - {key}" for key in keys)]
    if scenario:
        lines += ["  scenario-type:", f"    - {scenario}"]
    lines += ["  description:", *(f'    - "{text}"' for text in description)]
    lines.append(f"  pr-link: {pr_link}")
    return "\n".join(lines) + "\n"


def changelog_text(n_entries: int, keys: Sequence[str], *, seed: int = 1) -> str:
    rng = random.Random(seed)
    entries = []
    for number in range(n_entries):
        chosen = rng.sample(list(keys), rng.randint(1, 4))
        if rng.random() < 0.08:
            chosen[0] = chosen[0].rsplit("-", 1)[0] + "-*"
        description = [rng.choice(_SENTENCES) for _ in range(rng.randint(2, 4))]
        scenario = "agentic-coding" if any("agentic" in key for key in chosen) else None
        link = f"https://github.com/SemiAnalysisAI/InferenceX/pull/{1000 + 3 * number}"
        entries.append(render_entry(chosen, description, link, scenario))
    return "\n".join(entries)


def generate_changelog(path: Path | str, n_entries: int, keys: Sequence[str]) -> int:
    """Write a realistic changelog of ``n_entries`` entries over ``keys``; return its size."""
    text = changelog_text(n_entries, keys)
    atomic_write_text(Path(path), text)
    return len(text.encode())


def append_entry(
    path: Path | str, keys: Sequence[str], pr_link: str = "XXX", *, count: int = 1
) -> None:
    """Append ``count`` new entries the way a PR does, the last one as the PR's own."""
    target = Path(path)
    extra = [
        render_entry(keys, [f"Earlier step {i} of the same change"], "XXX")
        for i in range(count - 1)
    ]
    entry = render_entry(keys, ["Raise concurrency to 128 on the TP4 arm"], pr_link)
    text = target.read_text(encoding="utf-8")
    atomic_write_text(target, text + "".join(f"\n{e}" for e in extra) + "\n" + entry)


_SCRIPT = r"""set -euo pipefail
check_env_vars MODEL PORT MTP_LIST THINKING_MODES
cat > "$OUT/plan_{index}.txt" <<'PLAN'
# not a comment: heredoc body
PLAN
for mode in $THINKING_MODES; do
    for k in $MTP_LIST; do
        # SGLang counts the bonus token, so draft tokens are k + 1.
        python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" \
            --speculative-num-draft-tokens $((k + 1)) > "server_${{mode}}_${{k}}.log" 2>&1 &
        echo "waiting for ${{#MODEL}} chars of model name" # trailing comment
        acc=$(grep -oP 'spec_accepted\{{[^}}]*\}} \K[0-9.]+' metrics.prom || echo 0)
        echo "{index} $mode $k $acc"
    done
done
"""


def generate_scripts(repo: Path, n_scripts: int) -> int:
    """``n_scripts`` collectors shaped like the real ones, following the comment rules; returns
    the number of lines written."""
    total = 0
    for index in range(n_scripts):
        text = "#!/usr/bin/env bash\n" + _SCRIPT.format(index=index) * 5
        atomic_write_text(repo / "benchmarks" / f"collector_{index}.sh", text)
        total += text.count("\n")
    return total


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(repo: Path, n_entries: int, keys: Sequence[str]) -> tuple[int, str]:
    """A git repo whose ``origin/main`` holds the generated changelog and whose working tree adds
    one entry; returns the head size and the changed key."""
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.invalid")
    _git(repo, "config", "user.name", "bench")
    changelog = repo / "perf-changelog.yaml"
    generate_changelog(changelog, n_entries, keys)
    _git(repo, "add", "perf-changelog.yaml")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    changed = keys[0]
    append_entry(changelog, [changed])
    return changelog.stat().st_size, changed


_MODEL_FACTS: dict[str, tuple[str, int, str, object, object]] = {
    "dsv4": ("deepseek-ai/DeepSeek-V4-Pro", 128, "thinking", True, False),
    "dsr1": ("deepseek-ai/DeepSeek-R1-0528", 128, "enable_thinking", True, False),
    "glm5.2": ("zai-org/GLM-5.2-FP8", 8, "enable_thinking", True, False),
    "kimik2.5": ("moonshotai/Kimi-K2.5", 64, "thinking", True, False),
    "kimik3": ("moonshotai/Kimi-K3", 64, "thinking", True, False),
    "minimaxm3": ("MiniMaxAI/MiniMax-M3", 8, "thinking_mode", "enabled", "disabled"),
    "qwen3.5": ("Qwen/Qwen3.5-397B-A17B", 4, "enable_thinking", True, False),
    "gptoss": ("openai/gpt-oss-120b", 8, "enable_thinking", True, False),
    "llama4": ("meta-llama/Llama-4-Maverick", 8, "enable_thinking", True, False),
    "mimov2.6flash": ("XiaomiMiMo/MiMo-V2.6-Flash-RL", 4, "enable_thinking", True, False),
}
_IMAGES = {
    "vllm": "vllm/vllm-openai:v0.31.0",
    "sglang": "lmsysorg/sglang:v0.5.21-cu130",
    "trtllm": "nvcr.io/nvidia/tensorrt-llm/release:1.2.0",
    "atom": "rocm/atom:v0.9",
}
_METHOD_OF = {
    "dsv4": "mtp",
    "dsr1": "mtp",
    "glm5.2": "mtp",
    "kimik2.5": "eagle3",
    "kimik3": "dflash",
    "minimaxm3": "eagle3",
    "qwen3.5": "mtp",
    "gptoss": "eagle3",
    "llama4": "eagle3",
    "mimov2.6flash": "dflash",
}
_RUN_URL = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs"


def _served(prefix: str) -> str:
    return _MODEL_FACTS[prefix][0].rsplit("/", 1)[-1].lower()


def _flow(mapping: dict[str, object]) -> str:
    parts = []
    for key, value in mapping.items():
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        parts.append(f"{key}: {shown}")
    return "{" + ", ".join(parts) + "}"


def _model_block(prefix: str, precision: str) -> list[str]:
    hub, heads, *_ = _MODEL_FACTS[prefix]
    return [
        "model:",
        f"  hub-id: {hub}",
        f"  served-name: {_served(prefix)}",
        f"  prefix: {prefix}",
        f"  precision: {precision}",
        f"  kv-heads: {heads}",
    ]


def _engine_block(engine: str, rng: random.Random) -> list[str]:
    digest = "".join(rng.choice("0123456789abcdef") for _ in range(64))
    lines = [
        "engine:",
        f"  name: {engine}",
        f"  version: {_IMAGES[engine].rsplit(':', 1)[1]}",
        f"  image: {_IMAGES[engine]}@sha256:{digest}",
        "  args:",
        "    # 0.92 leaves room for the decode CUDA graphs at the top concurrency.",
        "    gpu-memory-utilization: 0.92",
        "    max-num-batched-tokens: 16384",
        "    reasoning-parser: auto",
    ]
    if rng.random() < 0.5:
        lines += ["  env:", "    NCCL_CUMEM_ENABLE: '0'"]
    return lines


def _recipe_text(key: str, rng: random.Random, bases: dict[str, str]) -> tuple[str, str | None]:
    """One rule-abiding recipe for ``key``; returns its text and the curve it needs."""
    prefix, precision, hardware, engine = key.split("-")[:4]
    suffix = key[len("-".join((prefix, precision, hardware, engine))) :]
    facts = _MODEL_FACTS[prefix]
    head = [f"key: {key}"]
    base_name = f"{prefix}-{precision}-{engine}.yaml"
    if rng.random() < 0.6:
        if base_name not in bases:
            bases[base_name] = "\n".join(
                [*_model_block(prefix, precision), *_engine_block(engine, rng)]
            )
        head += [f"extends: ../_base/{base_name}"]
    else:
        head += [*_model_block(prefix, precision), *_engine_block(engine, rng)]
    head.append(f"runner: {hardware}")
    curve: str | None = None
    if "agentic" in suffix:
        heads = facts[1]
        tps = [tp for tp in (2, 4, 8) if engine != "sglang" or heads % tp == 0]
        body = ["agentic:", "  points:"]
        for tp in tps:
            body += [f"    - tp: {tp}", "      concurrency: [1, 4, 8, 16, 32, 64]"]
        body += ["  admission-factor: 2.0", "  duration: 1800"]
        if suffix.endswith("-mtp"):
            method = _METHOD_OF[prefix]
            curve = f"{prefix}_{method}"
            body += ["  speculative:", f"    method: {method}"]
            body += ["    block-size: 8"] if method == "dflash" else []
            body += ["    draft-length: 3", f"    golden: {curve}"]
        if rng.random() < 0.3:
            body += [
                "overrides:",
                f"  - when: {{tp: {tps[0]}}}",
                "    engine:",
                "      args:",
                "        max-num-batched-tokens: 8192",
            ]
    else:
        method = _METHOD_OF[prefix]
        curve = f"{prefix}_{method}"
        top = 7 if method == "dflash" else 8
        on, off = {facts[2]: facts[3]}, {facts[2]: facts[4]}
        spec = ["  speculative:", f"    method: {method}"]
        if method == "dflash":
            spec.append("    block-size: 8")
        body = [
            "tp: 4",
            "speedbench:",
            *spec,
            f"  draft-lengths: [{', '.join(str(k) for k in range(1, top + 1))}]",
            "  thinking-modes:",
            f"    thinking_off: {_flow(off)}",
            f"    thinking_on: {_flow(on)}",
            "  sampling: {temperature: 1.0, top-p: 0.95}",
            f"  concurrency: {rng.choice((16, 32, 64))}",
            "  dataset:",
            "    category: coding",
            "  output-len: 4096",
            f"  golden: {curve}",
        ]
        if rng.random() < 0.3:
            body += [
                "overrides:",
                "  - when: {thinking: thinking_on}",
                "    speedbench:",
                "      output-len: 8192",
            ]
    return "\n".join([*head, *body]) + "\n", curve


def _curve_text(name: str, prefix: str, run: int) -> str:
    rows = [
        f"# Source GitHub Actions run: {_RUN_URL}/{run}",
        "# Acceptance Length (AL) reference values measured with SPEED-Bench.",
        "# dataset: coding | temperature: 1.0 | top_p: 0.95 | output_len: 4096",
        "#",
        "# key = num_speculative_tokens (draft length); value = golden AL",
        f"{_served(prefix)}:",
    ]
    for mode in ("thinking_on", "thinking_off"):
        rows.append(f"  {mode}:")
        rows += [f"    {k}: {1 + 0.8 * (1 - 0.75**k) / 0.25:.2f}" for k in range(1, 9)]
    return "\n".join(rows) + "\n"


def generate_recipes(repo: Path, keys: Sequence[str], *, seed: int = 2) -> tuple[int, int]:
    """Recipes for ``keys`` (bases, overrides, agentic and SPEED-Bench ones) and the golden
    curves they name, with the README registry; everything passes the lint rules. Returns
    ``(recipe files, curves)``."""
    rng = random.Random(seed)
    bases: dict[str, str] = {}
    curves: dict[str, str] = {}
    for key in keys:
        text, curve = _recipe_text(key, rng, bases)
        hardware = key.split("-")[2]
        atomic_write_text(repo / "recipes" / hardware / f"{key}.yaml", text)
        if curve is not None:
            curves[curve] = key.split("-")[0]
    for name, text in bases.items():
        atomic_write_text(repo / "recipes" / "_base" / name, text + "\n")
    rows = [
        "# Golden curves",
        "",
        "| Model | Method | Golden YAML | Source run |",
        "|---|---|---|---|",
    ]
    for number, (name, prefix) in enumerate(sorted(curves.items())):
        run = 27_000_000_000 + number
        atomic_write_text(repo / "golden" / f"{name}.yaml", _curve_text(name, prefix, run))
        method = name.rsplit("_", 1)[1]
        rows.append(
            f"| {prefix} | {method} | [{name}.yaml]({name}.yaml) | [{run}]({_RUN_URL}/{run}) |"
        )
    atomic_write_text(repo / "golden" / "README.md", "\n".join(rows) + "\n")
    return len(keys), len(curves)


def make_full_repo(
    repo: Path, n_entries: int, keys: Sequence[str], n_scripts: int, new_entries: int = 1
) -> str:
    """An InferenceX-sized repository: the changelog, recipes, golden curves and collectors at
    ``origin/main``; the working tree changes one recipe and appends the entry that covers it
    (``new_entries`` of them: a change that lists the key again and again, the worst case of
    the rules that match new entries with changed keys). Returns the changed key."""
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.invalid")
    _git(repo, "config", "user.name", "bench")
    generate_changelog(repo / "perf-changelog.yaml", n_entries, keys)
    generate_recipes(repo, keys)
    generate_scripts(repo, n_scripts)
    (repo / "pytest.ini").write_text(
        "[pytest]\ninfx = true\ntestpaths = recipes\n", encoding="utf-8"
    )
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    changed = next(k for k in keys if "agentic" not in k)
    path = changed_recipe(repo, changed)
    text = path.read_text(encoding="utf-8")
    atomic_write_text(path, text.replace("output-len: 4096", "output-len: 8192", 1))
    append_entry(repo / "perf-changelog.yaml", [changed], count=new_entries)
    return changed


def changed_recipe(repo: Path, changed: str) -> Path:
    return repo / "recipes" / changed.split("-")[2] / f"{changed}.yaml"


class Editor:
    """Edits the changed recipe and the new entry before each run, as a developer fixing a
    finding does: new bytes in both files, so nothing derived from them can be reused."""

    def __init__(self, recipe: Path, changelog: Path) -> None:
        self.recipe, self.changelog, self.edits = recipe, changelog, 0

    def __call__(self) -> None:
        self.edits += 1
        old, new = ("8192", "16384") if self.edits % 2 else ("16384", "8192")
        text = self.recipe.read_text(encoding="utf-8")
        atomic_write_text(self.recipe, text.replace(f"output-len: {old}", f"output-len: {new}", 1))
        log = self.changelog.read_text(encoding="utf-8")
        head, _, last = log.rpartition("\n- config-keys:")
        last = last.replace("on the TP4 arm", f"on the TP4 arm (edit {self.edits})", 1)
        atomic_write_text(self.changelog, f"{head}\n- config-keys:{last}")


def time_pytest(
    repo: Path,
    extra: Sequence[str],
    runs: int,
    before_each: Callable[[], None] = lambda: None,
    *,
    findings: bool = False,
) -> tuple[float, list[float], float, str]:
    """Median wall time of ``pytest -m lint`` as a whole, fresh process, the median CPU time
    (user + system, less sensitive to a busy machine) and the run's last line. One run before
    the timed ones fills pytest's cache (and compiles bytecode). With ``findings`` the run is
    expected to report some (exit status 1): the repeated new entries are a finding."""
    argv = [sys.executable, "-m", "pytest", "-m", "lint", "-q", *extra]
    subprocess.run(argv, cwd=repo, capture_output=True, check=False)
    times: list[float] = []
    cpu: list[float] = []
    last = ""
    for _ in range(runs):
        before_each()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=repo, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
        if done.returncode != (1 if findings else 0):
            raise SystemExit(f"pytest -m lint failed ({done.returncode}):\n{done.stdout[-4000:]}")
    return statistics.median(times), times, statistics.median(cpu), last


def time_command(
    argv: Sequence[str], cwd: Path, runs: int
) -> tuple[float, list[float], float, int]:
    """Median wall time of a whole process over ``runs`` runs after one untimed run, its
    median CPU time (user + system: what a busy machine distorts least), and the exit status
    of the last run (a lint that finds something is still timed)."""
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    times: list[float] = []
    cpu: list[float] = []
    status = 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        status = subprocess.run(argv, cwd=cwd, capture_output=True, check=False).returncode
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), times, statistics.median(cpu), status


def bench_inferencex(checkout: Path, base: str, runs: int) -> int:
    """PR mode on a real InferenceX checkout (work tree at the PR's commit, ``base`` its
    parent), side by side with InferenceX's own PR-time validator on the same commit."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    ours = [sys.executable, "-m", "pytest", "-m", "lint", "-q", "--infx-base", base]
    theirs = [
        sys.executable,
        "utils/validate_perf_changelog.py",
        "--changelog-file",
        "perf-changelog.yaml",
        "--base-ref",
        base,
        "--head-ref",
        "HEAD",
    ]
    # InferenceX's CI runs pytest where its ini is, so lint is typed there too.
    where = checkout / "utils" if (checkout / "utils" / "pytest.ini").is_file() else checkout
    print(
        f"InferenceX checkout {checkout} at {head}, base {base}; pytest in {where};"
        f" {runs} runs each"
    )
    warm = time_command(ours, where, runs)
    cold = time_command([*ours, "-p", "no:cacheprovider"], where, runs)
    them = time_command(theirs, checkout, runs)
    rows = (
        ("pytest -m lint (PR mode), warm", warm, WARM_GOAL_S),
        ("pytest -m lint (PR mode), cold", cold, COLD_GOAL_S),
        ("utils/validate_perf_changelog.py", them, None),
    )
    for label, (median, times, cpu, status), goal in rows:
        spread = ", ".join(f"{t:.2f}" for t in sorted(times))
        verdict = "" if goal is None else (" ok" if median <= goal else f" OVER {goal} s")
        print(
            f"{label:<34} median {median:.2f} s wall [{spread}], {cpu:.2f} s CPU,"
            f" exit {status}{verdict}"
        )
    print(
        f"ratio (theirs / ours), wall: warm {them[0] / warm[0]:.1f}x,"
        f" cold {them[0] / cold[0]:.1f}x; CPU: warm {them[2] / warm[2]:.1f}x,"
        f" cold {them[2] / cold[2]:.1f}x"
    )
    met = warm[0] <= WARM_GOAL_S and cold[0] <= COLD_GOAL_S and them[0] >= 3 * warm[0]
    return 0 if met else 1


def written_rules(base: bytes, head: bytes) -> list[str]:
    """InferenceX's written byte rules for one change, read literally (docs/ci-procedures.md,
    docs/configuration-procedures.md): the base's bytes stay as they are and come first
    (nothing inserted, deleted or normalised), the appended entries are separated from what
    is above them by exactly one empty line (a blank line already at the end of the base is
    that line), hold no trailing whitespace, and the file ends with one newline."""
    if not head.startswith(base):
        return ["the base's bytes changed or an entry was inserted"]
    added = head[len(base) :]
    why: list[str] = []
    after_blank = re.search(rb"\n[ \t]*\n\Z", base) is not None
    if not added.startswith(b"- config-keys:" if after_blank else b"\n- config-keys:"):
        why.append("the separator above the new entry is not one empty line")
    if re.search(rb"\n[ \t]*\n[ \t]*\n", added) or re.search(rb"\n[ \t]+\n", added):
        why.append("a blank line run or a whitespace-only line in the appended bytes")
    if not added.endswith(b"\n") or re.search(rb"\n[ \t]*\n\Z", added):
        why.append("the file does not end with exactly one newline")
    if re.search(rb"\S[ \t]+\n", added):
        why.append("trailing whitespace in the appended bytes")
    return why


def bench_checkout(folder: Path, runs: int) -> int:
    """``pytest -m lint`` (the pre-PR command: the rules and the host's lint-marked tests) and
    ``pytest -m infx_lint`` (the rules alone) as typed in ``folder``, warm, whole process."""
    rows = []
    for marker in ("lint", "infx_lint"):
        argv = [sys.executable, "-m", "pytest", "-m", marker, "-q"]
        rows.append((f"pytest -m {marker}, warm", time_command(argv, folder, runs)))
    print(f"in {folder}; {runs} runs each")
    for label, (median, times, cpu, status) in rows:
        spread = ", ".join(f"{t:.2f}" for t in sorted(times))
        verdict = " ok" if median <= WARM_GOAL_S else f" OVER {WARM_GOAL_S} s"
        print(
            f"{label:<26} median {median:.2f} s wall [{spread}], {cpu:.2f} s CPU,"
            f" exit {status}{verdict}"
        )
    return 0 if rows[0][1][0] <= WARM_GOAL_S else 1


def agreement(checkout: Path, count: int) -> int:
    """Replay the last ``count`` commits that touched the changelog, each linted against its
    parent (``infx lint``) and checked by InferenceX's validator, and count the verdicts that
    agree: on the changelog rules alone (what the validator judges) and on every rule. The
    checkout's HEAD is restored afterwards."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=checkout, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    start = git("rev-parse", "HEAD")
    commits = git("log", f"-{count}", "--format=%H", start, "--", "perf-changelog.yaml").split()
    same_changelog = same_all = same_written = 0
    try:
        for sha in commits:
            git("checkout", "-q", "--detach", sha)
            theirs = subprocess.run(
                [
                    sys.executable,
                    "utils/validate_perf_changelog.py",
                    "--changelog-file",
                    "perf-changelog.yaml",
                    "--base-ref",
                    f"{sha}^",
                    "--head-ref",
                    sha,
                ],
                cwd=checkout,
                capture_output=True,
                text=True,
                check=False,
            )
            ours = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest_infx.cli",
                    "lint",
                    "--root",
                    ".",
                    "--base",
                    f"{sha}^",
                    "--changelog-only-entries",
                    "repeat",
                ],
                cwd=checkout,
                capture_output=True,
                text=True,
                check=False,
            )
            failed = [
                line.split(":")[0][5:]
                for line in ours.stdout.splitlines()
                if line.startswith("FAIL ")
            ]
            changelog_ok = not any(rule.startswith("changelog-") for rule in failed)
            their_ok = theirs.returncode == 0
            same_changelog += changelog_ok == their_ok
            same_all += (not failed) == their_ok
            base = subprocess.run(
                ["git", "show", f"{sha}^:perf-changelog.yaml"],
                cwd=checkout,
                capture_output=True,
                check=False,
            ).stdout
            written = written_rules(base, (checkout / "perf-changelog.yaml").read_bytes())
            same_written += changelog_ok == (not written)
            print(
                f"{sha[:10]} theirs {'pass' if their_ok else 'FAIL'}"
                f" ours {'pass' if not failed else 'FAIL ' + ','.join(failed)}"
                f" written-bytes {'pass' if not written else 'FAIL ' + '; '.join(written)}"
            )
    finally:
        git("checkout", "-q", start)
    print(
        f"verdicts that agree with utils/validate_perf_changelog.py over {len(commits)} commits:"
        f" changelog rules {same_changelog}, every rule {same_all}; changelog rules with the"
        f" written byte rules: {same_written}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--inferencex",
        type=Path,
        metavar="CHECKOUT",
        help="time PR mode on this InferenceX checkout instead of a generated repository",
    )
    parser.add_argument(
        "--base", default="HEAD^", help="base ref for --inferencex (default: HEAD^)"
    )
    parser.add_argument(
        "--agreement",
        type=int,
        metavar="N",
        help="with --inferencex: replay its last N changelog commits against their parents"
        " and count the verdicts that agree with its validator (instead of timing)",
    )
    parser.add_argument(
        "--checkout",
        type=Path,
        metavar="FOLDER",
        help="time pytest -m lint and -m infx_lint as typed in FOLDER (this repository, or an"
        " InferenceX checkout's utils/) instead of a generated repository",
    )
    parser.add_argument("--entries", type=int, default=772)
    parser.add_argument(
        "--new-entries",
        type=int,
        default=1,
        help="new entries the change appends, each listing the changed key (the scaling case)",
    )
    parser.add_argument("--keys", type=int, default=208)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--scripts", type=int, default=150, help="collector scripts to lint")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument("--profile", action="store_true", help="profile one in-process run")
    args = parser.parse_args(argv)
    if args.checkout is not None:
        return bench_checkout(args.checkout.resolve(), args.runs)
    if args.inferencex is not None and args.agreement:
        return agreement(args.inferencex.resolve(), args.agreement)
    if args.inferencex is not None:
        return bench_inferencex(args.inferencex.resolve(), args.base, args.runs)

    from pytest_infx.lint.builtin import all_rules
    from pytest_infx.lint.context import build_context, default_base_ref
    from pytest_infx.recipes.loader import read_tree
    from pytest_infx.recipes.points import expand

    keys = make_keys(args.keys)
    rules = all_rules()
    with tempfile.TemporaryDirectory(prefix="infx-lint-bench-") as tmp:
        repo = args.keep or Path(tmp)
        repo.mkdir(parents=True, exist_ok=True)
        changed = make_full_repo(repo, args.entries, keys, args.scripts, args.new_entries)
        tree = read_tree(repo / "recipes")
        points = sum(len(expand(source)) for source in tree.sources)
        size = (repo / "perf-changelog.yaml").stat().st_size
        print(
            f"repo: changelog {args.entries + args.new_entries} entries ({args.new_entries} new),"
            f" {size} bytes; {len(tree.sources)} recipe"
            f" keys, {points} points; {len(list((repo / 'golden').glob('*.yaml')))} curves;"
            f" {args.scripts} collectors; base origin/main; changed key {changed}"
        )
        totals: list[float] = []
        per_rule: dict[str, list[float]] = {rule.id: [] for rule in rules}
        findings = 0
        for _ in range(args.runs):
            start = time.perf_counter()
            ctx = build_context(repo, base_ref=default_base_ref(repo))
            for rule in rules:
                began = time.perf_counter()
                found = rule.run(ctx)
                findings += len(found)
                for finding in found[:3]:
                    print(finding.render())
                per_rule[rule.id].append(time.perf_counter() - began)
            totals.append(time.perf_counter() - start)
        print("in process, per rule (median):")
        for rule_id, times in per_rule.items():
            print(f"  {rule_id:<24} {statistics.median(times) * 1000:7.1f} ms")
        print(
            f"  all rules incl. context: median {statistics.median(totals) * 1000:.1f} ms over"
            f" {args.runs} runs; findings: {findings}"
        )
        editor = Editor(changed_recipe(repo, changed), repo / "perf-changelog.yaml")
        variants: tuple[tuple[str, list[str], Callable[[], None]], ...] = (
            ("pytest -m lint, warm", [], lambda: None),
            ("pytest -m lint, after an edit", [], editor),
            (
                "pytest -m lint, cold (-p no:cacheprovider)",
                ["-p", "no:cacheprovider"],
                lambda: None,
            ),
        )
        over = False
        for label, extra, before_each in variants:
            median, times, cpu, last = time_pytest(
                repo, extra, args.runs, before_each, findings=args.new_entries > 1
            )
            spread = ", ".join(f"{t:.2f}" for t in sorted(times))
            verdict = "ok" if median <= GOAL_S else f"OVER the {GOAL_S} s goal"
            print(
                f"{label}: median {median:.2f} s wall over {args.runs} runs [{spread}],"
                f" {cpu:.2f} s CPU: {verdict}"
            )
            print(f"    {last}")
            over = over or (median > GOAL_S and label.endswith("warm"))
        if args.profile:
            _profile(repo)
    return 1 if findings or over else 0


def _profile(repo: Path) -> None:
    import cProfile
    import pstats

    import pytest

    cwd = Path.cwd()
    os.chdir(repo)
    profiler = cProfile.Profile()
    try:
        profiler.enable()
        pytest.main(["-m", "lint", "-q", "-p", "no:cacheprovider"])
        profiler.disable()
    finally:
        os.chdir(cwd)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    sys.exit(main())
