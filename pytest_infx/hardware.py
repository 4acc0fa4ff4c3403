"""Which runner type this machine is, when the user did not say ``--gpu``."""

from __future__ import annotations

import difflib
import re

from pytest_infx.launch.gpus import Vendor as Vendor
from pytest_infx.launch.gpus import detect_gpus

RUNNERS = (
    "cpu",
    "h100",
    "h200",
    "b200",
    "b300",
    "gb200",
    "gb300",
    "mi300x",
    "mi325x",
    "mi355x",
    "rtx6000pro",
)
"""The runner types: InferenceX's (its ``configs/runners.yaml`` labels without their site
suffixes) and ``cpu``. A recipe or ``--gpu`` naming another is a typo that would otherwise
select nothing, silently; new hardware is added here."""


AMD_RUNNERS = ("mi300x", "mi325x", "mi355x")


def gpu_vendor(runner: str) -> Vendor:
    """Whose GPUs a runner type has; ``cpu`` leases none, so its answer is never used."""
    return "amd" if gpu_type(runner) in AMD_RUNNERS else "nvidia"


def gpu_type(runner: str) -> str:
    """The GPU type of a runner name, as InferenceX groups them: ``cluster:b300-nv`` and
    ``b300-nv_2`` are both ``b300``; a config found on two machines of one type is one config."""
    name = runner.removeprefix("cluster:")
    return name.split("-", 1)[0].split("_", 1)[0]


def unknown_runner(name: str) -> str | None:
    """Why ``name`` is no runner type (with the close ones), or ``None`` when it is one."""
    if name in RUNNERS:
        return None
    close = difflib.get_close_matches(name, RUNNERS, n=2)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return f"no runner type {name!r}; {hint}runners: {', '.join(RUNNERS)}"


_RUNNER = re.compile(r"\b([a-z]{1,2}\d{2,4}[a-z]?)\b")


def runner_from_gpu_name(name: str) -> str | None:
    """``NVIDIA B300 SXM6 AC`` -> ``b300``; ``NVIDIA H200`` -> ``h200``; ``AMD Instinct
    MI300X`` -> ``mi300x``."""
    lowered = name.lower().replace("nvidia", " ")
    match = _RUNNER.search(lowered)
    return match.group(1) if match else None


def default_runner() -> str:
    """``cpu`` when no NVIDIA or AMD GPU is visible, else the first GPU's type."""
    gpus = detect_gpus()
    if not gpus:
        return "cpu"
    return runner_from_gpu_name(gpus[0].name) or "cpu"
