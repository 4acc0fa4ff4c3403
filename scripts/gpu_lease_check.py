"""Check GPU detection and leasing against a real ``nvidia-smi`` on a GPU node.

CI has no GPU, so the tests drive the leaser through a stand-in ``nvidia-smi``; this script is
what shows, on a real node, that the runner is named from the GPU, that a lease sets
``CUDA_VISIBLE_DEVICES``, that a held GPU is not leased twice and that a released one is leased
again. It needs only pytest-infx's launcher (filelock), not pytest or an engine.

Run: ``python scripts/gpu_lease_check.py``; exits 1 when a check fails.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from pytest_infx.hardware import default_runner
from pytest_infx.launch.gpus import GpuLeaser, GpuLeaseTimeout, detect_gpus


def main() -> int:
    gpus = detect_gpus()
    print("detected:", gpus)
    print("default runner:", default_runner())
    if not gpus:
        print("no NVIDIA GPU visible: nothing to lease")
        return 1
    leaser = GpuLeaser(Path(tempfile.mkdtemp(prefix="infx-gpu-check-")), len(gpus))
    everything = len(gpus)
    with leaser.lease(everything, time.monotonic() + 5) as held:
        print("leased CUDA_VISIBLE_DEVICES =", held.cuda_visible_devices)
        print("busy while held:", leaser.busy())
        started = time.monotonic()
        try:
            leaser.lease(1, time.monotonic() + 1.0)
        except GpuLeaseTimeout as exc:
            print(f"second lease timed out after {time.monotonic() - started:.1f} s: {exc}")
        else:
            print("second lease was granted while every GPU was held")
            return 1
    print("busy after release:", leaser.busy())
    with leaser.lease(1, time.monotonic() + 5) as again:
        print("leased again:", again.cuda_visible_devices)
    return 0


if __name__ == "__main__":
    sys.exit(main())
