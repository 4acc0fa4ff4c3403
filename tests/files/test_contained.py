from pathlib import Path

import pytest

from pytest_infx.files.contained import OutsideFolderError, inside, within


def test_a_path_inside_its_folder_is_returned_resolved(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    assert inside(tmp_path, "data/../data/ds.jsonl", source="r.yaml", field="path") == (
        tmp_path.resolve() / "data" / "ds.jsonl"
    )


@pytest.mark.parametrize("written", ["../outside/ds.jsonl", "/etc/passwd", "a/../../x"])
def test_a_path_out_of_its_folder_names_file_field_and_folder(tmp_path: Path, written: str) -> None:
    top = tmp_path / "repo"
    top.mkdir()
    with pytest.raises(OutsideFolderError) as info:
        inside(top, written, source="recipes/a.yaml", field="speedbench.dataset.path")
    assert str(info.value) == (
        f"recipes/a.yaml: 'speedbench.dataset.path' is {written!r}, which leads outside "
        f"{top.resolve()}; give a path inside {top.resolve()}"
    )


def test_a_symbolic_link_out_of_the_folder_is_followed_and_refused(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    top.mkdir()
    (top / "etc").symlink_to("/etc")
    with pytest.raises(OutsideFolderError, match="'etc/passwd'"):
        inside(top, "etc/passwd", source="a.yaml", field="path")


def test_within_follows_links_on_both_sides(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / "_base").mkdir(parents=True)
    (top / "out").symlink_to(tmp_path)
    assert within(top, top / "_base" / "b.yaml")
    assert not within(top, top / "out" / "b.yaml")
    assert within(tmp_path / "repo" / ".." / "repo", top / "_base")
