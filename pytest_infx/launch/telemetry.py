"""GPU power, temperature, utilisation and memory, sampled while a point measures, as
InferenceX's scripts record them beside every benchmark (``nvidia-smi``'s CSV query on NVIDIA,
``amd-smi metric`` on AMD): a point's record then carries its GPUs' mean power and energy, so
two recipes that differ only in a power setting can be compared.

Sampling runs in a thread, one vendor tool call per interval, on the GPUs the point's server
leased. A tool that is missing or stops answering ends the sampling, and the summary says why:
telemetry never fails a point, whose figures do not depend on it.
"""

from __future__ import annotations

import csv
import io
import itertools
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_infx.launch.gpus import Vendor, amd_metric, amd_rows, nvidia_rows, reading

INTERVAL_S = 1.0
NVIDIA_FIELDS = "index,power.draw,temperature.gpu,utilization.gpu,memory.used"
CSV_HEADER = ("time_s", "gpu", "power_w", "temperature_c", "utilization_pct", "memory_used_mib")
AMD_KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "power_w": ("power", ("socket_power", "current_socket_power", "average_socket_power")),
    "temperature_c": ("temperature", ("hotspot", "edge")),
    "utilization_pct": ("usage", ("gfx_activity",)),
    "memory_mib": ("mem_usage", ("used_vram",)),
}
"""Where ``amd-smi metric --json`` keeps each reading: its section and the names of its field
(:func:`pytest_infx.launch.gpus.amd_metric`)."""


class TelemetryError(RuntimeError):
    """The vendor tool gave no reading of the point's GPUs; the message says which and why."""


@dataclass(frozen=True, slots=True)
class GpuReading:
    """One GPU at one instant; a figure the tool did not report is None."""

    index: int
    power_w: float | None
    temperature_c: float | None
    utilization_pct: float | None
    memory_mib: float | None


Reader = Callable[[], Sequence[GpuReading]]


def nvidia_reader(ids: tuple[int, ...], nvidia_smi: str = "nvidia-smi") -> Reader:
    def read() -> list[GpuReading]:
        rows = nvidia_rows(nvidia_smi, NVIDIA_FIELDS, otherwise="GPU telemetry stops")
        if rows is None:
            raise TelemetryError(f"{nvidia_smi} --query-gpu={NVIDIA_FIELDS} gave no reading")
        found = [
            GpuReading(int(cols[0]), *(reading(c) for c in cols[1:5]))
            for cols in rows
            if len(cols) >= 5
        ]
        return _only(found, ids, nvidia_smi)

    return read


def amd_reader(ids: tuple[int, ...], amd_smi: str = "amd-smi") -> Reader:
    def read() -> list[GpuReading]:
        exe = shutil.which(amd_smi)
        if exe is None:
            raise TelemetryError(f"{amd_smi} is not on PATH")
        argv = [exe, "metric", "--power", "--usage", "--temperature", "--mem-usage", "--json"]
        found = []
        for row in amd_rows(argv, otherwise="GPU telemetry stops"):
            index = row.get("gpu")
            if not isinstance(index, int) or isinstance(index, bool):
                continue
            values = {
                name: amd_metric(row, section, keys) for name, (section, keys) in AMD_KEYS.items()
            }
            found.append(GpuReading(index, **values))
        return _only(found, ids, amd_smi)

    return read


def reader_for(vendor: Vendor, ids: tuple[int, ...]) -> Reader:
    return nvidia_reader(ids) if vendor == "nvidia" else amd_reader(ids)


def _only(found: list[GpuReading], ids: tuple[int, ...], tool: str) -> list[GpuReading]:
    picked = [gpu for gpu in found if gpu.index in ids]
    missing = sorted(set(ids) - {gpu.index for gpu in picked})
    if missing:
        shown = ", ".join(str(i) for i in missing)
        raise TelemetryError(f"{tool} reported no GPU {shown}")
    return sorted(picked, key=lambda gpu: gpu.index)


@dataclass(frozen=True, slots=True)
class Summary:
    """What a point's record keeps of its samples; power is the sum over its GPUs."""

    gpus: tuple[int, ...]
    samples: int
    seconds: float
    mean_power_w: float | None
    peak_power_w: float | None
    energy_j: float | None
    mean_utilization_pct: float | None
    peak_temperature_c: float | None
    peak_memory_mib: float | None
    error: str | None


@dataclass
class Sampler:
    """Reads the GPUs every ``interval_s`` from ``start()`` to ``stop()``."""

    read: Reader
    gpus: tuple[int, ...]
    interval_s: float = INTERVAL_S
    clock: Callable[[], float] = time.monotonic
    samples: list[tuple[float, GpuReading]] = field(default_factory=list)
    error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _started: float = 0.0
    _seconds: float = 0.0

    def start(self) -> Sampler:
        self._started = self.clock()
        self._thread = threading.Thread(target=self._loop, name="infx-gpu-telemetry", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while True:
            at = self.clock() - self._started
            try:
                readings = self.read()
            except TelemetryError as exc:
                self.error = str(exc)
                return
            self.samples.extend((at, gpu) for gpu in readings)
            if self._stop.wait(self.interval_s):
                return

    def stop(self) -> Summary:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._seconds = self.clock() - self._started
        return self.summary()

    def summary(self) -> Summary:
        """The samples taken from start to stop, summed up."""
        return summarize(self.samples, self.gpus, self._seconds, self.error)

    def csv_text(self) -> str:
        """Every sample, a row per GPU and instant, in the units of the header."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_HEADER)
        for at, r in self.samples:
            writer.writerow(
                [f"{at:.3f}", r.index] + ["" if v is None else f"{v:g}" for v in _figures(r)]
            )
        return out.getvalue()


def _figures(r: GpuReading) -> tuple[float | None, ...]:
    return (r.power_w, r.temperature_c, r.utilization_pct, r.memory_mib)


def summarize(
    samples: Sequence[tuple[float, GpuReading]],
    gpus: tuple[int, ...],
    seconds: float,
    error: str | None,
) -> Summary:
    """Mean and peak of the summed power over the instants every GPU reported it, and the
    energy as its integral over the sampled time (trapezoids between instants)."""
    instants: dict[float, list[GpuReading]] = {}
    for at, sample in samples:
        instants.setdefault(at, []).append(sample)
    power = [
        (at, sum(r.power_w for r in rows if r.power_w is not None))
        for at, rows in sorted(instants.items())
        if len(rows) == len(gpus) and all(r.power_w is not None for r in rows)
    ]
    energy = (
        sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in itertools.pairwise(power))
        if len(power) > 1
        else None
    )
    utilization = [r.utilization_pct for _, r in samples if r.utilization_pct is not None]
    temperature = [r.temperature_c for _, r in samples if r.temperature_c is not None]
    memory = [r.memory_mib for _, r in samples if r.memory_mib is not None]
    return Summary(
        gpus=gpus,
        samples=len(instants),
        seconds=seconds,
        mean_power_w=sum(p for _, p in power) / len(power) if power else None,
        peak_power_w=max((p for _, p in power), default=None),
        energy_j=energy,
        mean_utilization_pct=sum(utilization) / len(utilization) if utilization else None,
        peak_temperature_c=max(temperature, default=None),
        peak_memory_mib=max(memory, default=None),
        error=error,
    )
