"""An InferenceX-shaped repository with a history of pull requests, generated in-process.

The base commit holds what InferenceX's history holds: a 720-entry changelog with the defects
the append-only rule forbids anyone to fix (whitespace-only lines, a double blank line, trailing
spaces, a non-canonical pr-link), master configs whose top-level keys are the config keys, and
collector scripts of which some open with header comments. Each pull request is a commit on
top of the main branch; clean ones are merged (main moves on), bad ones stay on a branch.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ENTRIES = 720
REPO = "https://github.com/SemiAnalysisAI/InferenceX/pull"
_MODELS = ("dsr1", "dsv4", "glm5.2", "kimik3", "minimaxm3", "qwen3.5", "gptoss", "mimov2.6flash")
_HARDWARE = ("b200", "b300", "h200", "gb200", "mi355x")
_ENGINES = ("vllm", "sglang", "trt", "atom")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def config_keys() -> list[str]:
    return sorted(
        f"{model}-fp4-{hardware}-{engine}"
        for model in _MODELS
        for hardware in _HARDWARE
        for engine in _ENGINES
    )


def master_block(key: str, conc: int = 64) -> str:
    model, _, hardware, engine = key.split("-", 3)
    return (
        f"{key}:\n  image: example/{engine}:v1\n  model-prefix: {model}\n  runner: {hardware}\n"
        f"  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
        f"      search-space:\n      - {{ tp: 4, conc-end: {conc} }}\n"
    )


def render_entry(keys: list[str], link: str, description: str = "Bump the image") -> str:
    listed = "".join(f"    - {key}\n" for key in keys)
    field = f"  pr-link: {link}\n" if link else "  pr-link:\n"
    return f'- config-keys:\n{listed}  description:\n    - "{description}"\n{field}'


def history_changelog(keys: list[str]) -> str:
    """720 entries with InferenceX's historical defects: trailing spaces (entry 100), a
    non-canonical pr-link (300), a whitespace-only separator (before 500) and a double blank
    line (before 600)."""
    rng = random.Random(7)
    text = ""
    for number in range(1, ENTRIES + 1):
        chosen = rng.sample(keys, rng.randint(1, 3))
        link = f"{REPO}/{1000 + number}" + ("/changes" if number == 300 else "")
        entry = render_entry(chosen, link, f"Change number {number}")
        if number == 100:
            entry = entry.replace("  description:", "  description:   ")
        separator = {1: "", 500: "  \n", 600: "\n\n"}.get(number, "\n")
        text += separator + entry
    return text


CLEAN_SCRIPT = """\
#!/usr/bin/env bash
set -euo pipefail
# one draft token more than the MTP level, as the engine counts the target token
SPEC_TOKENS=$((MTP + 1))
vllm serve "$MODEL" --num-speculative-tokens "$SPEC_TOKENS"
"""

HEADER_SCRIPT = """\
#!/usr/bin/env bash
# Launches the collector on B300 nodes.
# It needs the model staged first.
set -euo pipefail
vllm serve "$MODEL"
"""


def base_files(keys: list[str]) -> dict[str, str]:
    files = {
        "perf-changelog.yaml": history_changelog(keys),
        "configs/nvidia-master.yaml": "".join(master_block(k) for k in keys if "mi355x" not in k),
        "configs/amd-master.yaml": "".join(master_block(k) for k in keys if "mi355x" in k),
    }
    for number in range(40):
        files[f"benchmarks/single_node/collector_{number:02d}.sh"] = (
            HEADER_SCRIPT if number % 4 == 0 else CLEAN_SCRIPT
        )
    return files


@dataclass(frozen=True)
class PullRequest:
    """One replayed pull request: its name, the rules it must fail (none: clean), and
    whether it is merged (the next pull request starts from it)."""

    name: str
    fails: frozenset[str]
    change: Callable[[Path], None]
    merged: bool = False


def _append(repo: Path, entry: str, separator: str = "\n") -> None:
    path = repo / "perf-changelog.yaml"
    path.write_text(path.read_text() + separator + entry)


def _bump(repo: Path, key: str, conc: int = 128) -> None:
    """Change the concurrency of ``key``'s block, whatever it is now."""
    name = "amd" if "mi355x" in key else "nvidia"
    path = repo / "configs" / f"{name}-master.yaml"
    text = path.read_text()
    start = text.index("conc-end: ", text.index(f"{key}:\n"))
    end = text.index(" }", start)
    path.write_text(f"{text[:start]}conc-end: {conc}{text[end:]}")


def _edit_text(repo: Path, name: str, old: str, new: str) -> None:
    path = repo / name
    text = path.read_text()
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1))


