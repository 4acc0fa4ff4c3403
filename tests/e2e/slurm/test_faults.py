"""What a cluster does to a sweep, caused on the real local cluster: a node going down under
one or two jobs, both jobs cancelled at once, a replacement waiting in the queue of a drained
node, a request the cluster can never serve, and the run folders killed jobs leave."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.conftest import Sweep
from e2e.helpers import recipe, write_recipe
from pytest_infx.launch.ports import free_port

from .cluster import Cluster
from .conftest import run_jobs, wait_until
from .test_sweep import _controller, _finish, _gpu_recipes, _job_ids

ITEMS = 8
PROGRESS_QUEUED = re.compile(r"infx \[gw\d+\] replacement Slurm job \d+ pending: \S")


class Node:
    """The cluster's one node, put DOWN or DRAIN by a test and always resumed after it."""

    def __init__(self, host: str) -> None:
        self.host = host

    def set(self, state: str, *, check: bool = True) -> None:
        argv = ["scontrol", "update", f"NodeName={self.host}", f"State={state}"]
        if state != "RESUME":
            argv.append("Reason=infx-fault-test")
        subprocess.run(argv, check=check, capture_output=True)

    def state(self) -> str:
        argv = ["sinfo", "-h", "-n", self.host, "-o", "%T"]
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()


@pytest.fixture
def node(slurm_cluster: Cluster) -> Iterator[Node]:
    found = Node(slurm_cluster.host)
    yield found
    if not found.state().startswith(("idle", "mixed", "alloc")):
        found.set("RESUME", check=False)
    assert wait_until(lambda: found.state().startswith(("idle", "mixed", "alloc")), 60)


def pending_jobs(root: Path) -> list[int]:
    return [job for job, _, state in run_jobs(root) if state == "PENDING"]


def job_named(name: str) -> int | None:
    argv = ["squeue", "-h", "-o", "%i", f"--name={name}", "-t", "RUNNING"]
    out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout.split()
    return int(out[0]) if out else None


def outcome(out: str) -> str:
    found = re.findall(r"=+ (\d+ failed, \d+ passed|\d+ failed|\d+ passed)\b", out)
    return found[-1] if found else ""


def test_scancel_of_both_jobs_fails_their_items_and_the_rest_run_on_replacements(
    slurm_sweep: Sweep,
) -> None:
    _gpu_recipes(slurm_sweep, "--step-delay", "0.5")
    proc = _controller(slurm_sweep)
    try:
        assert wait_until(lambda: len(_job_ids(slurm_sweep.record)) == 2, timeout=120)
        victims = sorted(_job_ids(slurm_sweep.record))
        subprocess.run(["scancel", *victims], check=True)
        out = _finish(proc, root=slurm_sweep.root, timeout=180)
    finally:
        _finish(proc, root=slurm_sweep.root, timeout=5)
    assert "INTERNALERROR" not in out, out
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert outcome(out) == f"2 failed, {ITEMS - 2} passed", out
    for victim in victims:
        assert f"Slurm job {victim} on " in out, out
    assert out.count("was cancelled") >= 2, out


