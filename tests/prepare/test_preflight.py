from __future__ import annotations

from pathlib import Path

import pytest
from core.helpers import changed, line_of, speedbench, write

from pytest_infx.prepare.preflight import Datasets, GoldenTree, golden_name_problem, golden_tree
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand
from pytest_infx.speedbench.dataset import DatasetError

CURVE = "# Source: hand-written\nm:\n  thinking_on:\n    1: 1.50\n"


def point_naming(tmp_path: Path, golden: str) -> Point:
    recipe = changed(speedbench("a-b300", draft_lengths=(1,)), "speedbench.golden", golden)
    return expand(load_file(write(tmp_path / "recipes" / "a.yaml", recipe)))[0]


def golden_folder(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "golden"
    folder.mkdir()
    for name in names:
        (folder / f"{name}.yaml").write_text(CURVE)
    return folder


def test_a_near_name_is_a_typo_whether_or_not_it_records(tmp_path: Path) -> None:
    folder = golden_folder(tmp_path, "mimov2.6flash_dflash", "kimik3_dspark")
    point = point_naming(tmp_path, "mimov2.6flash_dflsh")
    for recording in (None, True, False):
        problem = golden_name_problem(point, folder, Datasets(tmp_path), recording)
        assert problem is not None
        line = line_of(point.path.read_text(), "golden:")
        assert problem.startswith(
            f"{point.path}:{line}: speedbench.golden: no golden curve 'mimov2.6flash_dflsh'"
        )
        assert "close to 'mimov2.6flash_dflash'" in problem
        assert "kimik3_dspark" not in problem
        assert "add its row to" in problem and "README.md" in problem


def test_a_registered_new_name_and_a_distinct_new_name_may_be_recorded(tmp_path: Path) -> None:
    folder = golden_folder(tmp_path, "mimov2.6flash_dflash")
    (folder / "README.md").write_text(
        "| Model | Method | Golden YAML | Source run |\n|---|---|---|---|\n"
        "| MiMo | DFlash v2 | [mimov2.6flash_dflash2.yaml](mimov2.6flash_dflash2.yaml) | - |\n"
    )
    registered = point_naming(tmp_path, "mimov2.6flash_dflash2")
    assert golden_name_problem(registered, folder, Datasets(tmp_path), True) is None
    distinct = point_naming(tmp_path, "qwen3_eagle3")
    assert golden_name_problem(distinct, folder, Datasets(tmp_path), True) is None
    assert golden_name_problem(distinct, folder, Datasets(tmp_path), None) is None


def test_without_recording_any_missing_curve_fails_before_the_run(tmp_path: Path) -> None:
    folder = golden_folder(tmp_path, "mimov2.6flash_dflash")
    problem = golden_name_problem(
        point_naming(tmp_path, "qwen3_eagle3"), folder, Datasets(tmp_path), False
    )
    assert problem is not None
    assert "no golden curve 'qwen3_eagle3'" in problem
    assert "record it with --snapshot-update" in problem
    existing = point_naming(tmp_path, "mimov2.6flash_dflash")
    assert golden_name_problem(existing, folder, Datasets(tmp_path), False) is None


def test_names_are_judged_from_the_tree_the_run_started_with(tmp_path: Path) -> None:
    """A worker that collects late (a replacement Slurm job) must judge as the first ones did,
    not see a curve another worker recorded meanwhile as the original of a typo."""
    folder = golden_folder(tmp_path, "kimik3_dspark")
    started = GoldenTree.from_wire(golden_tree(folder).to_wire())
    assert started is not None and started.names == frozenset({"kimik3_dspark"})
    (folder / "smollm2_fake_k2.yaml").write_text(CURVE)
    point = point_naming(tmp_path, "smollm2_fake_k1")
    late = Datasets(tmp_path, golden=started)
    assert golden_name_problem(point, folder, late, True) is None
    assert golden_name_problem(point, folder, Datasets(tmp_path), True) is not None


def test_a_golden_file_that_is_not_utf8_fails_before_any_server(tmp_path: Path) -> None:
    folder = golden_folder(tmp_path)
    (folder / "mimov2.6flash_dflash.yaml").write_bytes(CURVE.encode().replace(b"hand", b"h\xe9nd"))
    point = point_naming(tmp_path, "mimov2.6flash_dflash")
    problem = golden_name_problem(point, folder, Datasets(tmp_path), False)
    assert problem is not None
    line = line_of(point.path.read_text(), "golden:")
    assert problem.startswith(f"{point.path}:{line}: speedbench.golden: the golden file cannot")
    assert "mimov2.6flash_dflash.yaml:1: column 12: not valid UTF-8 (byte 0xe9)" in problem


@pytest.mark.parametrize("where", ["../outside/ds.jsonl", "/etc/hostname", "link/hostname"])
def test_a_recipe_dataset_path_out_of_the_dataset_folder_is_refused_unread(
    tmp_path: Path, where: str
) -> None:
    repo = tmp_path / "repo"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ds.jsonl").write_text("not json\n")
    repo.mkdir()
    (repo / "link").symlink_to("/etc")
    recipe = changed(speedbench("a-b300", draft_lengths=(1,)), "speedbench.dataset.path", where)
    point = expand(load_file(write(repo / "recipes" / "a.yaml", recipe)))[0]
    assert point.cell is not None
    with pytest.raises(DatasetError) as info:
        Datasets(repo).get(point.cell.bench, str(point.path))
    assert str(info.value) == (
        f"{point.path}: 'speedbench.dataset.path' is {where!r}, which leads outside "
        f"{repo.resolve()}; give a path inside {repo.resolve()}"
    )


def test_a_recipe_dataset_path_inside_the_dataset_folder_is_read(tmp_path: Path) -> None:
    recipe = changed(speedbench("a-b300", draft_lengths=(1,)), "speedbench.dataset.path", "d.jsonl")
    point = expand(load_file(write(tmp_path / "recipes" / "a.yaml", recipe)))[0]
    assert point.cell is not None
    assert Datasets(tmp_path).path_of(point.cell.bench) == tmp_path.resolve() / "d.jsonl"
