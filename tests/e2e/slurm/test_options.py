"""``--infx-slurm`` and its companions: what reaches srun, and clear errors for what cannot."""

from __future__ import annotations

import pytest

from pytest_infx.launch.gpus import GpuLeaser
from pytest_infx.plugin.slurm.jobs import SlurmError, job_gpus, tx_specs
from pytest_infx.settings import SlurmSettings

from .cluster import Cluster


def test_every_option_reaches_srun_in_one_spec_per_worker() -> None:
    settings = SlurmSettings(
        workers=2, partition="h200", gpus=4, time="2:00:00", account="bench", extra=("-C", "nvl")
    )
    specs = tx_specs(settings, "abc", "/venv/bin/python")
    assert specs == [
        f"popen//python=srun --job-name=infx-abc-w{slot} -N1 -n1 --unbuffered "
        "--partition=h200 --gres=gpu:4 --time=2:00:00 --account=bench -C nvl /venv/bin/python"
        for slot in (0, 1)
    ]


def test_job_gpus_are_the_node_indices_slurm_gave() -> None:
    assert job_gpus({"CUDA_VISIBLE_DEVICES": "4,5"}) is None
    assert job_gpus({"SLURM_JOB_ID": "7", "CUDA_VISIBLE_DEVICES": "4,5,6,7"}) == (4, 5, 6, 7)
    assert job_gpus({"SLURM_JOB_ID": "7"}) == ()
    with pytest.raises(SlurmError, match="not a list of GPU indices"):
        job_gpus({"SLURM_JOB_ID": "7", "CUDA_VISIBLE_DEVICES": "GPU-1f2e"})
    assert job_gpus({"SLURM_JOB_ID": "7", "ROCR_VISIBLE_DEVICES": "2,3"}) == (2, 3)
    with pytest.raises(SlurmError, match="ROCR_VISIBLE_DEVICES='GPU-7c' in Slurm job 7"):
        job_gpus({"SLURM_JOB_ID": "7", "ROCR_VISIBLE_DEVICES": "GPU-7c"})


def test_leases_name_the_jobs_devices(tmp_path: pytest.TempPathFactory) -> None:
    leaser = GpuLeaser(tmp_path, 4, devices=(4, 5, 6, 7))  # type: ignore[arg-type]
    with leaser.lease(2, deadline=0) as first, leaser.lease(2, deadline=0) as second:
        assert (first.ids, second.ids) == ((4, 5), (6, 7))
        assert first.cuda_visible_devices == "4,5"
        assert sorted(p.name for p in tmp_path.iterdir()) == [  # type: ignore[attr-defined]
            f"gpu{i}.lock" for i in (4, 5, 6, 7)
        ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--infx-slurm", "two"), "--infx-slurm: expected a whole number >= 0, got 'two'"),
        (("--infx-slurm", "1", "--infx-slurm-gpus", "-1"), "--infx-slurm-gpus: expected*"),
        (("--infx-slurm", "1", "-n", "2"), "--infx-slurm starts its own workers; drop -n/--tx"),
        (("--infx-slurm", "1", "--infx-slurm-args", "--comment='a b'"), "*cannot be passed*"),
    ],
)
def test_bad_slurm_options_are_usage_errors(
    pytester: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])


def test_ini_twins_configure_the_jobs(pytester: pytest.Pytester, slurm_cluster: Cluster) -> None:
    pytester.makeini(
        "[pytest]\ninfx = true\naddopts = -p no:cacheprovider\ninfx_slurm = 1\n"
        f"infx_slurm_partition = {slurm_cluster.partition}\ninfx_slurm_gpus = 2\n"
        "infx_slurm_time = 5\ninfx_slurm_args = --comment=infx-ini\n"
    )
    pytester.makepyfile(
        "import os, subprocess\n"
        "def test_in_job():\n"
        f"    assert os.environ['SLURM_JOB_PARTITION'] == {slurm_cluster.partition!r}\n"
        "    assert len(os.environ['CUDA_VISIBLE_DEVICES'].split(',')) == 2\n"
        "    job = subprocess.run(['scontrol', 'show', 'job', os.environ['SLURM_JOB_ID']],\n"
        "                         capture_output=True, text=True, check=True).stdout\n"
        "    assert 'TimeLimit=00:05:00' in job and 'Comment=infx-ini' in job, job\n"
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
