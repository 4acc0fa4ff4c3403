from __future__ import annotations

import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_infx.agentic.runner import (
    CONSOLE_LOG_NAME,
    AgenticRun,
    AgenticRunError,
    aiperf_env,
    build_argv,
    missing_flags,
    preflight,
    run_aiperf,
)
from pytest_infx.agentic.traces import default_traces_path


def _run(tmp_path: Path, **changes: object) -> AgenticRun:
    fields: dict[str, object] = {
        "aiperf": tmp_path / "bin" / "aiperf",
        "url": "http://127.0.0.1:8000",
        "model": "served-name",
        "tokenizer": str(tmp_path / "tok"),
        "concurrency": 8,
        "duration_s": 60.0,
        "artifact_dir": tmp_path / "out",
        "traces": default_traces_path(),
    }
    fields |= changes
    return AgenticRun(**fields)  # type: ignore[arg-type]


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_local_short_run_overrides_the_scenario_and_uses_the_weka_loader(tmp_path: Path) -> None:
    argv = build_argv(_run(tmp_path))
    assert argv[:2] == [str(tmp_path / "bin" / "aiperf"), "profile"]
    assert _value(argv, "--scenario") == "inferencex-agentx-mvp"
    assert "--unsafe-override" in argv
    assert _value(argv, "--input-file") == str(default_traces_path())
    assert _value(argv, "--custom-dataset-type") == "weka_trace"
    assert "--public-dataset" not in argv
    assert _value(argv, "--endpoint") == "/v1/chat/completions"
    assert _value(argv, "--endpoint-type") == "chat"
    assert "--streaming" in argv
    assert _value(argv, "--concurrency") == "8"
    assert _value(argv, "--benchmark-duration") == "60"
    assert _value(argv, "--random-seed") == "42"
    assert _value(argv, "--model") == "served-name"
    assert _value(argv, "--tokenizer") == str(tmp_path / "tok")
    assert _value(argv, "--artifact-dir") == str(tmp_path / "out")
    assert "--use-server-token-count" in argv


def test_public_dataset_at_full_duration_is_submittable(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        traces=None,
        public_dataset="semianalysis_cc_traces_weka_062126",
        duration_s=1800.0,
        num_dataset_entries=393,
    )
    argv = build_argv(run)
    assert not run.override
    assert "--unsafe-override" not in argv
    assert _value(argv, "--public-dataset") == "semianalysis_cc_traces_weka_062126"
    assert _value(argv, "--num-dataset-entries") == "393"
    assert "--input-file" not in argv


def test_public_dataset_below_the_floor_needs_the_override(tmp_path: Path) -> None:
    run = _run(tmp_path, traces=None, public_dataset="semianalysis_cc_traces_weka_062126")
    assert run.override
    assert "--unsafe-override" in build_argv(run)


def test_no_scenario_means_no_override(tmp_path: Path) -> None:
    argv = build_argv(_run(tmp_path, scenario=None))
    assert "--scenario" not in argv and "--unsafe-override" not in argv


def test_optional_flags_and_extra_args_are_passed_in_order(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        warmup_requests_per_lane=10,
        trajectory_start_ratio=(0.0, 0.5),
        request_count=100,
        grace_period_s=2.5,
        duration_s=12.5,
        extra_args=("--no-server-metrics", "--workers-max", "2"),
    )
    argv = build_argv(run)
    assert _value(argv, "--warmup-requests-per-lane") == "10"
    assert _value(argv, "--trajectory-start-min-ratio") == "0"
    assert _value(argv, "--trajectory-start-max-ratio") == "0.5"
    assert _value(argv, "--request-count") == "100"
    assert _value(argv, "--benchmark-grace-period") == "2.5"
    assert _value(argv, "--benchmark-duration") == "12.5"
    assert argv[-3:] == ["--no-server-metrics", "--workers-max", "2"]


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"traces": None}, "exactly one of public_dataset and traces"),
        ({"public_dataset": "x"}, "exactly one of public_dataset and traces"),
        ({"concurrency": 0}, "concurrency must be >= 1"),
        ({"duration_s": 0.0}, "duration_s must be > 0"),
        ({"gpus": 0}, "gpus must be >= 1"),
        ({"trajectory_start_ratio": (0.6, 0.2)}, "0 <= min <= max <= 1"),
    ],
)
def test_bad_runs_are_refused(tmp_path: Path, changes: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        _run(tmp_path, **changes)


def test_default_argv_uses_only_flags_aiperf_0_13_knows(tmp_path: Path, data_dir: Path) -> None:
    help_text = (data_dir / "aiperf-0.13.0-profile-help.txt").read_text()
    assert missing_flags(build_argv(_run(tmp_path, request_count=5)), help_text) == []
    argv = build_argv(_run(tmp_path, warmup_requests_per_lane=10))
    assert missing_flags(argv, help_text) == ["--warmup-requests-per-lane"]


def test_offline_variables_are_dropped_only_for_a_local_tokenizer(tmp_path: Path) -> None:
    (tmp_path / "tok").mkdir()
    base = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "KEEP": "yes"}
    env = aiperf_env(_run(tmp_path), base)
    assert "HF_HUB_OFFLINE" not in env and "TRANSFORMERS_OFFLINE" not in env
    assert env["KEEP"] == "yes"
    hub = aiperf_env(_run(tmp_path, tokenizer="org/some-model"), base)
    assert hub["HF_HUB_OFFLINE"] == "1"


def test_preflight_names_a_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(AgenticRunError, match=r"aiperf not found at .*bin/aiperf"):
        preflight(_run(tmp_path))


