"""Recording stand-ins for the programs an InferenceX script needs a GPU node for.

A script's command is only known by running it: its launcher, ``benchmark_lib.sh`` and the
per-key script each add flags and variables. Put first on ``PATH``, these stand-ins let the
unmodified scripts run on any machine: each writes its argv, working folder and the
variables it was given (those not in the step's starting environment) to a JSONL log, then
does what lets the script go on: a server stays up until it is stopped, ``salloc`` grants
a job, ``srun --container-*`` and ``docker run`` run their command in the mapped working
folder with their variables, ``python3`` runs for real unless it starts a server or the
benchmark client, and everything else exits 0.

This file runs by its path under the interpreter that wrote the stand-ins (``python
standins.py NAME ARGS...``), so it imports nothing outside the standard library.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LOG = "INFX_STANDIN_LOG"
"""The variable naming the JSONL file each call is appended to."""
BASE = "INFX_STANDIN_BASE"
"""The variable naming a JSON file of the step's starting environment: a call records only
the variables that differ from it."""
PYTHON = "INFX_STANDIN_PYTHON"
"""The real interpreter, for the ``python3`` calls that are not a server or the client."""
BIN = "INFX_STANDIN_BIN"
"""The variable naming the stand-ins' folder, for the environments ``uv venv`` makes."""
JOB_ID = "4242"
"""The Slurm job every ``salloc`` grants, so ports and names derived from it are fixed."""

SERVERS = ("vllm", "sglang", "trtllm-serve")
SERVER_MODULES = ("sglang.launch_server", "atom", "vllm.entrypoints")
CLIENTS = ("aiperf",)
CLIENT_SCRIPTS = ("benchmark_serving.py",)
NAMES = (
    *SERVERS,
    *CLIENTS,
    "python3",
    "python",
    "salloc",
    "srun",
    "mpirun",
    "squeue",
    "scancel",
    "sinfo",
    "docker",
    "enroot",
    "unsquashfs",
    "nvidia-smi",
    "rocm-smi",
    "amd-smi",
    "curl",
    "wget",
    "sleep",
    "pip",
    "pip3",
    "uv",
    "git",
    "hf",
    "huggingface-cli",
)
"""The programs replaced: engines, client, scheduler, containers, GPU tools, downloaders,
installers, ``sleep`` (a script's polling does not wait) and ``curl`` (health checks pass);
``mpirun`` runs its command once, as TensorRT-LLM's single-node launch asks (``-n 1``)."""
DATA_SUFFIXES = (".yaml", ".yml", ".json")
"""Files a server's command line names that are recorded with their text (options files)."""
SRUN_VALUED = frozenset(
    {"--jobid", "--job-name", "-J", "-N", "-n", "--nodes", "--ntasks", "-p", "--partition"}
    | {"--gres", "--time", "-t", "--mpi", "--container-image", "--container-mounts"}
    | {"--container-workdir", "--export", "--container-name", "--cpus-per-task", "-c", "-w"}
)
MPIRUN_VALUED = frozenset({"-n", "-np", "-x", "-H", "--host", "--map-by", "--bind-to"})
DOCKER_VALUED = frozenset(
    {"-v", "--volume", "-w", "--workdir", "-e", "--env", "--name", "--network", "--ipc"}
    | {"--shm-size", "--gpus", "--device", "--group-add", "--cap-add", "--security-opt"}
    | {"--entrypoint", "--ulimit", "-p", "--publish", "--user", "-u", "--runtime", "--pid"}
    | {"--env-file", "--mount", "--platform", "--label", "-l", "--hostname", "--memory"}
)


def install(folder: Path, log: Path, base: Path) -> dict[str, str]:
    """Write the stand-ins into ``folder`` and return the variables that point them at
    ``log`` and ``base`` (put ``folder`` first on ``PATH``)."""
    folder.mkdir(parents=True, exist_ok=True)
    me = Path(__file__).resolve()
    for name in NAMES:
        shim = folder / name
        shim.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{me}" {name} "$@"\n', encoding="utf-8"
        )
        shim.chmod(0o755)
    return {LOG: str(log), BASE: str(base), PYTHON: sys.executable, BIN: str(folder)}


def kind_of(name: str, argv: Sequence[str]) -> str:
    """``server``, ``client`` or ``call``: which side of the comparison a call is."""
    if name in SERVERS and (name != "vllm" or argv[1:2] == ["serve"]):
        return "server"
    if name in CLIENTS:
        return "client"
    if name in ("python3", "python"):
        if "-m" in argv:
            module = argv[argv.index("-m") + 1] if argv.index("-m") + 1 < len(argv) else ""
            if module.startswith(SERVER_MODULES):
                return "server"
            if module.split(".")[0] in CLIENTS:
                return "client"
        script = next((a for a in argv[1:] if not a.startswith("-")), "")
        if script.endswith(CLIENT_SCRIPTS):
            return "client"
        return "python"
    return "call"


