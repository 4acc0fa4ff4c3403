"""Which runner type this machine is, when the user did not say ``--gpu``."""

from __future__ import annotations

import re

_RUNNER = re.compile(r"\b([a-z]{1,2}\d{2,4}[a-z]?)\b")


def runner_from_gpu_name(name: str) -> str | None:
    """``NVIDIA B300 SXM6 AC`` -> ``b300``; ``NVIDIA H200`` -> ``h200``."""
    lowered = name.lower().replace("nvidia", " ")
    match = _RUNNER.search(lowered)
    return match.group(1) if match else None


def default_runner() -> str:
    """``cpu`` when no NVIDIA GPU is visible, else the first GPU's type."""
    from pytest_infx.launch.gpus import detect_gpus

    gpus = detect_gpus()
    if not gpus:
        return "cpu"
    return runner_from_gpu_name(gpus[0].name) or "cpu"
