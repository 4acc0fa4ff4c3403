"""Engine server lifecycle: specs, guarded processes, ports, GPU leases, pool, staging."""

from __future__ import annotations

from pytest_infx.launch.gpus import GpuInfo, GpuLeaser, GpuLeaseTimeout, Lease, detect_gpus
from pytest_infx.launch.ports import PortChoice, PortHolder, choose_port, port_holder
from pytest_infx.launch.process import (
    RunningServer,
    ServerDiedError,
    ServerStartError,
    start_server,
)
from pytest_infx.launch.registry import Registry, sweep
from pytest_infx.launch.shared import ServerHandle, ServerPool
from pytest_infx.launch.spec import DockerRuntime, LocalRuntime, ServerSpec, SpecError

__all__ = [
    "DockerRuntime",
    "GpuInfo",
    "GpuLeaseTimeout",
    "GpuLeaser",
    "Lease",
    "LocalRuntime",
    "PortChoice",
    "PortHolder",
    "Registry",
    "RunningServer",
    "ServerDiedError",
    "ServerHandle",
    "ServerPool",
    "ServerSpec",
    "ServerStartError",
    "SpecError",
    "choose_port",
    "detect_gpus",
    "port_holder",
    "start_server",
    "sweep",
]
