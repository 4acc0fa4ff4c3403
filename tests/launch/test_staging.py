from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_infx.launch.staging import (
    MARKER,
    Checkpoint,
    StagingError,
    missing_files,
    resolve_model,
)

from .conftest import load_standin

pytest.importorskip("huggingface_hub")
fakehub = load_standin("fakehub")

REPO = "acme/Tiny-Model"
BIG = 12 * 1024 * 1024


def _files() -> dict[str, bytes]:
    shard1 = os.urandom(4096)
    shard2 = os.urandom(BIG)
    index = {
        "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00002-of-00002.safetensors",
        }
    }
    draft_index = {"weight_map": {"d": "model.safetensors"}}
    return {
        "config.json": b'{"model_type": "tiny"}',
        "model.safetensors.index.json": json.dumps(index).encode(),
        "model-00001-of-00002.safetensors": shard1,
        "model-00002-of-00002.safetensors": shard2,
        "dflash/config.json": b'{"block_size": 8}',
        "dflash/model.safetensors.index.json": json.dumps(draft_index).encode(),
        "dflash/model.safetensors": os.urandom(2048),
    }


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    server = fakehub.FakeHub(repo_id=REPO, files=_files())
    url = server.start()
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True, raising=False)
    yield server
    server.stop()


def _same(path: Path, data: bytes) -> bool:
    return hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(data).digest()


def test_download_resumes_a_dropped_transfer(hub: Any, tmp_path: Path) -> None:
    shard = "model-00002-of-00002.safetensors"
    hub.faults.append(fakehub.Fault(path=shard, cut_at=11 * 1024 * 1024, cuts=1))
    ckpt = Checkpoint(repo_id=REPO, subfolders=("dflash",))
    path = resolve_model(ckpt, staged_root=tmp_path / "staged", download_root=tmp_path / "dl")
    assert path == tmp_path / "dl" / "Tiny-Model"
    assert _same(path / shard, hub.files[shard])
    assert hub.gets(shard) == [None, f"bytes={10 * 1024 * 1024}-"]
    assert (path / MARKER).is_file()
    assert missing_files(path, ckpt) == []


def test_failed_download_is_loud_and_a_rerun_resumes(hub: Any, tmp_path: Path) -> None:
    shard = "model-00002-of-00002.safetensors"
    hub.faults.append(fakehub.Fault(path=shard, status=500, status_times=1, delay_s=1.0))
    ckpt = Checkpoint(repo_id=REPO)
    with pytest.raises(StagingError) as info:
        resolve_model(ckpt, staged_root=None, download_root=tmp_path / "dl")
    message = str(info.value)
    assert f"download of {REPO} into {tmp_path / 'dl' / 'Tiny-Model'} failed" in message
    assert f"missing: {shard}" in message
    assert "rerun to resume" in message
    target = tmp_path / "dl" / "Tiny-Model"
    assert not (target / MARKER).exists()
    assert not (target / shard).exists()
    kept = {name: len(hub.gets(name)) for name in hub.files if (target / name).is_file()}
    assert "model-00001-of-00002.safetensors" in kept and "config.json" in kept
    path = resolve_model(ckpt, staged_root=None, download_root=tmp_path / "dl")
    assert _same(path / shard, hub.files[shard])
    assert {name: len(hub.gets(name)) for name in kept} == kept, "finished files were fetched again"
    assert (path / MARKER).is_file()
    requests_before = len(hub.requests)
    assert resolve_model(ckpt, staged_root=None, download_root=tmp_path / "dl") == path
    assert len(hub.requests) == requests_before


def test_only_the_drafter_subfolder(hub: Any, tmp_path: Path) -> None:
    ckpt = Checkpoint(repo_id=REPO, subfolders=("dflash",), only_subfolders=True)
    path = resolve_model(ckpt, staged_root=None, download_root=tmp_path / "dl")
    assert (path / "dflash" / "model.safetensors").is_file()
    assert not (path / "config.json").exists()
    assert hub.gets("model-00002-of-00002.safetensors") == []


def test_staged_copy_wins_and_an_incomplete_one_is_an_error(hub: Any, tmp_path: Path) -> None:
    staged = tmp_path / "staged" / "Tiny-Model"
    for name, data in hub.files.items():
        (staged / name).parent.mkdir(parents=True, exist_ok=True)
        (staged / name).write_bytes(data)
    ckpt = Checkpoint(repo_id=REPO, subfolders=("dflash",))
    assert (
        resolve_model(ckpt, staged_root=tmp_path / "staged", download_root=tmp_path / "dl")
        == staged
    )
    assert hub.requests == []
    (staged / "dflash" / "model.safetensors").unlink()
    with pytest.raises(StagingError, match=r"incomplete, missing: dflash/model.safetensors"):
        resolve_model(ckpt, staged_root=tmp_path / "staged", download_root=tmp_path / "dl")


def test_missing_huggingface_hub_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(StagingError, match="pip install huggingface_hub"):
        resolve_model(Checkpoint(repo_id=REPO), staged_root=None, download_root=tmp_path)
