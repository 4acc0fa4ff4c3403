from __future__ import annotations

from .conftest import Sweep, wait_gone
from .helpers import lit, records


def test_a_server_that_dies_at_start_fails_only_its_items(sweep: Sweep) -> None:
    sweep.add("dead-cpu-vllm", faults=["die-at-start"])
    sweep.add("good-cpu-vllm")
    result = sweep.run("--snapshot-update")
    result.assert_outcomes(passed=2, errors=2)
    text = result.stdout.str()
    for mode in ("thinking_off", "thinking_on"):
        assert f"PASSED recipes/good-cpu-vllm.yaml::good-cpu-vllm[k1-{mode}]" in text
        assert f"ERROR recipes/dead-cpu-vllm.yaml::dead-cpu-vllm[k1-{mode}]" in text
    result.stdout.fnmatch_lines(
        [
            lit("*server for dead-cpu-vllm[k1-thinking_off] did not start:"),
            "*server 'dead-cpu-vllm-k1' exited with code 1 during start-up*",
            "*--- last 40 lines of the log ---",
            "*INFO loading weights",
            "*ERROR RuntimeError: CUDA out of memory while loading weights (stand-in die-at-start)",
        ]
    )
    result.stdout.fnmatch_lines(["*start failed earlier in this run; not retried*"])
    starts = records(sweep.record)
    assert sorted(s["faults"] == {"die-at-start": None} for s in starts) == [False, True]
    assert wait_gone(sweep.record, timeout=5.0) == []


def test_a_server_that_never_gets_ready_times_out(sweep: Sweep) -> None:
    sweep.add("stuck-cpu-vllm", faults=["never-ready"], ready_timeout=1.5)
    result = sweep.run("--snapshot-update")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            lit("*server for stuck-cpu-vllm[k1-thinking_off] did not start:"),
            "*server 'stuck-cpu-vllm-k1' was not ready after 1.5 s (/health never answered);"
            " it was stopped",
        ]
    )
    assert len(records(sweep.record)) == 1
    assert wait_gone(sweep.record, timeout=5.0) == []


def test_a_start_failure_is_reported_once(sweep: Sweep) -> None:
    sweep.add("dead-cpu-vllm", faults=["die-at-start"], modes=["thinking_off"])
    result = sweep.run("--snapshot-update")
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    errors_section = text.split("short test summary info")[0]
    assert errors_section.count("--- last 40 lines of the log ---") == 1
    assert "During handling of the above exception" not in text


def test_a_server_that_crashes_mid_pass_fails_its_cell_with_the_log_tail(sweep: Sweep) -> None:
    sweep.add("crash-cpu-vllm", faults=["crash-after=2"], modes=["thinking_off"])
    result = sweep.run("--snapshot-update")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "During handling of the above exception" not in text
    assert "EngineDeadError: stand-in crash-after=2 at request 3" in text
