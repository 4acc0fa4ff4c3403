"""How a worker's job is asked for, and how it ended, in words: the states a test cannot
cause on demand quickly (a time limit is enforced on a minute scale, a node failure not at
all on one host)."""

from __future__ import annotations

import pytest

import pytest_infx.plugin.slurm.jobs as slurm
from pytest_infx.settings import SlurmSettings


def test_each_worker_spec_asks_for_one_task_on_one_node_with_the_users_words_last() -> None:
    settings = SlurmSettings(
        workers=2, partition="gpu", gpus=4, time="1:00:00", extra=("--exclusive",)
    )
    specs = slurm.tx_specs(settings, "t1", python="/py")
    assert specs == [
        "popen//python=srun --job-name=infx-t1-w0 -N1 -n1 --unbuffered --partition=gpu "
        "--gres=gpu:4 --time=1:00:00 --exclusive /py",
        "popen//python=srun --job-name=infx-t1-w1 -N1 -n1 --unbuffered --partition=gpu "
        "--gres=gpu:4 --time=1:00:00 --exclusive /py",
    ]
    assert slurm.srun_argv(SlurmSettings(workers=1), "j") == [
        "srun",
        "--job-name=j",
        "-N1",
        "-n1",
        "--unbuffered",
    ]


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ("TIMEOUT", "Slurm job 42 on n7 hit its time limit (1:00:00, --infx-slurm-time)"),
        ("NODE_FAIL", "Slurm job 42 on n7 lost its node (node failure)"),
        ("CANCELLED", "Slurm job 42 on n7 was cancelled (scancel, or an administrator)"),
        ("OUT_OF_MEMORY", "Slurm job 42 on n7 ran out of memory"),
        ("SPECIAL_EXIT", "Slurm job 42 on n7 ended in state SPECIAL_EXIT"),
    ],
)
def test_the_newest_job_of_the_slot_names_the_end(
    monkeypatch: pytest.MonkeyPatch, state: str, words: str
) -> None:
    found = [slurm.Job(41, "infx-t-w0", "COMPLETED", "n1"), slurm.Job(42, "infx-t-w0", state, "n7")]
    monkeypatch.setattr(slurm, "jobs", lambda names, every_state=False: found)
    assert slurm.why_ended("infx-t-w0", wait_s=0, time_limit="1:00:00") == words


def test_a_job_slurm_forgot_is_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm, "jobs", lambda names, every_state=False: [])
    assert "no longer lists it" in slurm.why_ended("infx-t-w0", wait_s=0)
