"""The recording stand-ins: which side of the comparison a call is, what a call records, and
what a container call runs (its command, its variables, in the folder its mounts map to)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pytest_infx.engines.standins import install, kind_of


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        (["vllm", "serve", "m"], "server"),
        (["vllm", "bench"], "call"),
        (["python3", "-m", "sglang.launch_server", "--tp", "8"], "server"),
        (["python3", "utils/bench_serving/benchmark_serving.py", "--num-prompts", "3"], "client"),
        (["aiperf", "profile"], "client"),
        (["python3", "-m", "aiperf", "profile"], "client"),
        (["python3", "-c", "print(1)"], "python"),
        (["srun", "--jobid=1"], "call"),
    ],
)
def test_each_call_is_a_server_a_client_python_or_another_call(argv: list[str], kind: str) -> None:
    assert kind_of(argv[0], argv) == kind


def run(tmp_path: Path, script: str, namespaces: bool = True) -> list[dict[str, object]]:
    """Run ``script`` with the stand-ins; without ``namespaces``, as on a machine that refuses
    a user namespace (an ``unshare`` that fails comes first on ``PATH``)."""
    log = tmp_path / "calls.jsonl"
    base = tmp_path / "base.json"
    refusing = tmp_path / "refusing"
    refusing.mkdir()
    (refusing / "unshare").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (refusing / "unshare").chmod(0o755)
    first = f"{tmp_path / 'bin'}:" + ("" if namespaces else f"{refusing}:")
    env = {"PATH": f"{first}/usr/bin:/bin:/usr/sbin:/sbin", "KEPT": "1"}
    base.write_text(json.dumps(env), encoding="utf-8")
    env.update(install(tmp_path / "bin", log, base))
    env["HOME"] = str(tmp_path)
    subprocess.run(["bash", "-c", script], env=env, cwd=tmp_path, check=True, timeout=120)
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_call_records_its_argv_and_only_the_variables_the_step_did_not_start_with(
    tmp_path: Path,
) -> None:
    (tmp_path / "opts.yaml").write_text("a: 1\n", encoding="utf-8")
    calls = run(
        tmp_path,
        "export ADDED=2; trtllm-serve m --config opts.yaml & server=$!;"
        " until grep -q trtllm calls.jsonl 2>/dev/null; do /bin/sleep 0.1; done; kill $server",
    )
    server = next(c for c in calls if c["kind"] == "server")
    assert server["argv"] == ["trtllm-serve", "m", "--config", "opts.yaml"]
    env = server["env"]
    assert isinstance(env, dict)
    assert env.get("ADDED") == "2"
    assert "KEPT" not in env
    assert server["files"] == {"opts.yaml": {"text": "a: 1\n"}}


@pytest.mark.parametrize("namespaces", [True, False])
def test_a_container_runs_its_command_with_its_variables_where_its_workdir_is_mounted(
    tmp_path: Path, namespaces: bool
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    calls = run(
        tmp_path,
        f"srun --jobid=4242 --container-image=img --container-mounts={source}:/ws/"
        " --container-workdir=/ws/ --export=ALL,A=1 bash -c 'echo $A $SLURM_JOB_ID > marker'",
        namespaces,
    )
    assert (source / "marker").read_text(encoding="utf-8") == "1 4242\n"
    assert [c["name"] for c in calls] == ["srun"]


def test_docker_run_applies_its_environment_and_workdir(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    run(
        tmp_path,
        f"docker run --rm -e B=3 -v {source}:/w -w /w --gpus all img sh -c 'echo $B > out'",
    )
    assert (source / "out").read_text(encoding="utf-8") == "3\n"
    assert os.path.exists(source / "out")


def test_mpirun_runs_its_command_once(tmp_path: Path) -> None:
    calls = run(tmp_path, "mpirun -n 1 --oversubscribe --allow-run-as-root sh -c 'echo ran >> out'")
    assert (tmp_path / "out").read_text(encoding="utf-8") == "ran\n"
    assert [c["name"] for c in calls] == ["mpirun"]


@pytest.mark.parametrize("namespaces", [True, False])
def test_a_container_creates_nothing_on_the_machines_own_folders(
    tmp_path: Path, namespaces: bool
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    absent = tmp_path / "absent"
    target = tmp_path.parent / f"{tmp_path.name}-target"
    run(
        tmp_path,
        f"srun --container-image=img --container-mounts={source}:/ws,{absent}:{target}/cache"
        " --container-workdir=/ws bash -c 'echo ran > marker'",
        namespaces,
    )
    assert (source / "marker").read_text(encoding="utf-8") == "ran\n"
    assert not target.exists()
    assert not absent.exists()


def test_a_slurm_job_is_queued_from_salloc_until_scancel(tmp_path: Path) -> None:
    run(
        tmp_path,
        "squeue -h -o %A > before; salloc -N 1 2> granted; squeue -h -o %A > during;"
        " scancel 4242; squeue -h -o %A > after",
    )
    seen = [(tmp_path / n).read_text(encoding="utf-8") for n in ("before", "during", "after")]
    assert seen == ["", "4242\n", ""]
    assert "Granted job allocation 4242" in (tmp_path / "granted").read_text(encoding="utf-8")


def test_an_environment_uv_makes_runs_the_client_stand_in(tmp_path: Path) -> None:
    calls = run(
        tmp_path,
        "uv venv --python 3.11 env && uv pip install --python env/bin/python aiperf"
        " && [ -x env/bin/aiperf ] && [ -x env/bin/hf ] && env/bin/aiperf profile --concurrency 4",
    )
    client = next(c for c in calls if c["kind"] == "client")
    assert client["argv"] == ["aiperf", "profile", "--concurrency", "4"]
