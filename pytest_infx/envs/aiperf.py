"""aiperf, the load generator for AgentX points, in its own environment.

aiperf pins its own stack (pydantic, zmq, numpy versions) that must not leak into the plugin's or
the engine's environment.
"""

from __future__ import annotations

from pathlib import Path

from pytest_infx.envs.toolenv import Installable, InstalledTool, ToolEnvSpec

VERSION = "0.13.0"

SPEC = ToolEnvSpec(
    name="aiperf",
    version=VERSION,
    requirements=(f"aiperf=={VERSION}",),
    check=("aiperf", "--help"),
)


class AiperfEnv(InstalledTool):
    @property
    def aiperf(self) -> Path:
        return self.env_dir / "bin" / "aiperf"


AIPERF = Installable(SPEC, AiperfEnv.at)
ensure_aiperf = AIPERF.ensure
"""The installed aiperf; installs it when it is missing."""
installed_aiperf = AIPERF.installed
"""aiperf if it is already installed, without installing anything."""
