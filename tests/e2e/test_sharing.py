from __future__ import annotations

import json
import re

from .conftest import Sweep
from .helpers import records

MODES = ("thinking_off", "thinking_on")


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
    """Both workers may pick the preferred port at once; the launcher then starts the loser
    again on another port, its first log kept beside a ``.retry`` one: a retry, not a second
    server. The loser may not get as far as its bind, or may be stopped before it writes its
    error (the port already answers from the winner), so the retry log, not the loser's own
    words, counts the race, and a loser may have left no start record at all."""
    sweep.add("fake-cpu-vllm", draft_lengths=(1, 2))
    result = sweep.run("-n", "2", "--snapshot-update")
    result.assert_outcomes(passed=4)
    starts = records(sweep.record)
    retried = sorted(p.name for p in (sweep.results / "logs").glob("*.retry.log"))
    assert len(retried) <= 1, retried
    assert 2 <= len(starts) <= 2 + len(retried), json.dumps(starts, indent=1)
    assert sorted({s["k"] for s in starts}) == [1, 2]
    ports = {
        k: {sweep.cell(f"fake-cpu-vllm[k{k}-{m}]")["server"]["port"] for m in MODES} for k in (1, 2)
    }
    assert all(len(found) == 1 for found in ports.values()), ports
    assert ports[1] != ports[2]


def test_cells_of_one_server_on_two_workers_measure_one_at_a_time(sweep: Sweep) -> None:
    """Plain ``-n 2`` sends the two cells of one server to two workers; each cell's counter
    window must hold its own traffic only, or the counter AL counts the other cell's drafts."""
    sweep.add("fake-cpu-vllm", draft_lengths=(2,), extra=("--step-delay", "0.3"))
    result = sweep.run("-n", "2", "--snapshot-update", "-v")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "[gw0]" in out and "[gw1]" in out and out.count(" PASSED ") == 2, out
    windows = sorted(
        (cell["counters"]["before"]["drafts"], cell["counters"]["after"]["drafts"])
        for cell in (sweep.cell(f"fake-cpu-vllm[k2-{m}]") for m in MODES)
    )
    assert windows[0][1] <= windows[1][0], windows
    assert len(records(sweep.record)) == 1


def test_under_loadgroup_each_servers_cells_run_on_one_worker(sweep: Sweep) -> None:
    """``--dist loadgroup`` keeps a server's cells on one worker because its group is in each
    node id; with pytest 9.2, xdist's own write of the group no longer changes the id."""
    sweep.add("fake-cpu-vllm", draft_lengths=(1, 2))
    result = sweep.run("-n", "2", "--dist", "loadgroup", "--snapshot-update", "-v")
    result.assert_outcomes(passed=4)
    worker_of: dict[str, set[str]] = {}
    for line in result.outlines:
        found = re.match(
            r"\[(gw\d+)\] .*PASSED \S+::fake-cpu-vllm\[k(\d)-\w+\]@infx-[0-9a-f]+", line
        )
        if found:
            worker_of.setdefault(found[2], set()).add(found[1])
    assert sorted(worker_of) == ["1", "2"], result.stdout.str()
    assert all(len(workers) == 1 for workers in worker_of.values()), worker_of
