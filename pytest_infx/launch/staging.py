from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_infx.files.locks import Timeout, kernel_lock

MARKER = ".infx-complete.json"
_WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
_SINGLE_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


class StagingError(RuntimeError):
    """A checkpoint is not available complete; the message names what is missing and why."""


@dataclass(frozen=True)
class Checkpoint:
    """A model checkpoint to serve, optionally with required subfolders (a drafter in `dflash/`).

    With `only_subfolders`, only those subfolders are downloaded and checked (the root weights
    are someone else's business, e.g. served from another path).
    """

    repo_id: str
    revision: str | None = None
    subfolders: tuple[str, ...] = ()
    only_subfolders: bool = False

    @property
    def dir_name(self) -> str:
        return self.repo_id.rstrip("/").rsplit("/", 1)[-1]

    def allow_patterns(self) -> list[str] | None:
        if not self.only_subfolders:
            return None
        return [f"{sub.strip('/')}/*" for sub in self.subfolders]


def _missing_in(folder: Path, prefix: str) -> list[str]:
    missing = []
    if not (folder / "config.json").is_file():
        missing.append(f"{prefix}config.json")
    for index_name in _WEIGHT_INDEXES:
        index = folder / index_name
        if index.is_file():
            try:
                weight_map = json.loads(index.read_text())["weight_map"]
                shards = sorted(set(weight_map.values()))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                return [*missing, f"{prefix}{index_name} (unreadable: {exc})"]
            missing += [f"{prefix}{s}" for s in shards if not (folder / s).is_file()]
            return missing
    if not any((folder / name).is_file() for name in _SINGLE_WEIGHTS):
        missing.append(f"{prefix}model.safetensors or {prefix}model.safetensors.index.json")
    return missing


def missing_files(path: Path, checkpoint: Checkpoint) -> list[str]:
    """Expected files that are absent: config.json, the weights index and every shard it lists,
    for the root (unless only subfolders are wanted) and for each required subfolder."""
    missing = [] if checkpoint.only_subfolders else _missing_in(path, "")
    for sub in checkpoint.subfolders:
        name = sub.strip("/")
        missing += _missing_in(path / name, f"{name}/")
    return missing


def _marker_ok(path: Path, checkpoint: Checkpoint) -> bool:
    try:
        data = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return bool(
        data.get("repo_id") == checkpoint.repo_id
        and data.get("revision") == checkpoint.revision
        and set(checkpoint.subfolders) <= set(data.get("subfolders", []))
        and (checkpoint.only_subfolders or not data.get("only_subfolders"))
    )


def _write_marker(path: Path, checkpoint: Checkpoint) -> None:
    record = {
        "repo_id": checkpoint.repo_id,
        "revision": checkpoint.revision,
        "subfolders": list(checkpoint.subfolders),
        "only_subfolders": checkpoint.only_subfolders,
    }
    fd, tmp = tempfile.mkstemp(dir=path, prefix=MARKER, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path / MARKER)


def _snapshot_download() -> Callable[..., Any]:
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise StagingError(
            "downloading a checkpoint needs huggingface_hub, which is not installed: run "
            "`pip install huggingface_hub` (or stage the checkpoint under the runner's staged root)"
        ) from exc
    download: Callable[..., Any] = snapshot_download
    return download


def resolve_model(
    checkpoint: Checkpoint,
    *,
    staged_root: Path | None,
    download_root: Path,
    lock_timeout_s: float = 6 * 3600.0,
) -> Path:
    """The local path of a complete checkpoint, downloading it if it is not staged.

    A runner's staged copy (`<staged_root>/<model dir name>`) wins and is only checked. Else
    `<download_root>/<model dir name>` is used: the download always runs while the completion
    marker is absent (huggingface_hub skips finished files, so a rerun resumes), one process per
    checkpoint at a time, and the marker is written only after the download succeeded and every
    expected file is present. A partial checkpoint is never returned.
    """
    if staged_root is not None:
        staged = Path(staged_root) / checkpoint.dir_name
        if staged.is_dir():
            missing = missing_files(staged, checkpoint)
            if missing:
                raise StagingError(
                    f"staged checkpoint {staged} is incomplete, missing: {', '.join(missing)}; "
                    "fix the staged copy or remove it so the checkpoint is downloaded"
                )
            return staged
    target = Path(download_root) / checkpoint.dir_name
    if _marker_ok(target, checkpoint) and not missing_files(target, checkpoint):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = kernel_lock(target.parent / f".{checkpoint.dir_name}.lock", timeout=lock_timeout_s)
    try:
        lock.acquire()
    except Timeout as exc:
        raise StagingError(
            f"another process has been downloading {checkpoint.repo_id} into {target} for "
            f"{lock_timeout_s:g} s; wait for it or raise the staging lock timeout"
        ) from exc
    try:
        if _marker_ok(target, checkpoint) and not missing_files(target, checkpoint):
            return target
        download = _snapshot_download()
        (target / MARKER).unlink(missing_ok=True)
        error: BaseException | None = None
        try:
            download(
                repo_id=checkpoint.repo_id,
                revision=checkpoint.revision,
                local_dir=str(target),
                allow_patterns=checkpoint.allow_patterns(),
            )
        except Exception as exc:
            error = exc
        missing = missing_files(target, checkpoint)
        if error is not None or missing:
            what = f"failed ({type(error).__name__}: {error})" if error else "finished"
            absent = ", ".join(missing) if missing else "nothing detectable"
            raise StagingError(
                f"download of {checkpoint.repo_id} into {target} {what}; missing: {absent}. "
                "Finished files are kept: rerun to resume"
            ) from error
        _write_marker(target, checkpoint)
        return target
    finally:
        lock.release()
