"""Which runner type this machine is, when the user did not say ``--gpu``."""

from __future__ import annotations

import re
import shutil
import subprocess

_RUNNER = re.compile(r"\b([a-z]{1,2}\d{2,4}[a-z]?)\b")


def runner_from_gpu_name(name: str) -> str | None:
    """``NVIDIA B300 SXM6 AC`` -> ``b300``; ``NVIDIA H200`` -> ``h200``."""
    lowered = name.lower().replace("nvidia", " ")
    match = _RUNNER.search(lowered)
    return match.group(1) if match else None


def visible_gpu_names() -> list[str]:
    """Names from ``nvidia-smi``; none when it is missing or fails (no GPU visible)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def default_runner() -> str:
    names = visible_gpu_names()
    if not names:
        return "cpu"
    return runner_from_gpu_name(names[0]) or "cpu"
