"""Time the lint rules on an InferenceX-sized changelog.

``generate_changelog`` is importable so the whole-process ``pytest -m lint`` timing can reuse it.
Run: ``python benchmarks/lint_speed.py [--entries 772] [--runs 7]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

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


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def generate_changelog(path: Path | str, n_entries: int, keys: Sequence[str]) -> int:
    """Write a realistic changelog of ``n_entries`` entries over ``keys``; return its size."""
    text = changelog_text(n_entries, keys)
    _write_atomic(Path(path), text)
    return len(text.encode())


def append_entry(path: Path | str, keys: Sequence[str], pr_link: str = "XXX") -> None:
    """Append one new entry the way a PR does."""
    target = Path(path)
    entry = render_entry(keys, ["Raise concurrency to 128 on the TP4 arm"], pr_link)
    _write_atomic(target, target.read_text(encoding="utf-8") + "\n" + entry)


_RECIPE = """\
key: {key}
runner: b200
engine:
  name: vllm
  version: v0.31.0
  image: vllm/vllm-openai:v0.31.0
  args:
    # 0.95 leaves room for the decode CUDA graphs at concurrency 64.
    gpu-memory-utilization: 0.95
    max-model-len: auto
    max-num-batched-tokens: 16384
    reasoning-parser: mimo
tp: 4
agentic:
  points:
    - tp: 4
      concurrency: [1, 4, 8, 16, 32, 64]
    - tp: 2
      concurrency: [1, 4, 8, 16, 32]
  admission-factor: 2.0
  duration: 1800
  traces: 'semianalysis_cc_traces_weka_062126' # the 256k variant needs TP8
overrides:
  - when: {{tp: 2}}
    engine:
      args:
        max-num-batched-tokens: 8192
"""

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


def generate_comment_files(repo: Path, keys: Sequence[str], n_scripts: int) -> int:
    """One recipe per key and ``n_scripts`` collectors, shaped like the real ones and following
    the comment rules; returns the number of lines written."""
    total = 0
    for key in keys:
        text = _RECIPE.format(key=key)
        _write_atomic(repo / "recipes" / f"{key}.yaml", text)
        total += text.count("\n")
    for index in range(n_scripts):
        text = "#!/usr/bin/env bash\n" + _SCRIPT.format(index=index) * 5
        _write_atomic(repo / "benchmarks" / f"collector_{index}.sh", text)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=772)
    parser.add_argument("--keys", type=int, default=208)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--scripts", type=int, default=150, help="collector scripts to lint")
    args = parser.parse_args(argv)

    from pytest_infx.lint.context import build_context, default_base_ref
    from pytest_infx.lint.findings import all_rules

    keys = make_keys(args.keys)
    rules = all_rules()
    with tempfile.TemporaryDirectory(prefix="infx-lint-bench-") as tmp:
        repo = Path(tmp)
        size, changed = make_repo(repo, args.entries, keys)
        comment_lines = generate_comment_files(repo, keys, args.scripts)
        totals: list[float] = []
        per_rule: dict[str, list[float]] = {rule.id: [] for rule in rules}
        findings = 0
        for _ in range(args.runs):
            start = time.perf_counter()
            ctx = build_context(
                repo,
                base_ref=default_base_ref(repo),
                recipe_keys=keys,
                changed_keys=[changed],
            )
            for rule in rules:
                began = time.perf_counter()
                findings += len(rule.run(ctx))
                per_rule[rule.id].append(time.perf_counter() - began)
            totals.append(time.perf_counter() - start)
    print(f"changelog: {args.entries + 1} entries, {size} bytes; {len(keys)} recipe keys")
    print(f"comment-checked: {len(keys)} recipes, {args.scripts} scripts, {comment_lines} lines")
    for rule_id, times in per_rule.items():
        print(f"  {rule_id:<24} {statistics.median(times) * 1000:7.1f} ms")
    print(
        f"all rules incl. context (git calls): median {statistics.median(totals) * 1000:.1f} ms"
        f" over {args.runs} runs; findings: {findings}"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
