"""aiperf, the load generator for AgentX points, in its own environment.

aiperf pins its own stack (pydantic, zmq, numpy versions) that must not leak into the plugin's or
the engine's environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_infx.envs.toolenv import Progress, ToolEnvSpec, ensure, locate

VERSION = "0.13.0"

SPEC = ToolEnvSpec(
    name="aiperf",
    version=VERSION,
    requirements=(f"aiperf=={VERSION}",),
    check=("aiperf", "--help"),
)


@dataclass(frozen=True)
class AiperfEnv:
    python: Path
    aiperf: Path
    version: str
    env_dir: Path


def _aiperf_env(env_dir: Path) -> AiperfEnv:
    return AiperfEnv(
        python=env_dir / "bin" / "python",
        aiperf=env_dir / "bin" / "aiperf",
        version=VERSION,
        env_dir=env_dir,
    )


def ensure_aiperf(
    *, progress: Progress | None = None, cache_dir: Path | None = None, force: bool = False
) -> AiperfEnv:
    """The installed aiperf; installs it when it is missing."""
    env = ensure(SPEC, progress=progress, cache_dir=cache_dir, force=force)
    return _aiperf_env(env.env_dir)


def installed_aiperf(*, cache_dir: Path | None = None) -> AiperfEnv | None:
    """aiperf if it is already installed, without installing anything."""
    env = locate(SPEC, cache_dir=cache_dir)
    return _aiperf_env(env.env_dir) if env.is_complete() else None
