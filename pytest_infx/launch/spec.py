from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pytest_infx.images import pinned
from pytest_infx.launch.gpus import Vendor, visible_devices

PORT_TOKEN = "{port}"
FILES_TOKEN = "{files}"


class SpecError(ValueError):
    """A server spec that cannot be launched as written; the message says what to change."""


@dataclass(frozen=True)
class LocalRuntime:
    """Run the engine argv directly on this host."""

    cwd: str | None = None


@dataclass(frozen=True)
class DockerRuntime:
    """Run the engine inside a container; the image is pinned so a rerun serves the same bits."""

    image: str
    mounts: tuple[tuple[str, str], ...] = ()
    extra_args: tuple[str, ...] = ()
    unpinned: str | None = None
    """Why the image runs by its tag (the recipe's ``engine.image-unpinned``)."""

    def __post_init__(self) -> None:
        if not pinned(self.image) and not self.unpinned:
            raise SpecError(
                f"docker image {self.image!r} is not pinned by digest: write it as "
                "'<name>:<tag>@sha256:<64 hex digits>' so every run serves the same engine"
            )


Runtime = LocalRuntime | DockerRuntime


def _frozen(values: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(values))


def server_name(label: str, key: str) -> str:
    """A server's name wherever it is shown (the plan, progress lines, log files, messages):
    its label, which a reader recognises, and the start of its key's digest, since one label
    can stand for two launch configurations."""
    return f"{label}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class ServerSpec:
    """Everything needed to start one server, as plain values.

    Equal `key`s mean the same server: the pool shares one process between every item whose
    launch configuration fingerprints to the same key.
    """

    key: str
    argv: tuple[str, ...]
    label: str
    env: Mapping[str, str] = field(default_factory=lambda: _frozen({}), hash=False)
    preferred_port: int = 8888
    host: str = "127.0.0.1"
    health_path: str = "/health"
    ready_statuses: frozenset[int] = frozenset({200})
    ready_timeout_s: float = 600.0
    gpus: int = 0
    runtime: Runtime = field(default_factory=LocalRuntime)
    gpu_vendor: Vendor = "nvidia"
    """Whose GPUs the server runs on, which names the variables that give it its lease."""
    files: Mapping[str, str] = field(default_factory=lambda: _frozen({}), hash=False)
    """File name -> text, written before the start into the folder argv names as
    ``{files}``."""

    @property
    def name(self) -> str:
        return server_name(self.label, self.key)

    def __post_init__(self) -> None:
        if not self.key:
            raise SpecError("server spec has an empty key: give every launch configuration a key")
        if not self.argv or not all(isinstance(a, str) for a in self.argv):
            raise SpecError(f"server {self.label!r}: argv must be a non-empty tuple of strings")
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", self.label):
            raise SpecError(
                f"server label {self.label!r} must be 1-64 characters of letters, digits, '.', "
                "'_' or '-' (it names log files)"
            )
        if not 0 < self.preferred_port < 65536:
            raise SpecError(
                f"server {self.label!r}: preferred_port {self.preferred_port} is not 1..65535"
            )
        if not self.health_path.startswith("/"):
            raise SpecError(
                f"server {self.label!r}: health_path {self.health_path!r} must start with '/'"
            )
        if self.ready_timeout_s <= 0:
            raise SpecError(f"server {self.label!r}: ready_timeout_s must be positive")
        if self.gpus < 0:
            raise SpecError(f"server {self.label!r}: gpus must be 0 or more, got {self.gpus}")
        for name in self.files:
            if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name) or name.startswith("."):
                raise SpecError(
                    f"server {self.label!r}: file name {name!r} must be 1-64 letters, digits,"
                    " '.', '_' or '-', not starting with '.'"
                )
        object.__setattr__(self, "env", _frozen(self.env))
        object.__setattr__(self, "files", _frozen(self.files))
        object.__setattr__(self, "ready_statuses", frozenset(self.ready_statuses))

    def engine_argv(self, port: int, files_dir: str = FILES_TOKEN) -> tuple[str, ...]:
        """The argv with the chosen port and the folder of its files substituted, before any
        runtime wrapping."""
        return tuple(
            a.replace(PORT_TOKEN, str(port)).replace(FILES_TOKEN, files_dir) for a in self.argv
        )

    def command(
        self,
        *,
        port: int,
        gpu_ids: tuple[int, ...],
        container_name: str,
        files_dir: str | None = None,
    ) -> tuple[tuple[str, ...], dict[str, str]]:
        """The final argv and the environment additions for the launched process.

        Local runs pass the environment through the process; docker runs pass it with `-e`
        because the container does not inherit the client's environment, and see the folder of
        the server's files under the same path.
        """
        if self.files and files_dir is None:
            raise SpecError(f"server {self.label!r} has files: give the folder they are in")
        inner = self.engine_argv(port, files_dir or FILES_TOKEN)
        env = dict(self.env)
        runtime = self.runtime
        if isinstance(runtime, LocalRuntime):
            if self.gpus:
                env.update(visible_devices(self.gpu_vendor, gpu_ids))
            return inner, env
        argv: list[str] = ["docker", "run", "--rm", "--init", "--name", container_name]
        argv += ["--network", "host", "--ipc", "host"]
        if self.gpus and self.gpu_vendor == "amd":
            argv += ["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video"]
            env.update(visible_devices(self.gpu_vendor, gpu_ids))
        elif self.gpus:
            argv += ["--gpus", '"device=' + ",".join(str(i) for i in gpu_ids) + '"']
        mounts = [*runtime.mounts, *([(files_dir, files_dir)] if self.files and files_dir else [])]
        for src, dst in mounts:
            argv += ["-v", f"{src}:{dst}"]
        for name in sorted(env):
            argv += ["-e", f"{name}={env[name]}"]
        argv += list(runtime.extra_args)
        argv.append(runtime.image)
        argv += inner
        return tuple(argv), {}

    def cleanup_argv(self, container_name: str) -> tuple[str, ...]:
        """What removes the server if its client process is gone (a killed docker client leaves
        the container running)."""
        if isinstance(self.runtime, DockerRuntime):
            return ("docker", "rm", "--force", container_name)
        return ()
