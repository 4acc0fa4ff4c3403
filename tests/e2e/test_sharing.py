from __future__ import annotations

import json

from .conftest import Sweep
from .helpers import records


def test_thinking_on_and_off_share_one_server(sweep: Sweep) -> None:
    sweep.add("fake-cpu-vllm", draft_lengths=(2,))
    sweep.run("--snapshot-update").assert_outcomes(passed=2)
    starts = records(sweep.record)
    assert [s["k"] for s in starts] == [2]
    ports = {
        sweep.cell(f"fake-cpu-vllm[k2-{m}]")["server"]["port"]
        for m in ("thinking_off", "thinking_on")
    }
    assert ports == {starts[0]["port"]}


def test_two_workers_start_one_server_per_configuration(sweep: Sweep) -> None:
    sweep.add("fake-cpu-vllm", draft_lengths=(1, 2))
    result = sweep.run("-n", "2", "--snapshot-update")
    result.assert_outcomes(passed=4)
    starts = records(sweep.record)
    lost = _lost_port_races(sweep)
    assert len(lost) <= 1, lost
    served = [s["k"] for s in starts if s["pid"] not in lost]
    assert sorted(served) == [1, 2], json.dumps(starts, indent=1)


def _lost_port_races(sweep: Sweep) -> set[int]:
    """Stand-ins that could not bind: both workers may pick the preferred port at once, and the
    launcher then starts the loser again on another port (a retry, not a second server)."""
    lost: set[int] = set()
    for log in (sweep.results / "logs").glob("*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if "ERROR [Errno 98]" in line:
                lost.add(int(line.split("pid=", 1)[1].split(")", 1)[0]))
    return lost
