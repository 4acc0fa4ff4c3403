from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal

from pytest_infx.files.locks import try_lock

log = logging.getLogger("pytest_infx.launch")


class GpuLeaseTimeout(TimeoutError):
    """No contiguous set of free GPUs became available before the deadline."""


Vendor = Literal["nvidia", "amd"]


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    memory_mib: int
    vendor: Vendor = "nvidia"


def visible_devices(vendor: Vendor, ids: tuple[int, ...]) -> dict[str, str]:
    """The variables that give a server the GPUs ``ids`` (the node's indices).

    NVIDIA: ``CUDA_VISIBLE_DEVICES``. ROCm filters in two steps: ``ROCR_VISIBLE_DEVICES``
    picks the node's devices, and ``HIP_VISIBLE_DEVICES`` indexes the devices that filter
    leaves (0 to n-1), which InferenceX's AMD scripts mirror by copying the one into the other
    where the job sees exactly its own GPUs. Both are set, so a variable inherited from the
    job (Slurm's gres sets ``ROCR_VISIBLE_DEVICES``) cannot widen or shift the lease.
    """
    if vendor == "amd":
        return {
            "ROCR_VISIBLE_DEVICES": ",".join(str(i) for i in ids),
            "HIP_VISIBLE_DEVICES": ",".join(str(i) for i in range(len(ids))),
        }
    return {"CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in ids)}


def reading(value: object) -> float | None:
    """What a GPU tool prints for one figure as a number: ``283.5``, ``283.5 W``, or amd-smi's
    ``{"value": 283.5, "unit": "W"}``; None for ``[N/A]`` and anything else that is not one."""
    if isinstance(value, dict):
        return reading(value.get("value"))
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    words = value.split()
    try:
        number = float(words[0]) if words else math.nan
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _whole(value: float | None) -> int | None:
    """A reading of MiB or a firmware version: a whole number, not negative."""
    return int(value) if value is not None and value >= 0 and value == int(value) else None


def _leading_int(text: str) -> int | None:
    """``283``, ``283 MiB`` or ``283 MB`` as 283; None for what is not a whole reading."""
    return _whole(reading(text))


def detect_gpus(
    *, override: int | None = None, nvidia_smi: str = "nvidia-smi", amd_smi: str = "amd-smi"
) -> tuple[GpuInfo, ...]:
    """The visible GPUs: NVIDIA's from nvidia-smi, else AMD's from amd-smi; `override` (a
    count from an option) replaces detection.

    A missing tool means no GPUs of its vendor. One that fails is logged and also means none,
    so a broken driver shows up as "no GPU" in the plan instead of as a crash at collection.
    """
    if override is not None:
        if override < 0:
            raise ValueError(f"GPU count override must be 0 or more, got {override}")
        return tuple(GpuInfo(index=i, name="override", memory_mib=0) for i in range(override))
    return _nvidia_gpus(nvidia_smi) or _amd_gpus(amd_smi)


def nvidia_rows(nvidia_smi: str, fields: str, *, otherwise: str) -> list[list[str]] | None:
    """``nvidia-smi --query-gpu=FIELDS`` as rows of stripped columns whose first is a GPU
    index; None when the tool is missing or fails (logged, saying what follows: ``otherwise``)."""
    exe = shutil.which(nvidia_smi)
    if exe is None:
        return None
    query = [exe, f"--query-gpu={fields}", "--format=csv,noheader"]
    try:
        out = subprocess.run(query, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("nvidia-smi could not run (%s); %s", exc, otherwise)
        return None
    if out.returncode != 0:
        log.warning(
            "nvidia-smi exited with %d (%s); %s", out.returncode, out.stderr.strip(), otherwise
        )
        return None
    rows = ([c.strip() for c in line.split(",")] for line in out.stdout.splitlines())
    return [cols for cols in rows if cols[0].isdigit()]


def _nvidia_gpus(nvidia_smi: str) -> tuple[GpuInfo, ...]:
    rows = nvidia_rows(nvidia_smi, "index,name,memory.total", otherwise="assuming no GPUs")
    return tuple(
        GpuInfo(index=int(cols[0]), name=cols[1], memory_mib=_leading_int(cols[2]) or 0)
        for cols in rows or ()
        if len(cols) >= 3
    )


def _amd_gpus(amd_smi: str) -> tuple[GpuInfo, ...]:
    """``amd-smi list --json`` for the indices, ``amd-smi static --asic --vram --json`` for the
    market names and memory; newer amd-smi releases wrap the rows in ``gpu_data``."""
    exe = shutil.which(amd_smi)
    if exe is None:
        return ()
    indices = [row["gpu"] for row in amd_rows([exe, "list", "--json"]) if _index(row)]
    if not indices:
        return ()
    static = {
        row["gpu"]: row
        for row in amd_rows([exe, "static", "--asic", "--vram", "--json"])
        if _index(row)
    }
    found = []
    for index in indices:
        assert isinstance(index, int)
        row = static.get(index, {})
        asic = _mapping(row.get("asic"))
        size = _mapping(_mapping(row.get("vram")).get("size"))
        value = size.get("value")
        name = str(asic.get("market_name") or "AMD GPU")
        memory = value if isinstance(value, int) else 0
        found.append(GpuInfo(index=index, name=name, memory_mib=memory, vendor="amd"))
    return tuple(found)


CLEAN_MIB = 1024
"""Memory in use (MiB) below which a leased GPU counts as clean: a driver's own allocations
stay under it, any model's weights are far above it."""


def used_memory(
    vendor: Vendor,
    ids: tuple[int, ...],
    *,
    nvidia_smi: str = "nvidia-smi",
    amd_smi: str = "amd-smi",
) -> dict[int, int] | None:
    """MiB in use on each of ``ids`` now, by ``nvidia-smi --query-gpu=index,memory.used`` or
    ``amd-smi metric --mem-usage --json`` (``used_vram``); None when the tool is missing or
    tells nothing, which is not a clean GPU but an unknown one."""
    wanted = set(ids)
    found: dict[int, int] = {}
    unknown = "the GPUs' memory in use is unknown"
    if vendor == "nvidia":
        rows = nvidia_rows(nvidia_smi, "index,memory.used", otherwise=unknown)
        if rows is None:
            return None
        for cols in rows:
            mib = _leading_int(cols[1]) if len(cols) >= 2 else None
            if mib is not None:
                found[int(cols[0])] = mib
    else:
        exe = shutil.which(amd_smi)
        if exe is None:
            return None
        for row in amd_rows([exe, "metric", "--mem-usage", "--json"], otherwise=unknown):
            mib = _whole(amd_metric(row, "mem_usage", ("used_vram",))) if _index(row) else None
            if mib is not None:
                found[int(str(row["gpu"]))] = mib
    picked = {index: mib for index, mib in found.items() if index in wanted}
    return picked if set(picked) == wanted else None


def wait_clean(
    read: Callable[[], dict[int, int] | None],
    *,
    timeout_s: float,
    limit_mib: int = CLEAN_MIB,
    poll_s: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[int, int]:
    """Wait until every leased GPU holds less than ``limit_mib``; the GPUs still above it when
    ``timeout_s`` has passed (empty when clean, or when the memory cannot be read).

    A server stopped to free its GPUs for the next one, or a foreign process, can hold GPU
    memory for seconds after its lease is gone; a server started on top of it runs out of
    memory at load or measures with less KV cache than it should.
    """
    deadline = clock() + timeout_s
    while True:
        usage = read()
        if usage is None:
            return {}
        dirty = {index: mib for index, mib in usage.items() if mib >= limit_mib}
        if not dirty or clock() >= deadline:
            return dirty
        sleep(min(poll_s, max(0.0, deadline - clock())))


MEC_SCRATCH_FIXED = 177
"""The first MEC firmware with which ROCm may reclaim scratch memory safely; before it,
InferenceX's AMD scripts set ``HSA_NO_SCRATCH_RECLAIM=1``."""


def amd_firmware_env(rocm_smi: str = "rocm-smi") -> dict[str, str]:
    """``HSA_NO_SCRATCH_RECLAIM=1`` when a GPU's MEC firmware (``rocm-smi --showfw --json``) is
    older than :data:`MEC_SCRATCH_FIXED`, as InferenceX's AMD scripts set it; nothing when the
    tool is missing or tells nothing."""
    exe = shutil.which(rocm_smi)
    if exe is None:
        return {}
    cards = _tool_json([exe, "--showfw", "--json"], otherwise="firmware settings left as they are")
    versions = [
        _leading_int(str(card.get("MEC firmware version", "")))
        for card in (cards.values() if isinstance(cards, dict) else ())
        if isinstance(card, dict)
    ]
    old = [v for v in versions if v is not None and v < MEC_SCRATCH_FIXED]
    return {"HSA_NO_SCRATCH_RECLAIM": "1"} if old else {}


def _index(row: dict[str, object]) -> bool:
    index = row.get("gpu")
    return isinstance(index, int) and not isinstance(index, bool)


def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _tool_json(argv: list[str], *, otherwise: str) -> object:
    """What a GPU tool prints with ``--json``; None when it fails (logged, saying what follows:
    ``otherwise``)."""
    tool = Path(argv[0]).name
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("%s could not run (%s); %s", tool, exc, otherwise)
        return None
    if out.returncode != 0:
        log.warning(
            "%s exited with %d (%s)", " ".join(argv[1:]), out.returncode, out.stderr.strip()
        )
        return None
    try:
        return json.loads(out.stdout)
    except ValueError:
        log.warning("%s printed no JSON; %s", " ".join(argv[1:]), otherwise)
        return None


def amd_rows(
    argv: list[str], *, otherwise: str = "assuming no AMD GPUs"
) -> list[dict[str, object]]:
    """The rows an amd-smi command prints as JSON; none when it fails (logged, saying what
    follows: ``otherwise``)."""
    data = _tool_json(argv, otherwise=otherwise)
    if isinstance(data, dict):
        data = data.get("gpu_data", [])
    return [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []


def amd_metric(row: dict[str, object], section: str, keys: tuple[str, ...]) -> float | None:
    """One figure of an ``amd-smi metric --json`` row: its section, then the first of ``keys``
    that is there (the names moved between amd-smi releases)."""
    block = _mapping(row.get(section))
    for key in keys:
        if key in block:
            return reading(block[key])
    return None


@dataclass
class Lease:
    """Kernel locks on a set of GPUs; closing the descriptors frees them.

    The locks are flock()s on open file descriptions, so a process started with `fds` in its
    pass_fds shares them: the GPUs then stay leased until that process (the engine's guard)
    is gone as well, whoever closes first, and the kernel frees them if every holder dies.
    """

    ids: tuple[int, ...]
    fds: tuple[int, ...] = ()
    _closed: bool = field(default=False, repr=False)

    @property
    def cuda_visible_devices(self) -> str:
        return ",".join(str(i) for i in self.ids)

    def release(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Lease:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class GpuLeaser:
    """Leases contiguous GPU sets with one kernel file lock per GPU, shared by xdist workers.

    Locks are descriptors (:func:`pytest_infx.files.locks.try_lock`), handed to the engine's
    guard so the lease lives exactly as long as the server, whichever worker stops it.
    """

    def __init__(
        self,
        lock_dir: Path,
        total: int,
        *,
        poll_s: float = 0.1,
        devices: tuple[int, ...] | None = None,
    ) -> None:
        """`devices` are the GPU indices to lease (default 0..total-1); a Slurm job passes the
        node's indices it was given, so the engine's CUDA_VISIBLE_DEVICES names those."""
        self.lock_dir = Path(lock_dir)
        self.devices = devices if devices is not None else tuple(range(total))
        self.total = len(self.devices)
        self.poll_s = poll_s

    def _candidates(self, count: int) -> list[tuple[int, ...]]:
        starts = list(range(0, self.total - count + 1))
        aligned = [s for s in starts if s % count == 0]
        ordered = aligned + [s for s in starts if s % count != 0]
        return [self.devices[s : s + count] for s in ordered]

    def _try_lock(self, index: int) -> int | None:
        return try_lock(self.lock_dir / f"gpu{index}.lock")

    def _try_set(self, ids: tuple[int, ...]) -> tuple[int, ...] | None:
        held: list[int] = []
        for index in ids:
            fd = self._try_lock(index)
            if fd is None:
                for h in held:
                    os.close(h)
                return None
            held.append(fd)
        return tuple(held)

    def busy(self) -> list[int]:
        """GPU indices whose lock is held right now (by anyone, including this process)."""
        found = []
        for index in self.devices:
            fd = self._try_lock(index)
            if fd is None:
                found.append(index)
            else:
                os.close(fd)
        return found

    def lease(self, count: int, deadline: float, *, since: float | None = None) -> Lease:
        """Lease `count` contiguous GPUs, waiting until `deadline` (a time.monotonic() value);
        `since` is when the caller began waiting, for the message, if it waits in steps."""
        if count == 0:
            return Lease(ids=())
        if count < 0 or count > self.total:
            raise GpuLeaseTimeout(
                f"cannot lease {count} GPUs: this machine has {self.total} "
                "(check the recipe's TP, or the GPU count option)"
            )
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic() if since is None else since
        while True:
            for ids in self._candidates(count):
                fds = self._try_set(ids)
                if fds is not None:
                    return Lease(ids=ids, fds=fds)
            now = time.monotonic()
            if now >= deadline:
                busy = ",".join(str(i) for i in self.busy()) or "none"
                raise GpuLeaseTimeout(
                    f"no {count} contiguous free GPUs of {self.total} after {now - started:.1f} s "
                    f"(busy now: {busy}); other items hold them - raise the lease timeout or run "
                    "fewer workers"
                )
            time.sleep(min(self.poll_s, max(0.0, deadline - now)))