def _changed(environ: Mapping[str, str]) -> dict[str, str]:
    base_file = environ.get(BASE)
    base: dict[str, str] = {}
    if base_file and Path(base_file).is_file():
        base = json.loads(Path(base_file).read_text(encoding="utf-8"))
    own = (LOG, BASE, PYTHON, BIN, "PATH", "_")
    return {k: v for k, v in environ.items() if k not in own and base.get(k) != v}


def _files(argv: Sequence[str], cwd: Path) -> dict[str, dict[str, str | None]]:
    found: dict[str, dict[str, str | None]] = {}
    for token in argv[1:]:
        given = token.partition("=")[2] if token.startswith("-") else token
        if not given or "\n" in given or len(given) > 1000:
            continue
        path = cwd / given
        try:
            if not path.is_file() or path.stat().st_size > 1_000_000:
                continue
            text = path.read_text(encoding="utf-8") if given.endswith(DATA_SUFFIXES) else None
        except (OSError, UnicodeDecodeError):
            continue
        found[given] = {"text": text}
    return found


def record(name: str, argv: Sequence[str], kind: str) -> None:
    cwd = Path.cwd()
    entry = {
        "name": name,
        "kind": kind,
        "argv": list(argv),
        "cwd": str(cwd),
        "env": _changed(os.environ),
        "files": _files(argv, cwd) if kind == "server" else {},
    }
    log = os.environ.get(LOG)
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def _split(argv: Sequence[str], valued: frozenset[str]) -> tuple[list[str], list[str]]:
    """Options (as ``--name=value``) and the command that follows them."""
    options: list[str] = []
    at = 0
    while at < len(argv) and argv[at].startswith("-"):
        token = argv[at]
        if "=" not in token and token in valued and at + 1 < len(argv):
            options.append(f"{token}={argv[at + 1]}")
            at += 2
        else:
            options.append(token)
            at += 1
    return options, list(argv[at:])


def _mapped(workdir: str, mounts: Sequence[tuple[str, str]]) -> Path:
    """A container's working folder on this machine: under the mount that holds it."""
    for source, given in mounts:
        target = given.rstrip("/") or "/"
        if workdir.rstrip("/") == target or workdir.startswith(target + "/"):
            return Path(source + workdir.rstrip("/")[len(target) :])
    return Path(workdir) if Path(workdir).is_dir() else Path.cwd()


INSIDE = "--inside"
"""The first argument with which this file, run in a private user and mount namespace, builds
a container's view of the machine and runs its command there."""


def _run_inside(
    command: Sequence[str], env: dict[str, str], workdir: str, mounts: Sequence[tuple[str, str]]
) -> int:
    """Run a container's command with its mounts where the machine lets a user namespace
    make them (so ``/workspace`` and the runners' paths need not exist here); else in the
    working folder its mounts map to."""
    if not command:
        return 0
    unshare = ["unshare", "--user", "--map-root-user", "--mount"]
    try:
        probe = subprocess.run([*unshare, "true"], capture_output=True, check=False)
    except OSError:
        probe = None
    scratch = Path(os.environ.get(LOG, "/tmp/infx")).parent
    if probe is not None and probe.returncode == 0 and scratch.is_dir():
        spec = {"mounts": mounts, "workdir": workdir, "command": list(command), "scratch": ""}
        spec["scratch"] = tempfile.mkdtemp(prefix="container-", dir=scratch)
        real = os.environ.get(PYTHON, sys.executable)
        argv = [*unshare, real, str(Path(__file__).resolve()), INSIDE, json.dumps(spec)]
        return subprocess.run(argv, env=env, check=False).returncode
    cwd = _mapped(workdir, mounts)
    return subprocess.run(list(command), env=env, cwd=cwd, check=False).returncode