@pytest.mark.parametrize("workers", [2, 1])
def test_a_node_going_down_fails_the_items_its_jobs_ran_and_the_rest_pass_after_resume(
    slurm_sweep: Sweep, node: Node, workers: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The replacements start on the node the dead jobs ran on, and remove their run
    folders: no folder of a finished or killed job is left when the run ends."""
    node_tmp = tmp_path / "node-tmp"
    node_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(node_tmp))
    _gpu_recipes(slurm_sweep, "--step-delay", "0.5")
    args = ("--gpu", "h200", "--infx-slurm", str(workers), "--infx-slurm-gpus", "4")
    proc = _controller(slurm_sweep, "--snapshot-update", args=args)
    try:
        assert wait_until(lambda: len(_job_ids(slurm_sweep.record)) == workers, timeout=120)
        victims = sorted(_job_ids(slurm_sweep.record))
        node.set("DOWN")
        node.set("DRAIN")
        assert wait_until(lambda: len(pending_jobs(slurm_sweep.root)) == workers, timeout=60), (
            run_jobs(slurm_sweep.root)
        )
        node.set("RESUME")
        out = _finish(proc, root=slurm_sweep.root, timeout=240)
    finally:
        _finish(proc, root=slurm_sweep.root, timeout=5)
    assert "INTERNALERROR" not in out, out
    assert outcome(out) == f"{workers} failed, {ITEMS - workers} passed", out
    for victim in victims:
        assert f"Slurm job {victim} on {node.host} lost its node (node failure)" in out, out
    assert sorted(p.name for p in node_tmp.glob("infx-run-*")) == []


def test_a_pending_replacement_does_not_delay_another_jobs_failure(
    slurm_sweep: Sweep, node: Node
) -> None:
    """With the node drained, the first replacement waits in the queue; the second job's end
    must still be handled at once, which shows as its own replacement queued beside it."""
    _gpu_recipes(slurm_sweep, "--step-delay", "0.5")
    proc = _controller(slurm_sweep, "--infx-progress-interval", "0.3")
    try:
        assert wait_until(lambda: len(_job_ids(slurm_sweep.record)) == 2, timeout=120)
        first, second = sorted(_job_ids(slurm_sweep.record))
        node.set("DRAIN")
        subprocess.run(["scancel", first], check=True)
        assert wait_until(lambda: len(pending_jobs(slurm_sweep.root)) == 1, timeout=30), run_jobs(
            slurm_sweep.root
        )
        subprocess.run(["scancel", second], check=True)
        both_queued = wait_until(lambda: len(pending_jobs(slurm_sweep.root)) == 2, timeout=30)
        time.sleep(1.0)
        node.set("RESUME")
        out = _finish(proc, root=slurm_sweep.root, timeout=240)
    finally:
        _finish(proc, root=slurm_sweep.root, timeout=5)
    assert both_queued, "the second job's end waited for the first replacement:\n" + out
    assert "INTERNALERROR" not in out, out
    assert outcome(out) == f"2 failed, {ITEMS - 2} passed", out
    assert PROGRESS_QUEUED.search(out), "no progress line named the queued replacement:\n" + out
    assert "ReqNodeNotAvail" in out, out


def test_replacements_waiting_past_the_limit_fail_the_items_left_with_the_queue_reason(
    slurm_sweep: Sweep, node: Node
) -> None:
    _gpu_recipes(slurm_sweep, "--step-delay", "2")
    proc = _controller(slurm_sweep, "--infx-slurm-wait", "3")
    try:
        assert wait_until(lambda: len(_job_ids(slurm_sweep.record)) == 2, timeout=120)
        victims = sorted(_job_ids(slurm_sweep.record))
        node.set("DRAIN")
        subprocess.run(["scancel", *victims], check=True)
        out = _finish(proc, root=slurm_sweep.root, timeout=120)
    finally:
        _finish(proc, root=slurm_sweep.root, timeout=5)
    assert "INTERNALERROR" not in out, out
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert outcome(out) == f"{ITEMS} failed", out
    waited = re.findall(
        r"^no worker was left to run it: replacement Slurm job \d+ waited \d+ s in the queue "
        r"\(--infx-slurm-wait 3\): (ReqNodeNotAvail|Nodes required for job are DOWN, DRAINED)",
        out,
        flags=re.MULTILINE,
    )
    assert len(waited) == ITEMS - 2, out
    assert pending_jobs(slurm_sweep.root) == []


@pytest.mark.parametrize(
    ("args", "option", "reason"),
    [
        (
            ("--infx-slurm-partition", "nosuchpart"),
            "--infx-slurm-partition nosuchpart",
            "partition",
        ),
        (("--infx-slurm-gpus", "16"), "--infx-slurm-gpus 16", "node configuration"),
    ],
)
def test_a_request_the_cluster_cannot_serve_is_one_usage_line(
    pytester: pytest.Pytester,
    slurm_cluster: Cluster,
    args: tuple[str, ...],
    option: str,
    reason: str,
) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--infx-slurm", "2", *args, timeout=60
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, result.stderr.str()
    assert errors[0].startswith(f"ERROR: {option}: the cluster cannot run the worker jobs (srun:")
    assert reason in errors[0].lower(), errors[0]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert run_jobs(pytester.path) == []


def test_the_next_run_removes_run_folders_of_jobs_slurm_no_longer_lists(
    slurm_sweep: Sweep, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A cancelled job or a lost node never runs its worker's cleanup; the next worker on the
    node removes what such jobs left and keeps the folders of jobs still running."""
    node_tmp = tmp_path / "node-tmp"
    node_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(node_tmp))
    live = subprocess.Popen(
        ["srun", "--job-name=fault-live", "-N1", "-n1", "sleep", "120"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: job_named("fault-live") is not None, 30)
        live_id = job_named("fault-live")
        assert live_id is not None
        kept = node_tmp / f"infx-run-{'a' * 12}-{live_id}"
        dead = [node_tmp / f"infx-run-{'b' * 12}-{job}" for job in (live_id - 1, 999999)]
        for folder in (kept, *dead):
            (folder / "servers").mkdir(parents=True)
            (folder / "registry.jsonl").write_text("{}\n")
        data = recipe(
            "a-only",
            record=slurm_sweep.record,
            modes=("thinking_off",),
            port=free_port("127.0.0.1"),
            golden="smollm2_fake_a_only",
        )
        write_recipe(slurm_sweep.recipes, data)
        slurm_sweep.run("--snapshot-update", "--infx-slurm", "1").assert_outcomes(passed=1)
        left = sorted(p.name for p in node_tmp.glob("infx-run-*"))
        assert left == [kept.name], left
    finally:
        live.terminate()
        live.wait(timeout=30)
