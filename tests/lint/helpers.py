from __future__ import annotations

import subprocess
from pathlib import Path

ENTRY_A = """\
- config-keys:
    - dsv4-fp4-b200-vllm-agentic-mtp
  scenario-type:
    - agentic-coding
  description:
    - "Serve the TP8 arm with FULL_AND_PIECEWISE cudagraphs"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2707
"""

ENTRY_B = """\
- config-keys:
    - qwen3.5-fp4-b300-sglang
    - glm5.2-fp8-*
  description:
    - "Bump the image"
    - "Raise chunked prefill to 16384"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2710
"""

RECIPE_KEYS = frozenset(
    {
        "dsv4-fp4-b200-vllm-agentic-mtp",
        "qwen3.5-fp4-b300-sglang",
        "glm5.2-fp8-b300-vllm",
        "glm5.2-fp8-b200-vllm",
        "mimov2.6flash-fp4-b200-sglang-agentic",
    }
)


def entry(*keys: str, pr_link: str = "XXX", extra: str = "") -> str:
    listed = "".join(f"    - {key}\n" for key in keys)
    return (
        f'- config-keys:\n{listed}  description:\n    - "A change"\n{extra}  pr-link: {pr_link}\n'
    )


def join(*entries: str) -> str:
    return "\n".join(entries)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout
