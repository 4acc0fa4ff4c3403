from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_infx.launch.gpus import (
    GpuInfo,
    GpuLeaser,
    GpuLeaseTimeout,
    amd_firmware_env,
    detect_gpus,
    used_memory,
    wait_clean,
)

HOLDER = """
import sys, time
from pathlib import Path
from pytest_infx.launch.gpus import GpuLeaser
leaser = GpuLeaser(Path(sys.argv[1]), 8)
lease = leaser.lease(4, time.monotonic() + float(sys.argv[2]))
print(lease.cuda_visible_devices, flush=True)
time.sleep(120)
"""


@pytest.fixture
def holders(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _hold(lock_dir: Path, holders: list[subprocess.Popen[str]], wait_s: float = 10) -> str:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_dir), str(wait_s)],
        stdout=subprocess.PIPE,
        text=True,
    )
    holders.append(proc)
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def test_two_holders_get_disjoint_sets_and_a_third_times_out(
    tmp_path: Path, holders: list[subprocess.Popen[str]]
) -> None:
    first = _hold(tmp_path, holders)
    second = _hold(tmp_path, holders)
    assert {first, second} == {"0,1,2,3", "4,5,6,7"}
    leaser = GpuLeaser(tmp_path, 8, poll_s=0.05)
    assert leaser.busy() == list(range(8))
    started = time.monotonic()
    with pytest.raises(
        GpuLeaseTimeout,
        match=r"no 4 contiguous free GPUs of 8 after .* \(busy now: 0,1,2,3,4,5,6,7\)",
    ):
        leaser.lease(4, time.monotonic() + 0.5)
    assert time.monotonic() - started >= 0.5, "the lease gave up before its deadline"


def test_sigkilled_holder_frees_its_lease(
    tmp_path: Path, holders: list[subprocess.Popen[str]]
) -> None:
    first = _hold(tmp_path, holders)
    _hold(tmp_path, holders)
    victim = holders[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    with GpuLeaser(tmp_path, 8).lease(4, time.monotonic() + 5) as lease:
        assert lease.cuda_visible_devices == first


def test_a_waiting_lease_gets_the_set_when_it_is_freed(
    tmp_path: Path, holders: list[subprocess.Popen[str]]
) -> None:
    leaser = GpuLeaser(tmp_path, 8, poll_s=0.05)
    mine = leaser.lease(8, time.monotonic() + 1)
    waiter = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), "20"], stdout=subprocess.PIPE, text=True
    )
    holders.append(waiter)
    time.sleep(0.5)
    assert waiter.poll() is None
    mine.release()
    assert waiter.stdout is not None
    assert waiter.stdout.readline().strip() == "0,1,2,3"


def test_leases_within_one_process_do_not_overlap(tmp_path: Path) -> None:
    leaser = GpuLeaser(tmp_path, 8)
    deadline = time.monotonic() + 1
    a = leaser.lease(2, deadline)
    b = leaser.lease(4, deadline)
    c = leaser.lease(2, deadline)
    assert (a.ids, b.ids, c.ids) == ((0, 1), (4, 5, 6, 7), (2, 3))
    with pytest.raises(GpuLeaseTimeout):
        leaser.lease(1, time.monotonic() + 0.2)
    b.release()
    assert leaser.lease(3, deadline).ids == (4, 5, 6)
    assert leaser.lease(0, deadline).ids == ()


def test_more_gpus_than_the_machine_has_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(GpuLeaseTimeout, match="this machine has 8"):
        GpuLeaser(tmp_path, 8).lease(16, time.monotonic() + 100)


def test_detect_gpus_reads_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text(
        '#!/bin/sh\necho "0, NVIDIA H200, 143771 MiB"\necho "1, NVIDIA H200, 143771 MiB"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert detect_gpus() == (
        GpuInfo(index=0, name="NVIDIA H200", memory_mib=143771),
        GpuInfo(index=1, name="NVIDIA H200", memory_mib=143771),
    )
    assert len(detect_gpus(override=8)) == 8
    assert detect_gpus(override=0) == ()


def test_missing_or_failing_nvidia_smi_means_no_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_gpus() == ()
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    assert detect_gpus(nvidia_smi=str(fake)) == ()


AMD_LIST = [
    {"gpu": i, "bdf": f"0000:{0x0C + i:02x}:00.0", "uuid": f"a5ff74a1-0000-1000-80b2-{i:012d}",
     "kfd_id": 45412 + i, "node_id": 2 + i, "partition_id": 0}
    for i in range(8)
]  # fmt: skip
AMD_STATIC = {
    "gpu_data": [
        {"gpu": i, "asic": {"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002",
                            "device_id": "0x74a1", "target_graphics_version": "gfx942"},
         "vram": {"type": "HBM", "vendor": "N/A", "size": {"value": 196592, "unit": "MB"}}}
        for i in range(8)
    ]
}  # fmt: skip


