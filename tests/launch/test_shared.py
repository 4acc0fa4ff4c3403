from __future__ import annotations

import json
import os
import signal
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import Timeout

from pytest_infx.launch.gpus import GpuLeaser
from pytest_infx.launch.ports import free_port
from pytest_infx.launch.process import ServerDiedError, ServerStartError, probe
from pytest_infx.launch.procfs import group_members, is_alive
from pytest_infx.launch.registry import Registry
from pytest_infx.launch.shared import ServerPool
from pytest_infx.launch.spec import ServerSpec, server_name
from pytest_infx.results.layout import Layout

from .conftest import STANDIN, read_records, wait_until

MakeSpec = Callable[..., ServerSpec]


@pytest.fixture
def pool(tmp_path: Path, registry: Registry) -> ServerPool:
    leaser = GpuLeaser(tmp_path / "gpus", 8)
    return ServerPool(tmp_path / "state", registry, Layout(tmp_path).server_log, leaser, grace_s=5)


def test_one_server_per_key_and_the_last_release_stops_it(
    pool: ServerPool, make_spec: MakeSpec, records: Path
) -> None:
    spec = make_spec(key="cfg-a")
    first = pool.acquire(spec)
    second = pool.acquire(spec)
    assert first == second
    assert len(read_records(records)) == 1
    assert probe("127.0.0.1", first.port, "/health", timeout=2) == 200
    pool.release("cfg-a")
    assert is_alive(first.pid)
    pool.release("cfg-a")
    assert not group_members(first.pgid)
    state = json.loads(next((pool.state_dir).glob("*.json")).read_text())
    assert state["status"] == "stopped" and state["users"] == 0


def test_failed_start_is_remembered_and_fails_fast(
    pool: ServerPool, make_spec: MakeSpec, records: Path
) -> None:
    spec = make_spec("--die-during-startup", "--start-delay", "0.5", key="broken")
    with pytest.raises(ServerStartError) as first:
        pool.acquire(spec)
    with pytest.raises(ServerStartError) as again:
        pool.acquire(spec)
    assert str(first.value) in str(again.value)
    assert "simulated start-up failure" in str(again.value)
    assert "not retried" in str(again.value)
    assert len(read_records(records)) == 1


def test_dead_server_is_detected_and_restarted(
    pool: ServerPool, make_spec: MakeSpec, records: Path
) -> None:
    spec = make_spec(key="crashy")
    old = pool.acquire(spec)
    os.killpg(old.pgid, signal.SIGKILL)
    assert wait_until(lambda: not is_alive(old.pid))
    with pytest.raises(ServerDiedError, match="was killed by SIGKILL while in use"):
        pool.check(old)
    new = pool.acquire(spec)
    assert new.generation == old.generation + 1 and new.pid != old.pid
    pool.check(new)
    assert len(read_records(records)) == 2
    pool.release("crashy")
    pool.release("crashy")
    assert not group_members(new.pgid)


def test_gpu_lease_lives_with_the_server(
    pool: ServerPool, make_spec: MakeSpec, tmp_path: Path
) -> None:
    leaser = GpuLeaser(tmp_path / "gpus", 8)
    first = pool.acquire(make_spec(key="tp4-a", gpus=4))
    second = pool.acquire(make_spec(key="tp4-b", gpus=4))
    assert (first.gpu_ids, second.gpu_ids) == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert leaser.busy() == list(range(8))
    pool.release("tp4-a")
    assert leaser.busy() == [4, 5, 6, 7]
    pool.close()
    assert leaser.busy() == []


def test_a_start_waits_for_its_gpus_memory_and_fails_naming_a_gpu_that_stays_dirty(
    tmp_path: Path, registry: Registry, make_spec: MakeSpec
) -> None:
    asked: list[tuple[str, tuple[int, ...]]] = []
    freed = {"after": 2}

    def memory(vendor: str, ids: tuple[int, ...]) -> dict[int, int]:
        asked.append((vendor, ids))
        freed["after"] -= 1
        return {i: 30000 if freed["after"] > 0 and i == ids[0] else 5 for i in ids}

    leaser = GpuLeaser(tmp_path / "gpus", 4)
    log_of = Layout(tmp_path).server_log
    pool = ServerPool(tmp_path / "state", registry, log_of, leaser, grace_s=5, gpu_memory=memory)
    handle = pool.acquire(make_spec(key="clean", gpus=2))
    assert handle.gpu_ids == (0, 1) and asked[-1] == ("nvidia", (0, 1)) and len(asked) == 2
    pool.close()
    stuck = ServerPool(
        tmp_path / "state2",
        registry,
        log_of,
        leaser,
        grace_s=5,
        gpu_memory=lambda vendor, ids: {ids[0]: 30000},
        clean_wait_s=0.1,
    )
    with pytest.raises(ServerStartError, match=r"still hold memory after 0 s \(GPU 0: 30000 MiB\)"):
        stuck.acquire(make_spec(key="dirty", gpus=1))
    stuck.close()
    assert leaser.busy() == []


