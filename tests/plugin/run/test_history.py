"""The run's identity in the history and the config identity of a point."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

from pytest_infx.kinds import KINDS
from pytest_infx.plugin.run.history import new_stamp, run_stamp
from pytest_infx.settings import HistorySettings, Roots, Settings, environment


def _settings(root: Path, **env: str) -> Settings:
    return Settings(
        rootdir=root,
        recipes=root / "recipes",
        results=root / "results",
        golden=root / "golden",
        gpu=None,
        plan=False,
        gpu_count=None,
        dataset_dir=root,
        changed_since=None,
        roots=Roots(None, root / "models"),
        env=environment(env),
    )


def test_on_github_actions_the_run_is_its_run_id_attempt_and_ref(tmp_path: Path) -> None:
    found = new_stamp(
        _settings(
            tmp_path,
            GITHUB_RUN_ID="123456",
            GITHUB_RUN_ATTEMPT="2",
            GITHUB_HEAD_REF="feature-x",
            GITHUB_REF_NAME="42/merge",
            GITHUB_SHA="a" * 40,
            RUNNER_NAME="b200-nv_3",
        )
    )
    assert (found["run_id"], found["attempt"], found["branch"]) == ("123456", 2, "feature-x")
    assert (found["commit"], found["machine"]) == ("a" * 40, "b200-nv_3")
    assert run_stamp(found).attempt == 2


def test_elsewhere_the_run_is_new_and_the_branch_comes_from_git(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "-q", "-b", "topic")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "m")
    first = new_stamp(_settings(tmp_path))
    assert str(first["run_id"]).startswith("local-")
    assert new_stamp(_settings(tmp_path))["run_id"] != first["run_id"]
    assert (first["branch"], first["commit"]) == ("topic", git("rev-parse", "HEAD"))
    named = replace(_settings(tmp_path), history=HistorySettings(branch="main"))
    assert new_stamp(named)["branch"] == "main"


def test_outside_a_work_tree_the_branch_is_unknown(tmp_path: Path) -> None:
    found = new_stamp(_settings(tmp_path))
    assert (found["branch"], found["commit"]) == ("unknown", "")


def test_a_point_with_problems_or_a_failed_gate_is_stored_failed_with_why(tmp_path: Path) -> None:
    from results import samples

    from pytest_infx.history.gate import BaselineVerdict as Comparison
    from pytest_infx.history.gate import Delta
    from pytest_infx.history.store import Store
    from pytest_infx.plugin.run.history import History

    url = f"sqlite:///{tmp_path / 'h.db'}"
    settings = replace(_settings(tmp_path), history=HistorySettings(url=url))
    history = History(settings, new_stamp(settings), lambda: KINDS)
    slower = Comparison("a", "r0", (Delta("tput_per_gpu", 100.0, 50.0, 0.05),))
    try:
        history.put(samples.point(id="exported", concurrency=1), problems=["aiperf exited with 1"])
        history.put(samples.point(id="gated", concurrency=2), slower)
        history.put(samples.point(id="fine", concurrency=4), None)
    finally:
        history.close()
    with Store.open(url) as store:
        found = {row.item: (row.status, row.reason) for row in store.points()}
    assert found["exported"] == ("fail", "aiperf exited with 1")
    assert found["gated"][0] == "fail" and "tput_per_gpu 50" in found["gated"][1]
    assert found["fine"] == ("pass", "")