def fake_amd_smi(folder: Path) -> Path:
    """An ``amd-smi`` printing the JSON of ``list`` and ``static`` as amd-smi does."""
    import json

    (folder / "list.json").write_text(json.dumps(AMD_LIST))
    (folder / "static.json").write_text(json.dumps(AMD_STATIC))
    fake = folder / "amd-smi"
    fake.write_text(
        f'#!/bin/sh\ncase "$1" in\n  list) exec /bin/cat {folder}/list.json ;;\n'
        f"  static) exec /bin/cat {folder}/static.json ;;\n  *) exit 2 ;;\nesac\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake


def test_without_nvidia_smi_amd_gpus_are_read_from_amd_smi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_amd_smi(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    found = detect_gpus()
    assert [g.index for g in found] == list(range(8))
    assert found[0] == GpuInfo(index=0, name="AMD Instinct MI300X", memory_mib=196592, vendor="amd")
    from pytest_infx.hardware import default_runner

    assert default_runner() == "mi300x"


def test_an_amd_smi_that_fails_or_prints_no_json_means_no_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    fake = tmp_path / "amd-smi"
    fake.write_text("#!/bin/sh\necho 'amdsmi could not initialize' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    assert detect_gpus() == ()
    fake.write_text("#!/bin/sh\necho not json\n")
    assert detect_gpus() == ()


AMD_HOLDER = """
import sys, time
from pathlib import Path
from pytest_infx.launch.gpus import GpuLeaser, detect_gpus, visible_devices
gpus = detect_gpus()
leaser = GpuLeaser(Path(sys.argv[1]), len(gpus), devices=tuple(g.index for g in gpus))
lease = leaser.lease(4, time.monotonic() + 10)
print(visible_devices(gpus[0].vendor, lease.ids)["ROCR_VISIBLE_DEVICES"], flush=True)
time.sleep(120)
"""


def test_two_servers_on_amd_gpus_get_disjoint_devices(
    tmp_path: Path, holders: list[subprocess.Popen[str]]
) -> None:
    fake_amd_smi(tmp_path)
    env = {**os.environ, "PATH": str(tmp_path)}
    seen = []
    for _ in range(2):
        proc = subprocess.Popen(
            [sys.executable, "-c", AMD_HOLDER, str(tmp_path / "locks")],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        holders.append(proc)
        assert proc.stdout is not None
        seen.append(proc.stdout.readline().strip())
    first, second = ({int(i) for i in line.split(",")} for line in seen)
    assert len(first) == len(second) == 4 and first.isdisjoint(second)


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_used_memory_is_read_from_nvidia_smi_for_the_leased_gpus(tmp_path: Path) -> None:
    fake = _script(
        tmp_path / "nvidia-smi", '#!/bin/sh\necho "0, 3"\necho "1, 40213"\necho "2, 0"\n'
    )
    assert used_memory("nvidia", (1, 2), nvidia_smi=str(fake)) == {1: 40213, 2: 0}
    assert used_memory("nvidia", (3,), nvidia_smi=str(fake)) is None
    assert used_memory("nvidia", (0,), nvidia_smi=str(tmp_path / "absent")) is None


def test_used_memory_is_read_from_amd_smi_metric(tmp_path: Path) -> None:
    import json

    rows = {
        "gpu_data": [
            {"gpu": i, "mem_usage": {"total_vram": {"value": 196592, "unit": "MB"},
                                     "used_vram": {"value": 283 if i else 180000, "unit": "MB"}}}
            for i in range(4)
        ]
    }  # fmt: skip
    (tmp_path / "metric.json").write_text(json.dumps(rows))
    fake = _script(
        tmp_path / "amd-smi",
        '#!/bin/sh\n[ "$1 $2 $3" = "metric --mem-usage --json" ]'
        f" && exec cat {tmp_path}/metric.json\nexit 2\n",
    )
    assert used_memory("amd", (0, 1), amd_smi=str(fake)) == {0: 180000, 1: 283}


def test_wait_clean_waits_for_freed_memory_and_names_what_stays() -> None:
    readings = iter([{0: 50000, 1: 10}, {0: 20000, 1: 10}, {0: 12, 1: 10}])
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    clean = wait_clean(lambda: next(readings), timeout_s=60, clock=lambda: now[0], sleep=sleep)
    assert clean == {} and now[0] == 4.0
    stuck = wait_clean(lambda: {0: 50000, 1: 10}, timeout_s=10, clock=lambda: now[0], sleep=sleep)
    assert stuck == {0: 50000} and now[0] == 14.0
    assert wait_clean(lambda: None, timeout_s=10) == {}


def test_old_mec_firmware_turns_scratch_reclaim_off(tmp_path: Path) -> None:
    import json

    cards = {f"card{i}": {"MEC firmware version": str(v), "SDMA firmware version": "9"}
             for i, v in enumerate((177, 176))}  # fmt: skip
    (tmp_path / "fw.json").write_text(json.dumps(cards))
    fake = _script(
        tmp_path / "rocm-smi",
        f'#!/bin/sh\n[ "$1 $2" = "--showfw --json" ] && exec cat {tmp_path}/fw.json\nexit 2\n',
    )
    assert amd_firmware_env(str(fake)) == {"HSA_NO_SCRATCH_RECLAIM": "1"}
    cards["card1"]["MEC firmware version"] = "180"
    (tmp_path / "fw.json").write_text(json.dumps(cards))
    assert amd_firmware_env(str(fake)) == {}
    assert amd_firmware_env(str(tmp_path / "absent")) == {}
