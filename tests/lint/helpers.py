from __future__ import annotations

import subprocess
from collections.abc import Mapping
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


VLLM_DIGEST = "sha256:c1c9f6fd5c109ba7f0546a59f5b2f15fb87f64c77782e90a27b648b42a8e67c3"
VLLM_IMAGE = f"vllm/vllm-openai:v0.31.0@{VLLM_DIGEST}"
SGLANG_IMAGE = (
    "lmsysorg/sglang:v0.5.21-cu130@sha256:"
    "b1259f3ea3275f66237c498ea388919729018bc9f01c3d638391e06e2cf3f469"
)
DFLASH_RECIPE = f"""\
key: mimov2.6flash-fp4-b300-vllm-dflash
model:
  hub-id: XiaomiMiMo/MiMo-V2.6-Flash-RL
  served-name: mimo-v2.6-flash-rl
  prefix: mimov2.6flash
  precision: fp4
  kv-heads: 4
runner: b300
engine:
  name: vllm
  version: v0.31.0
  image: {VLLM_IMAGE}
  args:
    no-enable-prefix-caching: true
    reasoning-parser: mimo
tp: 4
speedbench:
  speculative:
    method: dflash
    draft-subfolder: dflash
    block-size: 8
  draft-lengths: [1, 2, 3, 4, 5, 6, 7]
  thinking-modes:
    thinking_off: {{enable_thinking: false}}
    thinking_on: {{enable_thinking: true}}
  sampling: {{temperature: 1.0, top-p: 0.95}}
  concurrency: 32
  dataset:
    category: coding
  output-len: 4096
  golden: mimov2.6flash_dflash
"""

AGENTIC_BASE = """\
model:
  hub-id: XiaomiMiMo/MiMo-V2.6-Flash-RL
  served-name: mimo-v2.6-flash-rl
  prefix: mimov2.6flash
  precision: fp4
  kv-heads: 4
runner: b200
agentic:
  admission-factor: 2.0
  duration: 1800
"""

SGLANG_AGENTIC = f"""\
key: mimov2.6flash-fp4-b200-sglang-agentic
extends: _base/mimo-agentic.yaml
engine:
  name: sglang
  version: v0.5.21-cu130
  image: {SGLANG_IMAGE}
  args:
    mem-fraction-static: 0.85
agentic:
  points:
    - tp: 4
      concurrency: [1, 4, 8]
    - tp: 2
      concurrency: [1, 4]
  speculative:
    method: dflash
    block-size: 8
    draft-length: 3
    golden: mimov2.6flash_dflash
"""

MIMO_CURVE = """\
# Source GitHub Actions run: https://github.com/SemiAnalysisAI/InferenceX/actions/runs/41346734342
# Acceptance Length (AL) reference values measured with SPEED-Bench.
# dataset: coding | temperature: 1.0 | top_p: 0.95 | output_len: 4096
# thinking_on chat_template_kwargs: {"enable_thinking": true}
# thinking_off chat_template_kwargs: {"enable_thinking": false}
# speculative-config: method=dflash
#
# key = num_speculative_tokens (draft length); value = golden AL
mimo-v2.6-flash-rl:
  thinking_on:
    1: 1.84
    2: 2.51
    3: 2.97
    4: N/A
    5: 3.31
    6: 3.42
    7: 3.50
  thinking_off:
    1: 1.83
    2: 2.52
    3: 2.96
    4: 3.18
    5: 3.30
    6: 3.41
    7: 3.49
"""

REFERENCE_CURVE = """\
# Source GitHub Actions run: https://github.com/SemiAnalysisAI/InferenceX/actions/runs/27180633016
# speculative-config: method=mtp
# reference: true
#
# key = num_speculative_tokens (draft length); value = golden AL
deepseek-v4-pro:
  thinking_on:
    1: 1.79
    2: 2.27
"""

RUN = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs"
README = f"""\
# Golden acceptance-length curves

| Model | Method | Golden YAML | Source run |
|---|---|---|---|
| DeepSeek-V4-Pro | MTP | [dsv4_mtp.yaml](dsv4_mtp.yaml) | [27180633016]({RUN}/27180633016) |
| MiMo-V2.6-Flash | DFlash | [mimov2.6flash_dflash.yaml](mimov2.6flash_dflash.yaml) \
| [41346734342]({RUN}/41346734342) |
"""


def repo_files() -> dict[str, str]:
    """A small repository that passes every recipe and golden rule."""
    return {
        "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml": DFLASH_RECIPE,
        "recipes/_base/mimo-agentic.yaml": AGENTIC_BASE,
        "recipes/mimov2.6flash-fp4-b200-sglang-agentic.yaml": SGLANG_AGENTIC,
        "golden/mimov2.6flash_dflash.yaml": MIMO_CURVE,
        "golden/dsv4_mtp.yaml": REFERENCE_CURVE,
        "golden/README.md": README,
    }


def write_files(root: Path, files: Mapping[str, str | None]) -> None:
    """Write (or, for ``None``, delete) files under ``root``."""
    for name, text in files.items():
        path = root / name
        if text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")