def _fake_aiperf(tmp_path: Path, help_file: Path, body: str) -> Path:
    """A stand-in aiperf executable: real 0.13.0 help text, scripted profile behaviour."""
    script = tmp_path / "bin" / "aiperf"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            f"""
            import os, subprocess, sys, time
            if "--help" in sys.argv:
                print(open({str(help_file)!r}).read())
                sys.exit(0)
            """
        )
        + textwrap.dedent(body)
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_hanging_aiperf_is_killed_with_its_children(tmp_path: Path, data_dir: Path) -> None:
    pid_file = tmp_path / "child.pid"
    _fake_aiperf(
        tmp_path,
        data_dir / "aiperf-0.13.0-profile-help.txt",
        f"""
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("starting services", flush=True)
        time.sleep(600)
        """,
    )
    (tmp_path / "tok").mkdir()
    lines: list[str] = []
    with pytest.raises(AgenticRunError, match=r"ran past 3 s and was stopped") as info:
        run_aiperf(_run(tmp_path), on_line=lines.append, timeout_s=3)
    assert "starting services" in str(info.value)
    assert lines == [
        "starting services",
        "guard: signal (SIGTERM); stopping its process group",
    ]
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.1)
    assert not _alive(child)
    log = (tmp_path / "out" / CONSOLE_LOG_NAME).read_text()
    assert "--scenario inferencex-agentx-mvp" in log.splitlines()[0]


def test_a_failing_aiperf_reports_its_exit_code_and_tail(tmp_path: Path, data_dir: Path) -> None:
    _fake_aiperf(
        tmp_path,
        data_dir / "aiperf-0.13.0-profile-help.txt",
        """
        print("ScenarioLockError: duration too short", flush=True)
        sys.exit(3)
        """,
    )
    (tmp_path / "tok").mkdir()
    with pytest.raises(AgenticRunError, match="exited with 3") as info:
        run_aiperf(_run(tmp_path), timeout_s=60)
    assert "ScenarioLockError: duration too short" in str(info.value)


def test_an_unknown_flag_fails_before_launch(tmp_path: Path, data_dir: Path) -> None:
    marker = tmp_path / "launched"
    _fake_aiperf(
        tmp_path,
        data_dir / "aiperf-0.13.0-profile-help.txt",
        f"open({str(marker)!r}, 'w').write('yes')\n",
    )
    (tmp_path / "tok").mkdir()
    with pytest.raises(
        AgenticRunError, match=r"--warmup-requests-per-lane.*trajectory_start_ratio"
    ):
        run_aiperf(_run(tmp_path, warmup_requests_per_lane=10), timeout_s=60)
    assert not marker.exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_inferencex_sampling_and_warmup_flags_that_aiperf_0_13_has(
    tmp_path: Path, data_dir: Path
) -> None:
    """benchmark_lib.sh's replay command at 843c6254f: start ratio 0.25-0.75, warm-up grace
    1800 s, live failed-request threshold, context cap from the server's max model length."""
    run = _run(
        tmp_path,
        trajectory_start_ratio=(0.25, 0.75),
        warmup_grace_period_s=1800.0,
        failed_request_threshold=0.1,
        max_context_length=2048,
        trace_idle_gap_cap_s=300.0,
    )
    argv = build_argv(run)
    assert _value(argv, "--trajectory-start-min-ratio") == "0.25"
    assert _value(argv, "--trajectory-start-max-ratio") == "0.75"
    assert _value(argv, "--agentic-warmup-grace-period") == "1800"
    assert _value(argv, "--failed-request-threshold") == "0.1"
    assert _value(argv, "--max-context-length") == "2048"
    assert _value(argv, "--trace-idle-gap-cap-seconds") == "300"
    help_text = (data_dir / "aiperf-0.13.0-profile-help.txt").read_text()
    assert missing_flags(argv, help_text) == []


def test_the_idle_gap_cap_is_left_out_where_the_scenario_forbids_it(tmp_path: Path) -> None:
    """aiperf 0.13's inferencex-agentx-mvp scenario sets forbid_trace_idle_gap_cap; the flag
    would need the override and so make a submittable run non-submittable."""
    run = _run(
        tmp_path,
        traces=None,
        public_dataset="semianalysis_cc_traces_weka_062126",
        duration_s=1800.0,
        trace_idle_gap_cap_s=300.0,
    )
    argv = build_argv(run)
    assert not run.override
    assert "--trace-idle-gap-cap-seconds" not in argv
    assert "--unsafe-override" not in argv


def test_a_run_stopped_by_the_threshold_still_returns_its_export(
    tmp_path: Path, data_dir: Path
) -> None:
    export = (data_dir / "profile_export_errors11.json").read_text()
    target = tmp_path / "out" / "profile_export_aiperf.json"
    _fake_aiperf(
        tmp_path,
        data_dir / "aiperf-0.13.0-profile-help.txt",
        f"""
        open({str(target)!r}, "w").write({export!r})
        print("failed-request threshold exceeded", flush=True)
        sys.exit(1)
        """,
    )
    (tmp_path / "tok").mkdir()
    result = run_aiperf(_run(tmp_path, failed_request_threshold=0.1), timeout_s=60)
    assert result.exit_code == 1
    assert result.console_tail[-1] == "failed-request threshold exceeded"
    assert (result.total, result.failed) == (100, 11)


def test_the_chat_template_flag_is_passed_only_when_asked(tmp_path: Path) -> None:
    assert "--apply-chat-template" not in build_argv(_run(tmp_path))
    assert "--apply-chat-template" in build_argv(_run(tmp_path, apply_chat_template=True))