def pull_requests() -> list[PullRequest]:
    clean = frozenset[str]()
    bump = "dsv4-fp4-b300-vllm"
    other = "glm5.2-fp4-b200-sglang"

    def bump_and_append(
        conc: int, link: str = "XXX", separator: str = "\n"
    ) -> Callable[[Path], None]:
        def change(repo: Path) -> None:
            _bump(repo, bump, conc)
            _append(repo, render_entry([bump], link), separator)

        return change

    def new_key_and_script(repo: Path) -> None:
        path = repo / "configs" / "nvidia-master.yaml"
        path.write_text(path.read_text() + master_block("dsv4-fp4-b300-vllm-mtp"))
        (repo / "benchmarks/single_node/dsv4_mtp.sh").write_text(CLEAN_SCRIPT)
        _append(repo, render_entry(["dsv4-fp4-b300-vllm-mtp", "dsv4-fp4-b300-*"], f"{REPO}/2002"))

    def correct_old_link(repo: Path) -> None:
        _edit_text(repo, "perf-changelog.yaml", f"{REPO}/1300/changes", f"{REPO}/1300")

    def fix_old_script_line(repo: Path) -> None:
        _edit_text(
            repo,
            "benchmarks/single_node/collector_00.sh",
            'vllm serve "$MODEL"\n',
            'vllm serve "$MODEL" --port 8888\n',
        )

    def edit_old_entry(repo: Path) -> None:
        _edit_text(repo, "perf-changelog.yaml", '"Change number 42"', '"Change number 42, fixed"')

    def insert_mid_file(repo: Path) -> None:
        _bump(repo, other)
        entry = render_entry([other], "XXX") + "\n"
        _edit_text(repo, "perf-changelog.yaml", "- config-keys:", entry + "- config-keys:")

    def header_script(repo: Path) -> None:
        (repo / "benchmarks/single_node/new_collector.sh").write_text(HEADER_SCRIPT)

    def comment_above_changed_line(repo: Path) -> None:
        _edit_text(
            repo,
            "benchmarks/single_node/collector_01.sh",
            "set -euo pipefail\n",
            "set -euo pipefail\n# the port the runner exposes\n\nPORT=8888\n",
        )

    def unknown_key(repo: Path) -> None:
        _bump(repo, bump, conc=256)
        _append(repo, render_entry([bump, "dsv4-fp4-b300-vlm"], "XXX"))

    def crlf(repo: Path) -> None:
        _bump(repo, bump, conc=512)
        _append(repo, render_entry([bump], "XXX").replace("\n", "\r\n"))

    def no_final_newline(repo: Path) -> None:
        _bump(repo, bump, conc=1024)
        _append(repo, render_entry([bump], "XXX").rstrip("\n"))

    def uncovered(repo: Path) -> None:
        _bump(repo, other, conc=32)

    def bad_scenario(repo: Path) -> None:
        _bump(repo, bump, conc=2048)
        entry = render_entry([bump], "XXX").replace(
            "  description:", "  scenario-type:\n    - agentic\n  description:"
        )
        _append(repo, entry)

    return [
        PullRequest("appends-an-entry", clean, bump_and_append(128), merged=True),
        PullRequest("adds-a-key-and-a-script", clean, new_key_and_script, merged=True),
        PullRequest("corrects-an-old-pr-link", clean, correct_old_link, merged=True),
        PullRequest("edits-a-line-of-an-old-script", clean, fix_old_script_line, merged=True),
        PullRequest("edits-an-old-entry", frozenset({"changelog-append-only"}), edit_old_entry),
        PullRequest("inserts-mid-file", frozenset({"changelog-append-only"}), insert_mid_file),
        PullRequest(
            "appends-after-a-whitespace-separator",
            frozenset({"changelog-bytes"}),
            bump_and_append(3, separator="  \n"),
        ),
        PullRequest("bad-pr-link", frozenset({"changelog-pr-link"}), bump_and_append(4, "TBD")),
        PullRequest("empty-pr-link", frozenset({"changelog-schema"}), bump_and_append(5, "")),
        PullRequest("trailing-space", frozenset({"changelog-bytes"}), bump_and_append(6, "XXX   ")),
        PullRequest("header-comment-script", frozenset({"comments-header"}), header_script),
        PullRequest(
            "comment-above-blank", frozenset({"comments-broad"}), comment_above_changed_line
        ),
        PullRequest("unknown-config-key", frozenset({"changelog-config-keys"}), unknown_key),
        PullRequest("crlf-entry", frozenset({"changelog-bytes"}), crlf),
        PullRequest("no-final-newline", frozenset({"changelog-bytes"}), no_final_newline),
        PullRequest("uncovered-change", frozenset({"changelog-coverage"}), uncovered),
        PullRequest("unknown-scenario-type", frozenset({"changelog-schema"}), bad_scenario),
    ]


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build(repo: Path) -> tuple[str, list[tuple[PullRequest, str]]]:
    """The repository at ``repo``: its first commit, then each pull request's commit."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    write(repo, base_files(config_keys()))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "history")
    first = git(repo, "rev-parse", "HEAD")
    commits: list[tuple[PullRequest, str]] = []
    for request in pull_requests():
        git(repo, "checkout", "-q", "-B", f"pr/{request.name}", "main")
        request.change(repo)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", request.name)
        commits.append((request, git(repo, "rev-parse", "HEAD")))
        if request.merged:
            git(repo, "checkout", "-q", "main")
            git(repo, "merge", "-q", "--ff-only", f"pr/{request.name}")
    git(repo, "checkout", "-q", "main")
    return first, commits
