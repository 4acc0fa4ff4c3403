"""GPU telemetry: the vendor tools read as they print, only the point's GPUs kept, a summary
whose power and energy follow from the samples, and a tool that fails ending the sampling with
the reason instead of failing anything."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_infx.launch.gpus import reading
from pytest_infx.launch.telemetry import (
    CSV_HEADER,
    GpuReading,
    Sampler,
    TelemetryError,
    amd_reader,
    nvidia_reader,
    summarize,
)

NVIDIA_QUERY = "--query-gpu=index,power.draw,temperature.gpu,utilization.gpu,memory.used"


def tool(folder: Path, name: str, script: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("283.45 W", 283.45),
        ("87 %", 87.0),
        (" 41", 41.0),
        ("[N/A]", None),
        ({"value": 512, "unit": "W"}, 512.0),
        ({"value": "N/A", "unit": "W"}, None),
        (True, None),
        ("nan", None),
    ],
)
def test_a_reading_is_the_number_before_its_unit(text: object, value: float | None) -> None:
    assert reading(text) == value


def test_nvidia_smi_is_read_for_the_point_s_gpus_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool(
        tmp_path,
        "nvidia-smi",
        f'[ "$1" = "{NVIDIA_QUERY}" ] || exit 3\n'
        'echo "0, 120.50 W, 35, 0 %, 1 MiB"\n'
        'echo "1, 690.12 W, 61, 98 %, 140321 MiB"\n'
        'echo "2, [N/A], 60, 97 %, 140321 MiB"\n',
    )
    on_path(monkeypatch, tmp_path)
    readings = nvidia_reader((1, 2))()
    assert readings == [
        GpuReading(1, 690.12, 61.0, 98.0, 140321.0),
        GpuReading(2, None, 60.0, 97.0, 140321.0),
    ]
    with pytest.raises(TelemetryError, match="nvidia-smi reported no GPU 5"):
        nvidia_reader((1, 5))()


def test_a_failing_nvidia_smi_is_a_telemetry_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool(tmp_path, "nvidia-smi", "echo 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    on_path(monkeypatch, tmp_path)
    with pytest.raises(TelemetryError, match="gave no reading"):
        nvidia_reader((0,))()


AMD_METRIC = [
    {
        "gpu": index,
        "power": {"socket_power": {"value": 600 + index, "unit": "W"}},
        "usage": {"gfx_activity": {"value": 90, "unit": "%"}},
        "temperature": {"edge": {"value": 50, "unit": "C"}, "hotspot": {"value": 70, "unit": "C"}},
        "mem_usage": {"used_vram": {"value": 180000, "unit": "MB"}},
    }
    for index in range(4)
]


def test_amd_smi_metric_is_read_for_the_point_s_gpus_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "metric.json").write_text(json.dumps(AMD_METRIC))
    tool(
        tmp_path,
        "amd-smi",
        f'[ "$1 $2 $3 $4 $5 $6" = "metric --power --usage --temperature --mem-usage --json" ]'
        f" || exit 2\nexec /bin/cat {tmp_path}/metric.json\n",
    )
    on_path(monkeypatch, tmp_path)
    assert amd_reader((2, 3))() == [
        GpuReading(2, 602.0, 70.0, 90.0, 180000.0),
        GpuReading(3, 603.0, 70.0, 90.0, 180000.0),
    ]


def test_without_amd_smi_there_is_no_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TelemetryError, match="amd-smi is not on PATH"):
        amd_reader((0,))()


def test_the_summary_sums_power_over_gpus_and_integrates_energy() -> None:
    samples = [
        (0.0, GpuReading(0, 100.0, 40.0, 50.0, 10.0)),
        (0.0, GpuReading(1, 100.0, 45.0, 70.0, 20.0)),
        (1.0, GpuReading(0, 200.0, 50.0, 90.0, 30.0)),
        (1.0, GpuReading(1, 200.0, 48.0, 90.0, 20.0)),
        (2.0, GpuReading(0, 300.0, 52.0, 90.0, 30.0)),
        (2.0, GpuReading(1, None, 47.0, 90.0, 20.0)),
    ]
    summary = summarize(samples, (0, 1), 2.5, None)
    assert summary.samples == 3
    assert (summary.mean_power_w, summary.peak_power_w) == (300.0, 400.0)
    assert summary.energy_j == pytest.approx(300.0), "(200 + 400) / 2 over one second"
    assert summary.mean_utilization_pct == pytest.approx(80.0)
    assert (summary.peak_temperature_c, summary.peak_memory_mib) == (52.0, 30.0)


class Ticks:
    """A clock that moves one second per reading, so a sampler's times are exact."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_sampler_reads_until_stopped_and_keeps_the_csv(tmp_path: Path) -> None:
    clock = Ticks()
    calls: list[float] = []

    def read() -> list[GpuReading]:
        calls.append(clock.now)
        clock.now += 1.0
        return [GpuReading(0, 100.0 * len(calls), 40.0, 90.0, 100.0)]

    sampler = Sampler(read, (0,), interval_s=0.01, clock=clock).start()
    deadline = time.monotonic() + 10
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    summary = sampler.stop()
    count = len(calls)
    assert count >= 3 and summary.samples == count and summary.error is None
    assert summary.peak_power_w == 100.0 * count
    rows = sampler.csv_text().splitlines()
    assert rows[0] == ",".join(CSV_HEADER)
    assert rows[1] == "0.000,0,100,40,90,100"
    assert len(rows) == count + 1


def test_a_tool_that_stops_answering_ends_the_sampling_with_the_reason() -> None:
    answers: Iterator[list[GpuReading]] = iter([[GpuReading(0, 50.0, None, None, None)]])

    def read() -> list[GpuReading]:
        for found in answers:
            return found
        raise TelemetryError("nvidia-smi --query-gpu=... gave no reading")

    sampler = Sampler(read, (0,), interval_s=0.01).start()
    deadline = time.monotonic() + 10
    while sampler.error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    summary = sampler.stop()
    assert summary.samples == 1 and summary.mean_power_w == 50.0
    assert summary.energy_j is None, "one instant holds no energy"
    assert summary.error == "nvidia-smi --query-gpu=... gave no reading"
