"""A checkout of InferenceX replayed for one point: its workflow step, launcher and per-key
script run unmodified with recording stand-ins, and what the server and client were given.

This is how InferenceX's recorded commands were made, so that a checkout whose scripts have
moved on since can be compared with the recipes the same way. Each point runs in its own
copy of the checkout (scripts write logs and results beside themselves), under ``bash``,
bounded by a timeout, in a session of its own that is stopped when the step ends (a
stand-in server stays up until then).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pytest_infx.cli.workflow import WORKFLOW, launch_step, step_environment
from pytest_infx.engines import standins

GENERATOR = Path("utils/matrix_logic/generate_sweep_configs.py")
"""InferenceX's own matrix generator: its output is what ``run-sweep.yml`` runs."""
GENERATOR_ARGS = ("full-sweep", "--single-node", "--no-evals", "--config-files")
MASTERS = "configs/*-master.yaml"
RUNNERS = Path("configs/runners.yaml")
LIB = Path("benchmarks/benchmark_lib.sh")
SHAPE = (WORKFLOW, RUNNERS, LIB, GENERATOR)
"""What makes a folder an InferenceX checkout, as far as replaying it needs."""
BASE_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


class CheckoutError(ValueError):
    """The folder cannot be replayed; ``str()`` is the one line saying why and what to do."""


@dataclass(frozen=True)
class Replayed:
    """What one point's replay recorded: the server and client calls (``None`` where the
    script stopped before them), every call in order, and how the step ended (its status,
    ``None`` past the timeout, and its last line of output)."""

    server: Mapping[str, Any] | None
    client: Mapping[str, Any] | None
    calls: tuple[Mapping[str, Any], ...] = field(repr=False)
    returncode: int | None
    last_line: str = ""


def check_checkout(checkout: Path) -> None:
    """One line naming the first thing an InferenceX checkout has that ``checkout`` lacks."""
    if not checkout.is_dir():
        raise CheckoutError(f"{checkout}: not a folder; give the root of an InferenceX checkout")
    for part in SHAPE:
        if not (checkout / part).is_file():
            raise CheckoutError(
                f"{checkout}: not an InferenceX checkout (no {part}); give the root of one"
            )
    if not list(checkout.glob(MASTERS)):
        raise CheckoutError(
            f"{checkout}: not an InferenceX checkout (no {MASTERS}); give the root of one"
        )
    if not list((checkout / "runners").glob("launch_*.sh")):
        raise CheckoutError(
            f"{checkout}: not an InferenceX checkout (no runners/launch_*.sh); give the root of one"
        )


def sweep(checkout: Path, timeout: float = 300) -> list[dict[str, Any]]:
    """The checkout's single-node points, as its generator gives them."""
    masters = sorted(str(p.relative_to(checkout)) for p in checkout.glob(MASTERS))
    done = subprocess.run(
        [sys.executable, str(GENERATOR), *GENERATOR_ARGS, *masters],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = done.stderr.strip().splitlines() or ["no output"]
    if done.returncode != 0:
        raise CheckoutError(f"{checkout / GENERATOR}: exited {done.returncode}: {lines[-1]}")
    try:
        points = json.loads(done.stdout)
    except ValueError as exc:
        raise CheckoutError(f"{checkout / GENERATOR}: its output is not JSON ({exc})") from exc
    if isinstance(points, dict):
        points = points.get("points", [])
    return [p for p in points if isinstance(p, dict)]


def speculative_decoding(checkout: Path) -> dict[str, frozenset[str]]:
    """Each master-config key's ``spec-decoding`` values over its search spaces (``none``
    where an entry names none): what tells a key from its ``-mtp`` sibling, whose points are
    otherwise the same."""
    found: dict[str, frozenset[str]] = {}
    for path in sorted(checkout.glob(MASTERS)):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for key, config in data.items() if isinstance(data, dict) else ():
            if isinstance(config, dict):
                found[str(key)] = frozenset(_specs(config.get("scenarios")))
    return found


def _specs(node: object) -> list[str]:
    if isinstance(node, list):
        return [spec for item in node for spec in _specs(item)]
    if not isinstance(node, dict):
        return []
    if "search-space" in node:
        entries = node["search-space"] or []
        return [str(e.get("spec-decoding", "none")) for e in entries if isinstance(e, dict)]
    return [spec for item in node.values() for spec in _specs(item)]


def runner_node(checkout: Path, label: str) -> str:
    """The first runner ``runners.yaml`` lists for a label, as the reference recording used:
    its name's prefix picks the launcher."""
    data = yaml.safe_load((checkout / RUNNERS).read_text(encoding="utf-8")) or {}
    nodes = (data.get("labels") or {}).get(label) or []
    if not nodes:
        raise CheckoutError(f"{checkout / RUNNERS}: no runner for label {label!r}")
    return str(nodes[0])


def workflow_inputs(params: Mapping[str, Any]) -> dict[str, Any]:
    """A sweep point as ``run-sweep.yml`` passes it to the workflow: a KV offload backend by
    its name, with the whole entry as JSON in ``kv-offload-backend-metadata``; any other
    mapping or list (a router) as JSON."""
    inputs: dict[str, Any] = {}
    for name, given in params.items():
        if name == "kv-offload-backend" and isinstance(given, Mapping):
            inputs[name] = given.get("name", "")
            inputs["kv-offload-backend-metadata"] = json.dumps(given)
        elif isinstance(given, (Mapping, list)):
            inputs[name] = json.dumps(given)
        else:
            inputs[name] = given
    return inputs


def replay(checkout: Path, params: Mapping[str, Any], timeout: float = 60) -> Replayed:
    """Run the workflow step for one point in a copy of the checkout, with stand-ins."""
    step = launch_step(checkout)
    node = runner_node(checkout, str(params["runner"]))
    with tempfile.TemporaryDirectory(prefix="infx-replay-") as scratch:
        root = Path(scratch)
        workspace = root / "workspace"
        shutil.copytree(checkout, workspace, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        env, script = step_environment(step, workflow_inputs(params), node, workspace)
        env.update(
            PATH=f"{root / 'bin'}:{BASE_PATH}",
            HOME=str(root / "home"),
            GITHUB_WORKSPACE=str(workspace),
            GITHUB_ENV=str(root / "github_env"),
            RUNNER_TEMP=str(root / "tmp"),
            LANG="C.UTF-8",
        )
        (root / "home").mkdir()
        (root / "tmp").mkdir()
        base = root / "base.json"
        base.write_text(json.dumps(env), encoding="utf-8")
        log = root / "calls.jsonl"
        log.touch()
        env.update(standins.install(root / "bin", log, base))
        output = root / "output.log"
        shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script]
        returncode = _run(shell, env, workspace, timeout, output)
        last = output.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        calls = tuple(
            json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line
        )
    server = next((c for c in calls if c["kind"] == "server"), None)
    client = next((c for c in calls if c["kind"] == "client"), None)
    return Replayed(server, client, calls, returncode, last[-1] if last else "")


def _run(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float, output: Path
) -> int | None:
    """The step's exit status, ``None`` past the timeout; what it left running is stopped."""
    with output.open("wb") as sink:
        process = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        returncode: int | None = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        returncode = None
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    return returncode
