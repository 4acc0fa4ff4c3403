from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.files.contained import OutsideFolderError
from pytest_infx.golden.io import GoldenFileError
from pytest_infx.golden.store import GoldenNotFoundError, GoldenStore

REPO_GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CURVE = "demo:\n  thinking_on:\n    1: 1.50\n"


def test_names_lists_yaml_stems_only(tmp_path: Path) -> None:
    for name in ("b_mtp.yaml", "a_eagle3.yaml", ".a_eagle3.yaml.x1.tmp", "README.md"):
        (tmp_path / name).write_text(CURVE)
    assert GoldenStore(tmp_path).names() == ("a_eagle3", "b_mtp")
    assert GoldenStore(tmp_path / "absent").names() == ()


def test_get_loads_a_curve_and_a_missing_one_names_the_folder_and_known_curves(
    tmp_path: Path,
) -> None:
    (tmp_path / "a_mtp.yaml").write_text(CURVE)
    (tmp_path / "b_mtp.yaml").write_text(CURVE)
    store = GoldenStore(tmp_path)
    assert store.get("a_mtp").modes == {"thinking_on": {1: 1.5}}
    with pytest.raises(GoldenNotFoundError) as info:
        store.get("c_mtp")
    assert str(tmp_path) in str(info.value)
    assert "known curves: a_mtp, b_mtp" in str(info.value)
    assert info.value.known == ("a_mtp", "b_mtp")


def test_registry_parses_the_readme_table(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "# Golden\n\nSome prose | with a pipe.\n\n"
        "| Model | Method | Golden YAML | Source run |\n"
        "|---|---|---|---|\n"
        "| MiMo | DFlash | [mimo_dflash.yaml](mimo_dflash.yaml) | "
        "[41346734342](https://github.com/o/r/actions/runs/41346734342) |\n"
        "| CPU | draft | `cpu_draft.yaml` | measured locally |\n"
        "\nAfter the table.\n"
    )
    entries = GoldenStore(tmp_path).registry()
    assert [(e.model, e.method, e.curve, e.line) for e in entries] == [
        ("MiMo", "DFlash", "mimo_dflash", 7),
        ("CPU", "draft", "cpu_draft", 8),
    ]
    assert entries[0].source_run == "41346734342"
    assert entries[0].source_url == "https://github.com/o/r/actions/runs/41346734342"
    assert entries[1].source_url is None


@pytest.mark.parametrize(
    ("readme", "message"),
    [
        (None, "no registry"),
        ("# Golden\n", "no registry table"),
        (
            "| Model | Method | Golden YAML | Source run |\n|---|---|---|---|\n| a | b |\n",
            "README.md:3: registry row has 2 cells",
        ),
        (
            "| Model | Method | Golden YAML | Source run |\n|---|---|---|---|\n| a | b | c | d |\n",
            "README.md:3: Golden YAML cell 'c' does not name a .yaml file",
        ),
    ],
)
def test_a_bad_registry_is_reported(tmp_path: Path, readme: str | None, message: str) -> None:
    if readme is not None:
        (tmp_path / "README.md").write_text(readme)
    with pytest.raises(GoldenFileError, match=message):
        GoldenStore(tmp_path).registry()


def test_a_registry_that_is_not_utf8_names_line_and_column(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes(b"# Golden\n| Mod\xe8le |\n")
    with pytest.raises(GoldenFileError) as info:
        GoldenStore(tmp_path).registry()
    assert str(info.value) == (
        f"{readme}:2: column 6: not valid UTF-8 (byte 0xe8); save the file as UTF-8"
    )


def test_the_committed_curves_load_and_match_the_registry_one_row_each() -> None:
    store = GoldenStore(REPO_GOLDEN)
    curves = store.curves()
    rows = store.registry()
    assert sorted(row.curve for row in rows) == sorted(store.names())
    assert len(rows) == len({row.curve for row in rows})
    by_name = {curve.name: curve for curve in curves}
    for row in rows:
        header = by_name[row.curve].header
        assert header.source, row.curve
        if header.source_is_run:
            assert row.source_url == header.source, row.curve
            assert header.source.endswith(f"/runs/{row.source_run}"), row.curve
        else:
            assert row.source_url is None, row.curve
            assert row.source_run == header.source, row.curve


def test_the_committed_mimo_curve_has_the_measured_values_and_provenance() -> None:
    curve = GoldenStore(REPO_GOLDEN).get("mimov2.6flash_dflash")
    assert curve.model_key == "mimo-v2.6-flash-rl"
    on = [curve.al("thinking_on", k) for k in range(1, 8)]
    off = [curve.al("thinking_off", k) for k in range(1, 8)]
    assert on == [1.84, 2.51, 2.97, 3.35, 3.76, 3.86, 4.08]
    assert off == [1.83, 2.52, 2.95, 3.30, 3.74, 3.89, 4.00]
    header = curve.header
    assert header.source.endswith("/actions/runs/41346734342")
    assert header.image is not None and header.image.endswith(
        "@sha256:c1c9f6fd5c109ba7f0546a59f5b2f15fb87f64c77782e90a27b648b42a8e67c3"
    )
    assert (header.tp, header.method, header.dataset) == (4, "dflash", "coding")
    assert header.sampling["temperature"] == 1.0 and header.sampling["top_p"] == 0.95
    assert header.chat_template_kwargs["thinking_on"] == {"enable_thinking": True}
    assert not header.reference


@pytest.mark.parametrize("name", ["../outside/g", "/etc/g", "link/g"])
def test_a_curve_name_that_leads_out_of_the_golden_folder_is_refused_unread(
    tmp_path: Path, name: str
) -> None:
    golden = tmp_path / "golden"
    golden.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "g.yaml").write_text(CURVE)
    (golden / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(OutsideFolderError) as info:
        GoldenStore(golden).get(name, source="cells/x.json", field="golden.curve")
    assert str(info.value) == (
        f"cells/x.json: 'golden.curve' is '{name}.yaml', which leads outside "
        f"{golden.resolve()}; give a path inside {golden.resolve()}"
    )
