from __future__ import annotations

import pytest

from pytest_infx.hardware import (
    RUNNERS,
    gpu_type,
    gpu_vendor,
    runner_from_gpu_name,
    unknown_runner,
)


@pytest.mark.parametrize(
    ("gpu", "runner"),
    [
        ("NVIDIA B300 SXM6 AC", "b300"),
        ("NVIDIA H200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA GB200", "gb200"),
        ("AMD Instinct MI355X", "mi355x"),
        ("AMD Instinct MI300X", "mi300x"),
        ("Some Accelerator", None),
    ],
)
def test_a_gpu_name_gives_its_runner_type(gpu: str, runner: str | None) -> None:
    assert runner_from_gpu_name(gpu) == runner


def test_every_runner_is_known_and_a_typo_names_the_close_ones() -> None:
    assert all(unknown_runner(name) is None for name in RUNNERS)
    problem = unknown_runner("b30")
    assert problem is not None
    assert problem.startswith("no runner type 'b30'; did you mean b300")
    assert "runners: cpu, h100" in problem


@pytest.mark.parametrize(
    ("runner", "gpu"),
    [
        ("b300", "b300"),
        ("cluster:b300-nv", "b300"),
        ("b200-dgxc_1", "b200"),
        ("h200_3", "h200"),
        ("cpu", "cpu"),
    ],
)
def test_a_runner_name_gives_its_gpu_type(runner: str, gpu: str) -> None:
    assert gpu_type(runner) == gpu


def test_the_mi_runners_have_amd_gpus_and_the_others_nvidia() -> None:
    assert [gpu_vendor(r) for r in ("mi300x", "cluster:mi355x-amds", "mi325x-tw_1")] == ["amd"] * 3
    assert {gpu_vendor(r) for r in RUNNERS if not r.startswith("mi")} == {"nvidia"}
