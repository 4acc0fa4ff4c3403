from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_infx.envs import toolenv
from pytest_infx.envs.toolenv import InstallError, ScriptStep, ToolEnvSpec

RECORDER = """
import os, sys, time
from pathlib import Path
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
runs = out / "runs"
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
(out / "prefix").write_text(sys.prefix)
(out / "marker_env").write_text(os.environ.get("STEP_VAR", ""))
(out / "template").write_text(Path(sys.argv[2]).read_text())
time.sleep(float(os.environ.get("STEP_SLEEP", "0")))
gate = os.environ.get("STEP_GATE")
while gate and not Path(gate).exists():
    time.sleep(0.05)
print("recorder done")
"""

FAILER = """
import sys
print("about to fail: boom-" + sys.argv[1])
sys.exit(3)
"""


@pytest.fixture
def data_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A throwaway data package holding step scripts, like ``pytest_infx/envs/data``."""
    package = tmp_path / "pkgroot" / "infx_test_steps"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "recorder.py.txt").write_text(RECORDER)
    (package / "failer.py.txt").write_text(FAILER)
    (package / "template.jinja").write_text("{{ hello }}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgroot"))
    monkeypatch.delitem(sys.modules, "infx_test_steps", raising=False)
    yield package
    sys.modules.pop("infx_test_steps", None)


def recorder_spec(*, sleep: float = 0.0, name: str = "demo", gate: str = "") -> ToolEnvSpec:
    return ToolEnvSpec(
        name=name,
        version="1.0",
        scripts=(
            ScriptStep(
                title="record the step",
                script="recorder.py.txt",
                files=("template.jinja",),
                args=("{env}/out", "{steps}/template.jinja"),
                env=(("STEP_VAR", "from-spec"), ("STEP_SLEEP", str(sleep)), ("STEP_GATE", gate)),
                package="infx_test_steps",
            ),
        ),
    )


def test_folder_name_tracks_every_input(data_package: Path, tmp_path: Path) -> None:
    spec = recorder_spec()
    env = toolenv.locate(spec, cache_dir=tmp_path)
    digest = toolenv.spec_hash(spec)
    assert env.env_dir == tmp_path / "envs" / f"demo-1.0-{digest}"
    assert toolenv.spec_hash(recorder_spec()) == digest
    assert toolenv.spec_hash(replace(spec, requirements=("six",))) != digest
    assert toolenv.spec_hash(replace(spec, uninstall=("six",))) != digest
    (data_package / "template.jinja").write_text("{{ changed }}\n")
    assert toolenv.spec_hash(spec) != digest


def test_install_runs_steps_then_reuses(
    data_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages: list[str] = []
    env = toolenv.ensure(recorder_spec(), progress=messages.append, cache_dir=tmp_path)
    out = env.env_dir / "out"
    assert env.is_complete()
    assert Path((out / "prefix").read_text()).resolve() == env.env_dir.resolve()
    assert (out / "marker_env").read_text() == "from-spec"
    assert (out / "template").read_text() == "{{ hello }}\n"
    assert "recorder done" in env.log_path.read_text()
    assert any(f"step 1/2: create virtualenv in {env.env_dir}" in m for m in messages)
    assert any("step 2/2: record the step" in m for m in messages)
    assert all(m.startswith("[infx] demo 1.0 [") and "s]" in m for m in messages)
    record = env.record()
    steps = record["steps"]
    assert isinstance(steps, dict)
    assert set(steps) == {"create virtualenv", "record the step"}
    assert record["hash"] == toolenv.spec_hash(recorder_spec())

    again: list[str] = []

    def no_step(*args: object, **kwargs: object) -> None:
        raise AssertionError("a complete environment ran a step again")

    monkeypatch.setattr(toolenv, "start_guarded", no_step)
    same = toolenv.ensure(recorder_spec(), progress=again.append, cache_dir=tmp_path)
    assert same == env
    assert again == []
    assert (out / "runs").read_text() == "x"


def test_a_quiet_step_does_not_repeat_its_last_line(
    data_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolenv, "_HEARTBEAT_S", 0.05)
    gate = tmp_path / "gate"
    messages: list[str] = []

    def progress(message: str) -> None:
        messages.append(message)
        # the virtualenv step's own heartbeats, frequent on a busy machine, are not this step's
        if sum("record the step still running" in m for m in messages) >= 3:
            gate.touch()

    toolenv.ensure(recorder_spec(gate=str(gate)), progress=progress, cache_dir=tmp_path)
    beats = [m for m in messages if "record the step still running" in m]
    assert len(beats) >= 3
    assert sum("still running: $ " in m for m in beats) == 1
    assert beats[1].endswith("record the step still running")


def test_a_long_log_line_is_shortened_at_a_word(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("Collecting " + "package-name-" * 3 + " " + "word " * 40 + "\n")
    line = toolenv._last_line(log)
    assert len(line) <= 120 and line.endswith("word ...")


def test_force_reinstalls(data_package: Path, tmp_path: Path) -> None:
    env = toolenv.ensure(recorder_spec(), progress=lambda _: None, cache_dir=tmp_path)
    (env.env_dir / "stale").write_text("left over")
    messages: list[str] = []
    toolenv.ensure(recorder_spec(), progress=messages.append, cache_dir=tmp_path, force=True)
    assert not (env.env_dir / "stale").exists()
    assert env.is_complete()
    assert any("removing a previous install" in m for m in messages)


def test_half_finished_install_is_redone(data_package: Path, tmp_path: Path) -> None:
    env = toolenv.locate(recorder_spec(), cache_dir=tmp_path)
    env.env_dir.mkdir(parents=True)
    (env.env_dir / "junk").write_text("killed mid-install")
    messages: list[str] = []
    toolenv.ensure(recorder_spec(), progress=messages.append, cache_dir=tmp_path)
    assert env.is_complete()
    assert not (env.env_dir / "junk").exists()
    assert any("removing a half-finished install" in m for m in messages)


def test_failing_step_reports_log_tail_and_leaves_only_its_log(
    data_package: Path, tmp_path: Path
) -> None:
    spec = ToolEnvSpec(
        name="broken",
        version="2",
        scripts=(
            ScriptStep(
                title="fail on purpose",
                script="failer.py.txt",
                args=("x1",),
                package="infx_test_steps",
            ),
        ),
    )
    with pytest.raises(InstallError) as info:
        toolenv.ensure(spec, progress=lambda _: None, cache_dir=tmp_path)
    message = str(info.value)
    env = toolenv.locate(spec, cache_dir=tmp_path)
    assert "step 'fail on purpose' failed with exit status 3" in message
    assert "about to fail: boom-x1" in message
    kept = env.env_dir.parent / f"{env.env_dir.name}.failed.log"
    assert f"Full log: {kept}" in message
    assert "about to fail: boom-x1" in kept.read_text()
    assert "infx engine install broken --force" in message
    assert not env.env_dir.exists()
    assert toolenv.env_state(env.env_dir) == "missing"


def test_failure_hint_replaces_generic_advice(data_package: Path, tmp_path: Path) -> None:
    spec = ToolEnvSpec(
        name="hinted",
        version="1",
        scripts=(
            ScriptStep(
                title="fail", script="failer.py.txt", args=("torchy",), package="infx_test_steps"
            ),
        ),
        hints=(
            toolenv.FailureHint(needle="boom-torchy", advice="set INFX_PIP_ARGS"),
            toolenv.FailureHint(needle="never printed", advice="unrelated advice"),
        ),
    )
    with pytest.raises(InstallError) as info:
        toolenv.ensure(spec, progress=lambda _: None, cache_dir=tmp_path)
    assert "set INFX_PIP_ARGS" in str(info.value)
    assert "unrelated advice" not in str(info.value)
    assert "--force" not in str(info.value)


def test_missing_data_file_is_a_clear_error(data_package: Path, tmp_path: Path) -> None:
    spec = ToolEnvSpec(
        name="nodata",
        version="1",
        scripts=(ScriptStep(title="x", script="absent.py.txt", package="infx_test_steps"),),
    )
    with pytest.raises(InstallError, match=r"infx_test_steps/absent\.py\.txt is missing"):
        toolenv.locate(spec, cache_dir=tmp_path)


def _wait_for(path: Path, text: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while text not in (path.read_text() if path.exists() else ""):
        assert proc.poll() is None, f"installer exited before {text!r}: {path.read_text()}"
        assert time.monotonic() < deadline, f"no {text!r} in 120 s: {path.read_text()}"
        time.sleep(0.05)


def test_concurrent_installers_run_steps_once(data_package: Path, tmp_path: Path) -> None:
    """The second installer starts while the first is inside its step, so it must wait."""
    gate = tmp_path / "gate"
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(data_package.parent)!r})
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_toolenv import recorder_spec
        from pytest_infx.envs import toolenv
        spec = recorder_spec(gate={str(gate)!r})
        env = toolenv.ensure(spec, cache_dir=Path({str(tmp_path)!r}))
        print("READY", env.env_dir)
        """
    )
    logs = [tmp_path / f"installer{n}.err" for n in range(2)]
    procs: list[subprocess.Popen[str]] = []
    for log in logs:
        with log.open("w") as err:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=err, text=True
                )
            )
        _wait_for(
            log,
            "step 2/2" if len(procs) == 1 else "another process is installing; waiting",
            procs[-1],
        )
    gate.touch()
    outs = [proc.communicate(timeout=120)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [log.read_text() for log in logs]
    env = toolenv.locate(recorder_spec(gate=str(gate)), cache_dir=tmp_path)
    assert (env.env_dir / "out" / "runs").read_text() == "x"
    assert "step 2/2" not in logs[1].read_text()
    assert all(f"READY {env.env_dir}" in out for out in outs)


def test_real_pip_install_uninstall_and_check(tmp_path: Path) -> None:
    spec = ToolEnvSpec(
        name="piptest",
        version="1",
        requirements=("iniconfig",),
        no_deps=("pluggy",),
        uninstall=("iniconfig",),
        check=(
            "python",
            "-c",
            "import pluggy, importlib.util as u; assert u.find_spec('iniconfig') is None",
        ),
    )
    messages: list[str] = []
    env = toolenv.ensure(spec, progress=messages.append, cache_dir=tmp_path)
    assert env.is_complete()
    assert [m.split(": ", 1)[1].split(" ")[0] for m in messages if "step " in m] == [
        "create",
        "pip",
        "pip",
        "pip",
        "check:",
    ]
    log = env.log_path.read_text()
    assert "Successfully installed iniconfig" in log
    assert "Successfully uninstalled iniconfig" in log
    marker = json.loads(env.marker_path.read_text())
    assert marker["uninstall"] == ["iniconfig"]


def test_remove_deletes_installed_env(data_package: Path, tmp_path: Path) -> None:
    env = toolenv.ensure(recorder_spec(), progress=lambda _: None, cache_dir=tmp_path)
    assert toolenv.remove(recorder_spec(), cache_dir=tmp_path)
    assert not env.env_dir.exists()
    assert not toolenv.remove(recorder_spec(), cache_dir=tmp_path)
