from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from core.helpers import speedbench, write

SELECTION = "*- infx selection -*"


def collect(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    result = pytester.runpytest("--collect-only", "-q", *args)
    assert result.ret == 0, result.stdout.str()
    return result


def ids(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_gpu_keeps_its_runner_and_says_what_was_deselected(
    mixed_tree: Path, pytester: pytest.Pytester
) -> None:
    result = collect(pytester, "--gpu", "b300")
    assert all(node_id.startswith("recipes/a-b300.yaml::") for node_id in ids(result))
    result.stdout.fnmatch_lines(
        [
            SELECTION,
            "12 points of other runners deselected (runner b300 selected): b200 (10), cpu (2)",
            "4/16 tests collected (12 deselected) in *",
        ]
    )


def test_runner_matching_nothing_deselects_everything_and_runs_nothing(
    mixed_tree: Path, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest("--gpu", "h100")
    result.assert_outcomes(deselected=16)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [
            SELECTION,
            "16 points of other runners deselected (runner h100 selected): "
            "b200 (10), b300 (4), cpu (2)",
        ]
    )


def test_no_reason_section_when_nothing_is_deselected(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", speedbench("a-b300"))
    result = collect(pytester, "--gpu", "b300")
    assert len(ids(result)) == 4
    assert "infx selection" not in result.stdout.str()


def fake_nvidia_smi(folder: Path, gpu_name: str) -> None:
    folder.mkdir()
    script = folder / "nvidia-smi"
    script.write_text(
        f"#!/bin/sh\necho '0, {gpu_name}, 143771 MiB'\necho '1, {gpu_name}, 143771 MiB'\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_without_gpu_and_without_nvidia_smi_the_runner_is_cpu(
    mixed_tree: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = collect(pytester)
    assert ids(result) == [
        "recipes/c-cpu.yaml::c-cpu[k1-thinking_off]",
        "recipes/c-cpu.yaml::c-cpu[k1-thinking_on]",
    ]
    result.stdout.fnmatch_lines(["*(runner cpu selected): b200 (10), b300 (4)"])


def test_without_gpu_the_visible_gpu_names_the_runner(
    mixed_tree: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_nvidia_smi(tmp_path / "bin", "NVIDIA B300 SXM6 AC")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = collect(pytester)
    assert len(ids(result)) == 4
    result.stdout.fnmatch_lines(["*(runner b300 selected): b200 (10), cpu (2)"])


def test_marker_expression_combines_with_gpu(mixed_tree: Path, pytester: pytest.Pytester) -> None:
    agentic_only = ids(collect(pytester, "--gpu", "b200", "-m", "agentic"))
    assert len(agentic_only) == 8
    assert all(n.startswith("recipes/b200/agentic.yaml::b-b200-agentic[tp") for n in agentic_only)
    speed_only = ids(collect(pytester, "--gpu", "b200", "-m", "speedbench"))
    assert speed_only == [
        "recipes/b200/sb.yaml::b-b200[k2-thinking_off]",
        "recipes/b200/sb.yaml::b-b200[k2-thinking_on]",
    ]
    result = pytester.runpytest("--collect-only", "-q", "--gpu", "b200", "-m", "lint")
    lint_only = ids(result)
    assert lint_only
    assert all(n.startswith("infx-lint::") for n in lint_only)


def test_items_sharing_a_server_run_next_to_each_other(
    recipes: Path, pytester: pytest.Pytester
) -> None:
    write(recipes / "a.yaml", speedbench("a-b300", draft_lengths=(1, 2), modes=["thinking_on"]))
    same_server = speedbench("b-b300", draft_lengths=(1, 2), modes=["thinking_on"])
    same_server["speedbench"]["golden"] = "other_curve"
    write(recipes / "b.yaml", same_server)
    order = [n.split("::")[1] for n in ids(collect(pytester, "--gpu", "b300"))]
    assert order == [
        "a-b300[k1-thinking_on]",
        "b-b300[k1-thinking_on]",
        "a-b300[k2-thinking_on]",
        "b-b300[k2-thinking_on]",
    ]


def test_selection_reason_is_shown_under_xdist(mixed_tree: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-n", "2", "--gpu", "h100")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [SELECTION, "16 points of other runners deselected (runner h100 selected): *"]
    )