def test_servers_on_amd_gpus_get_the_machine_s_firmware_settings_under_their_own(
    tmp_path: Path, registry: Registry, make_spec: MakeSpec, records: Path
) -> None:
    from dataclasses import replace

    leaser = GpuLeaser(tmp_path / "gpus", 4)
    amd = {"HSA_NO_SCRATCH_RECLAIM": "1", "OTHER": "x"}
    log_of = Layout(tmp_path).server_log
    pool = ServerPool(tmp_path / "state", registry, log_of, leaser, grace_s=5, amd_env=amd)
    names = ("--record-env", "HSA_NO_SCRATCH_RECLAIM", "--record-env", "OTHER")
    try:
        on_amd = make_spec(*names, key="amd", gpus=1)
        pool.acquire(replace(on_amd, gpu_vendor="amd", env={"OTHER": "mine"}))
        pool.acquire(make_spec(*names, key="nvidia", gpus=1))
        envs = [record["env"] for record in read_records(records)]
    finally:
        pool.close()
    assert envs == [
        {"HSA_NO_SCRATCH_RECLAIM": "1", "OTHER": "mine"},
        {"HSA_NO_SCRATCH_RECLAIM": None, "OTHER": None},
    ]


def test_an_idle_server_kept_for_expected_uses_gives_its_gpus_to_a_start(
    pool: ServerPool,
    make_spec: MakeSpec,
    records: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Uses that never come (a replacement Slurm job counts those of its dead predecessor)
    must not keep the GPUs from the next server: the start would otherwise wait an hour."""
    pool.lease_timeout_s = 60.0
    leaser = GpuLeaser(tmp_path / "gpus", 8)
    pool.expect("tp8-a", 3)
    kept = pool.acquire(make_spec(key="tp8-a", gpus=8))
    pool.release("tp8-a")
    assert is_alive(kept.pid)
    other = pool.acquire(make_spec(key="tp8-b", gpus=8))
    assert not group_members(kept.pgid)
    assert other.gpu_ids == tuple(range(8))
    assert f"stopping idle server '{server_name('standin', 'tp8-a')}' (GPUs 0,1,2,3,4,5,6,7)" in (
        caplog.text
    )
    pool.release("tp8-b")
    assert leaser.busy() == []
    again = pool.acquire(make_spec(key="tp8-a", gpus=8))
    assert again.generation == kept.generation + 1
    assert len(read_records(records)) == 3
    pool.close_wait_s = 0.0
    pool.close()
    assert not group_members(again.pgid)


def test_a_server_in_use_keeps_its_gpus(
    pool: ServerPool, make_spec: MakeSpec, tmp_path: Path
) -> None:
    pool.lease_timeout_s = 3.0
    busy = pool.acquire(make_spec(key="tp8-a", gpus=8))
    with pytest.raises(ServerStartError, match="no 8 contiguous free GPUs of 8 after 3"):
        pool.acquire(make_spec(key="tp8-b", gpus=8))
    assert is_alive(busy.pid)
    pool.close()


def test_one_measurement_at_a_time_per_server(pool: ServerPool, make_spec: MakeSpec) -> None:
    a = pool.acquire(make_spec(key="a"))
    b = pool.acquire(make_spec(key="b"))
    held = pool.measure_lock(a)
    held.acquire()
    with pytest.raises(Timeout):
        pool.measure_lock(a).acquire(blocking=False)
    other = pool.measure_lock(b)
    other.acquire(blocking=False)
    other.release()
    held.release()
    again = pool.measure_lock(a)
    again.acquire(blocking=False)
    again.release()
    pool.close()


def test_expected_uses_keep_the_server_between_items(
    pool: ServerPool, make_spec: MakeSpec, records: Path
) -> None:
    spec = make_spec(key="planned")
    pool.expect("planned", 2)
    handle = pool.acquire(spec)
    pool.release("planned")
    assert is_alive(handle.pid)
    assert pool.acquire(spec) == handle
    pool.release("planned")
    assert not group_members(handle.pgid)
    assert len(read_records(records)) == 1


def test_a_process_sets_its_expectations_while_another_starts_a_server(
    pool: ServerPool, make_spec: MakeSpec, registry: Registry, tmp_path: Path, records: Path
) -> None:
    """Two workers: the second must not wait for the first's start to begin its own."""
    first = ServerPool(pool.state_dir, registry, Layout(tmp_path).server_log, grace_s=5)
    first.expect("slow", 1)
    gate = tmp_path / "gate"
    slow = make_spec("--start-gate", str(gate), key="slow", ready_timeout_s=120)
    starting = threading.Thread(target=first.acquire, args=(slow,))
    starting.start()
    try:
        assert wait_until(lambda: len(read_records(records)) == 1, timeout=10)
        pool.expect("slow", 1)
        pool.expect("fast", 1)
        handle = pool.acquire(make_spec(key="fast"))
        assert starting.is_alive(), "the second start waited for the first to be ready"
        pool.release("fast")
        assert not group_members(handle.pgid)
    finally:
        gate.write_text("")
        starting.join(timeout=120)
    first.release("slow")


def test_close_stops_what_this_process_holds(pool: ServerPool, make_spec: MakeSpec) -> None:
    a = pool.acquire(make_spec(key="a"))
    b = pool.acquire(make_spec(key="b"))
    pool.acquire(make_spec(key="b"))
    pool.close()
    assert not group_members(a.pgid) and not group_members(b.pgid)
    with pytest.raises(KeyError, match="holds no server"):
        pool.release("a")


CONFTEST = """
import sys
from pathlib import Path

import pytest

from pytest_infx.launch.registry import Registry
from pytest_infx.launch.shared import ServerPool
from pytest_infx.launch.spec import ServerSpec
from pytest_infx.results.layout import Layout

RUN = Path(RUN_DIR)
PORTS = {"a": PORT_A, "b": PORT_B}


def spec_for(name):
    argv = (sys.executable, STANDIN, "--port", "{port}", "--start-delay", "0.3",
            "--record", str(RUN / "starts.jsonl"))
    return ServerSpec(key=name, label=name, argv=argv, preferred_port=PORTS[name],
                      ready_timeout_s=60)


@pytest.fixture(scope="session")
def pool(request):
    registry = Registry(RUN / "registry.jsonl")
    pool = ServerPool(RUN / "state", registry, Layout(RUN).server_log, grace_s=5)
    for name in PORTS:
        uses = [i for i in request.session.items if i.callspec.params.get("config") == name]
        pool.expect(name, len(uses))
    yield pool
    pool.close()


@pytest.fixture
def server(pool, config):
    handle = pool.acquire(spec_for(config))
    yield handle
    pool.release(config)
"""

ITEMS = """
import json, os, urllib.request

import pytest


@pytest.mark.parametrize("config", ["a", "b", "a", "b"], ids=["a1", "b1", "a2", "b2"])
def test_cell(server, config):
    with urllib.request.urlopen(server.base_url + "/v1/models", timeout=5) as resp:
        assert resp.status == 200
    with open(os.environ["INFX_USES"], "a") as f:
        f.write(json.dumps({"config": config, "pid": server.pid, "worker": os.getpid()}) + "\\n")
"""


def test_xdist_run_starts_one_server_per_configuration(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    conftest = (
        CONFTEST.replace("RUN_DIR", repr(str(run)))
        .replace("STANDIN", repr(str(STANDIN)))
        .replace("PORT_A", str(free_port("127.0.0.1")))
        .replace("PORT_B", str(free_port("127.0.0.1")))
    )
    pytester.makeconftest(textwrap.dedent(conftest))
    pytester.makepyfile(test_cells=ITEMS)
    monkeypatch.setenv("INFX_USES", str(tmp_path / "uses.jsonl"))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "xdist", "-p", "no:infx")
    result.assert_outcomes(passed=4)
    starts = read_records(run / "starts.jsonl")
    assert len(starts) == 2, starts
    uses = read_records(tmp_path / "uses.jsonl")
    assert len(uses) == 4
    by_config: dict[str, set[object]] = {}
    for use in uses:
        by_config.setdefault(str(use["config"]), set()).add(use["pid"])
    assert sorted(by_config) == ["a", "b"]
    assert all(len(pids) == 1 for pids in by_config.values())
    engines = [int(s["pid"]) for s in starts]  # type: ignore[call-overload]
    assert wait_until(lambda: not any(is_alive(p) for p in engines))
    registry = Registry(run / "registry.jsonl")
    assert len(registry.entries()) == 2
    assert not any(group_members(e.pgid) for e in registry.entries())