def _inside(spec: Mapping[str, Any]) -> int:
    """In the namespace: a new root on a memory file system holding what ``/`` holds (each
    folder on the way to a mount made anew, so that nothing is created on the machine's own
    folders), the container's mounts bound into it (a source the machine lacks: an empty
    folder of the replay's own), then the command in the working folder under chroot."""
    scratch = Path(spec["scratch"])
    root = scratch / "root"
    root.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "infx", str(root)], check=True)
    targets = [Path(t) for _, t in spec["mounts"]] + [Path(spec["workdir"])]
    made = {a for t in targets for a in [t, *t.parents]}
    _populate(Path("/"), root, made)
    for number, (given, target) in enumerate(spec["mounts"]):
        where = root / Path(target).relative_to("/")
        source = given if Path(given).exists() else str(scratch / f"missing-{number}")
        if source != given:
            Path(source).mkdir()
        if Path(source).is_dir():
            where.mkdir(parents=True, exist_ok=True)
        else:
            where.parent.mkdir(parents=True, exist_ok=True)
            where.touch()
        subprocess.run(["mount", "--rbind", source, str(where)], check=True)
    (root / Path(spec["workdir"]).relative_to("/")).mkdir(parents=True, exist_ok=True)
    os.chroot(root)
    os.chdir(spec["workdir"])
    command: list[str] = spec["command"]
    os.execvp(command[0], command)


def _populate(host: Path, new: Path, made: set[Path]) -> None:
    for entry in sorted(host.iterdir()) if host.is_dir() else ():
        dest = new / entry.name
        if entry.is_symlink():
            dest.symlink_to(os.readlink(entry))
        elif entry in made and entry.is_dir():
            dest.mkdir()
            _populate(entry, dest, made)
        elif entry.is_dir():
            dest.mkdir()
            subprocess.run(["mount", "--rbind", str(entry), str(dest)], check=False)
        elif entry.exists():
            dest.touch()
            subprocess.run(["mount", "--bind", str(entry), str(dest)], check=False)


def srun(argv: Sequence[str]) -> int:
    options, command = _split(argv[1:], SRUN_VALUED)
    settings = dict(o.partition("=")[::2] for o in options)
    if "--container-image" not in settings:
        return 0
    env = dict(os.environ, SLURM_JOB_ID=JOB_ID, SLURM_JOBID=JOB_ID, SLURM_PROCID="0")
    for item in settings.get("--export", "").split(","):
        if "=" in item:
            key, _, given = item.partition("=")
            env[key] = given
    mounts = [
        (m.split(":")[0], m.split(":")[1])
        for m in settings.get("--container-mounts", "").split(",")
        if m.count(":") >= 1
    ]
    return _run_inside(command, env, settings.get("--container-workdir", os.getcwd()), mounts)


def docker(argv: Sequence[str]) -> int:
    if argv[1:2] != ["run"]:
        return 0
    options, rest = _split(argv[2:], DOCKER_VALUED)
    command = rest[1:]
    env = dict(os.environ)
    mounts: list[tuple[str, str]] = []
    workdir = os.getcwd()
    for option in options:
        flag, _, given = option.partition("=")
        if flag in ("-e", "--env"):
            key, has, val = given.partition("=")
            env[key] = val if has else os.environ.get(key, "")
        elif flag in ("-v", "--volume") and ":" in given:
            mounts.append((given.split(":")[0], given.split(":")[1]))
        elif flag in ("-w", "--workdir"):
            workdir = given
    return _run_inside(command, env, workdir, mounts)


def _venv(argv: Sequence[str]) -> None:
    """An environment whose ``python``, ``aiperf`` and ``hf`` are the stand-ins, so that a
    script that installs its client into one finds it there and the client's call is
    recorded."""
    rest = _split(argv, frozenset({"--python", "-p"}))[1]
    folder = Path(rest[0] if rest else ".venv") / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    stand_ins = Path(os.environ.get(BIN, Path(__file__).parent))
    links = [("python", "python3"), ("python3", "python3"), ("aiperf", "aiperf"), ("hf", "hf")]
    for name, target in links:
        if not (folder / name).exists():
            (folder / name).symlink_to(stand_ins / target)


def main(argv: Sequence[str]) -> int:
    if argv[0] == INSIDE:
        return _inside(json.loads(argv[1]))
    name, args = argv[0], [argv[0], *argv[1:]]
    kind = kind_of(name, args)
    if kind == "python":
        real = os.environ.get(PYTHON, sys.executable)
        return subprocess.run([real, *args[1:]], check=False).returncode
    record(name, args, kind)
    if kind == "server":
        while True:
            time.sleep(3600)
    job = Path(os.environ.get(LOG, "calls.jsonl")).with_name("slurm-job")
    if name == "salloc":
        job.touch()
        print(f"salloc: Granted job allocation {JOB_ID}", file=sys.stderr, flush=True)
    elif name == "scancel":
        job.unlink(missing_ok=True)
    elif name == "squeue" and job.exists():
        print(JOB_ID)
    elif name == "uv" and args[1:2] == ["venv"]:
        _venv(args[2:])
    elif name == "srun":
        return srun(args)
    elif name == "docker":
        return docker(args)
    elif name == "mpirun":
        command = _split(args[1:], MPIRUN_VALUED)[1]
        return subprocess.run(command, check=False).returncode if command else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
