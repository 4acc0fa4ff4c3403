"""``infx cache``: the cached environments with their sizes, and ``prune`` removing what no
pinned version uses and every install that did not finish."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.cli import main
from pytest_infx.cli.cache import used_folders
from pytest_infx.engines import embedded
from pytest_infx.envs.toolenv import MARKER_NAME, locate

REPO = Path(__file__).resolve().parents[2]


def _env(cache: Path, name: str, *, complete: bool, size: int) -> Path:
    folder = cache / "envs" / name
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "blob").write_bytes(b"x" * size)
    if complete:
        (folder / MARKER_NAME).write_text("{}")
    (cache / "envs" / f"{name}.lock").write_text("")
    return folder


def test_prune_keeps_what_the_pins_use_and_removes_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    engine = locate(embedded.SPEC, cache_dir=cache).env_dir.name
    used = _env(cache, engine, complete=True, size=3000)
    parser = sorted(n for n in used_folders(REPO / "recipes", cache) if "sglang-parser" in n)[0]
    kept_parser = _env(cache, parser, complete=True, size=10)
    old = _env(cache, "sglang-parser-0.5.16-0123456789ab", complete=True, size=2 * 1024 * 1024)
    broken = _env(cache, parser.replace("0.5.", "0.4."), complete=False, size=5)
    half = _env(cache, f"{engine}x", complete=False, size=7)
    argv = ["cache", "--cache-dir", str(cache), "--recipes", str(REPO / "recipes")]

    assert main(argv) == 0
    listing = capsys.readouterr().out
    assert f"{old.name}" in listing and "2.0 MB" in listing
    assert "no pinned version uses it; pruned by `infx cache prune`" in listing
    assert "an install that did not finish; pruned" in listing
    assert "5 environments" in listing

    assert main([*argv, "prune"]) == 0
    pruned = capsys.readouterr().out
    assert used.is_dir() and kept_parser.is_dir()
    assert not old.exists() and not broken.exists() and not half.exists()
    assert not (cache / "envs" / f"{old.name}.lock").exists()
    assert f"removed {old.name} (2.0 MB, no pinned version uses it)" in pruned
    assert pruned.rstrip().endswith("freed 2.0 MB")


def test_an_empty_cache_lists_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "--cache-dir", str(tmp_path), "--recipes", str(REPO / "recipes")]) == 0
    assert capsys.readouterr().out == "0 environments, 0 B\n"
