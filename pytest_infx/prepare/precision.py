"""What precision a checkpoint really holds, from its safetensors headers alone.

A recipe's ``model.precision`` label (fp4, fp8, bf16) names the result rows people compare, and a
wrong label puts a result in the wrong row. The label is checked against the checkpoint the way a
reviewer does it by hand: a dtype census weighted by parameter count. Only the headers are read
(8 bytes of little-endian length, then that many bytes of JSON), so a census of a 600 GB
checkpoint reads a few megabytes and needs no torch.

Quantised layouts are recognised by their companion scale tensors: a U8 weight with a scale
tensor (E8M0 for MXFP4, E4M3 for NVFP4) packs two 4-bit values per byte; F8_E4M3 weights with
block scales (``weight_scale_inv``) are fp8. Scales are listed but never decide the label.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pytest_infx.files.contained import OutsideFolderError, inside
from pytest_infx.files.textio import InputFileError, not_a_file, open_regular
from pytest_infx.recipes.schema import PRECISION_LABELS
from pytest_infx.usage import UsageError

if TYPE_CHECKING:
    from pytest_infx.recipes.points import Point
    from pytest_infx.settings import Settings

INDEX_NAME: Final = "model.safetensors.index.json"
MAX_HEADER_BYTES: Final = 100 * 1024 * 1024
SCALE_CLASS: Final = "scales"
PACKED_SUFFIXES: Final = ("_blocks", ".blocks", ".weight_packed", "_packed", ".weight", "")
SCALE_SUFFIXES: Final = (
    "_scales",
    ".scales",
    ".weight_scale_inv",
    ".weight_scale",
    ".weight_scale_2",
    ".weight_scales",
    "_scale",
    ".scale",
    ".scale_inv",
    ".input_scale",
)
ITEM_BYTES: Final = {
    "F64": 8,
    "I64": 8,
    "U64": 8,
    "F32": 4,
    "I32": 4,
    "U32": 4,
    "F16": 2,
    "BF16": 2,
    "I16": 2,
    "U16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
}
PLAIN_CLASSES: Final = {
    "BF16": "bf16",
    "F16": "fp16",
    "F32": "fp32",
    "F64": "fp64",
    "F8_E4M3": "fp8",
    "F8_E5M2": "fp8",
    "I8": "int8",
}
Mode = Literal["warn", "fail", "off"]
MODES: Final[tuple[Mode, ...]] = ("warn", "fail", "off")


class PrecisionError(ValueError):
    """A checkpoint whose headers cannot be read; the message names the file and the fix."""


@dataclass(frozen=True, kw_only=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    file: Path

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True, kw_only=True)
class Row:
    """One class of the census; ``parameters`` counts values (a packed fp4 byte holds two)."""

    name: str
    dtypes: tuple[str, ...]
    tensors: int
    parameters: int
    bytes: int


@dataclass(frozen=True, kw_only=True)
class Census:
    path: Path
    files: tuple[Path, ...]
    rows: tuple[Row, ...]

    @property
    def weights(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.name != SCALE_CLASS)

    @property
    def parameters(self) -> int:
        return sum(r.parameters for r in self.weights)

    @property
    def label(self) -> str | None:
        """The class holding most parameters (scales never count), or None for no weights."""
        weights = [r for r in self.weights if r.parameters > 0]
        if not weights:
            return None
        return max(weights, key=lambda r: (r.parameters, r.name)).name

    def share(self, row: Row) -> float:
        total = self.parameters
        return row.parameters / total if total and row.name != SCALE_CLASS else 0.0

    def render(self) -> str:
        tensors = sum(r.tensors for r in self.rows)
        lines = [
            f"{self.path}: {len(self.files)} file(s), {tensors:,} tensors, "
            f"{self.parameters:,} parameters",
            f"  {'class':<8}{'dtypes':<22}{'tensors':>9}{'parameters':>18}{'share':>8}"
            f"{'bytes':>16}",
        ]
        for row in self.rows:
            share = "-" if row.name == SCALE_CLASS else f"{self.share(row) * 100:.1f}%"
            lines.append(
                f"  {row.name:<8}{'+'.join(row.dtypes):<22}{row.tensors:>9,}"
                f"{row.parameters:>18,}{share:>8}{row.bytes:>16,}"
            )
        lines.append(f"label: {self.label or 'none (no weight tensors)'}")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "files": [str(f) for f in self.files],
            "label": self.label,
            "parameters": self.parameters,
            "classes": [
                {
                    "class": r.name,
                    "dtypes": list(r.dtypes),
                    "tensors": r.tensors,
                    "parameters": r.parameters,
                    "bytes": r.bytes,
                    "share": round(self.share(r), 6),
                }
                for r in self.rows
            ],
        }


def read_header(path: Path) -> list[Tensor]:
    """The tensors one safetensors file declares, from its header; no tensor data is read."""
    try:
        fd, st = open_regular(path)
    except InputFileError as exc:
        raise PrecisionError(str(exc)) from None
    except OSError as exc:
        raise PrecisionError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            size = st.st_size
            head = handle.read(8)
            if len(head) < 8:
                raise PrecisionError(
                    f"{path}: {size} bytes, too short for a safetensors header "
                    "(8-byte length first); the file is truncated or not safetensors"
                )
            (length,) = struct.unpack("<Q", head)
            if length == 0 or length > MAX_HEADER_BYTES or 8 + length > size:
                raise PrecisionError(
                    f"{path}: header length {length} does not fit the file ({size} bytes); "
                    "the file is truncated or not safetensors (re-download or re-stage it)"
                )
            raw = handle.read(length)
    except OSError as exc:
        raise PrecisionError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PrecisionError(f"{path}: the header is not UTF-8 JSON ({exc})") from None
    except RecursionError:
        raise PrecisionError(
            f"{path}: the header nests too deep to be a safetensors header (a map of tensors)"
        ) from None
    if not isinstance(header, dict):
        raise PrecisionError(f"{path}: the header is a JSON {type(header).__name__}, not an object")
    return [_tensor(path, name, entry) for name, entry in header.items() if name != "__metadata__"]


def _tensor(path: Path, name: str, entry: object) -> Tensor:
    if not isinstance(entry, dict):
        raise PrecisionError(f"{path}: tensor {name!r} is not an object in the header")
    dtype, shape = entry.get("dtype"), entry.get("shape")
    if not isinstance(dtype, str):
        raise PrecisionError(f"{path}: tensor {name!r} has no string 'dtype'")
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise PrecisionError(
            f"{path}: tensor {name!r} has shape {shape!r}; expected a list of sizes >= 0"
        )
    return Tensor(name=name, dtype=dtype, shape=tuple(shape), file=path)


def checkpoint_files(path: Path) -> tuple[Path, ...]:
    """The safetensors files of a checkpoint: a file itself, the shards its index names, or
    every ``*.safetensors`` in the folder (subfolders such as a drafter's are not the model)."""
    if path.is_file():
        return (path,)
    if not path.is_dir():
        fault = not_a_file(path)
        raise PrecisionError(str(fault) if fault else f"{path}: no such file or folder")
    index = path / INDEX_NAME
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            shards = sorted({str(v) for v in dict(weight_map).values()})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PrecisionError(
                f"{index}: unreadable index ({type(exc).__name__}: {exc}); "
                "expected a JSON object with a 'weight_map' of tensor -> shard file"
            ) from None
        try:
            for shard in shards:
                inside(path, shard, source=str(index), field="weight_map")
        except OutsideFolderError as exc:
            raise PrecisionError(str(exc)) from None
        missing = [s for s in shards if not (path / s).is_file()]
        if missing:
            raise PrecisionError(
                f"{index}: names shard(s) that are not there: {', '.join(missing)}; "
                "the checkpoint is incomplete"
            )
        return tuple(path / s for s in shards)
    files = tuple(sorted(path.glob("*.safetensors")))
    if not files:
        raise PrecisionError(
            f"{path}: no *.safetensors files and no {INDEX_NAME}; "
            "the census reads safetensors checkpoints only"
        )
    return files


def _stems(name: str, suffixes: Iterable[str]) -> list[str]:
    return [name[: len(name) - len(s)] for s in suffixes if s and name.endswith(s)]


def classify(tensors: Iterable[Tensor]) -> dict[str, tuple[str, int]]:
    """Per tensor name: (class, parameters). A scale tensor is recognised by its name sitting
    next to a quantised weight of the same stem; the U8 weight it scales is packed fp4."""
    by_name = {t.name: t for t in tensors}
    scale_stems: dict[str, list[str]] = {}
    for tensor in by_name.values():
        for stem in _stems(tensor.name, SCALE_SUFFIXES):
            scale_stems.setdefault(stem, []).append(tensor.name)
    classes: dict[str, tuple[str, int]] = {}
    for tensor in by_name.values():
        stems = [tensor.name, *_stems(tensor.name, PACKED_SUFFIXES)]
        scales = [s for stem in stems for s in scale_stems.get(stem, ()) if s != tensor.name]
        if tensor.dtype == "U8" and scales:
            classes[tensor.name] = ("fp4", 2 * tensor.elements)
            classes.update((s, (SCALE_CLASS, by_name[s].elements)) for s in scales)
        elif tensor.dtype in ("F8_E4M3", "F8_E5M2") and scales:
            classes[tensor.name] = ("fp8", tensor.elements)
            classes.update((s, (SCALE_CLASS, by_name[s].elements)) for s in scales)
    for tensor in by_name.values():
        if tensor.name not in classes:
            name = PLAIN_CLASSES.get(tensor.dtype, tensor.dtype.lower())
            classes[tensor.name] = (name, tensor.elements)
    return classes


def census(path: Path) -> Census:
    files = checkpoint_files(path)
    tensors = [t for file in files for t in read_header(file)]
    classes = classify(tensors)
    rows: dict[str, dict[str, Any]] = {}
    for tensor in tensors:
        name, parameters = classes[tensor.name]
        row = rows.setdefault(name, {"dtypes": set(), "tensors": 0, "parameters": 0, "bytes": 0})
        row["dtypes"].add(tensor.dtype)
        row["tensors"] += 1
        row["parameters"] += parameters
        row["bytes"] += tensor.elements * ITEM_BYTES.get(tensor.dtype, 0)
    ordered = sorted(rows.items(), key=lambda kv: (kv[0] == SCALE_CLASS, -kv[1]["parameters"]))
    return Census(
        path=path,
        files=files,
        rows=tuple(
            Row(
                name=name,
                dtypes=tuple(sorted(row["dtypes"])),
                tensors=row["tensors"],
                parameters=row["parameters"],
                bytes=row["bytes"],
            )
            for name, row in ordered
        ),
    )


def normalise(label: str) -> str | None:
    """The census class a recipe label means (mxfp4 and nvfp4 are fp4), or None if unknown."""
    return PRECISION_LABELS.get(label.strip().lower())


def disagreement(label: str, found: Census) -> str | None:
    """Why the recipe's label does not match the checkpoint, or None when it does."""
    wanted = normalise(label)
    if wanted is None:
        known = ", ".join(sorted(PRECISION_LABELS))
        return f"model.precision {label!r} is not a label the census knows ({known})"
    if found.label is None or wanted == found.label:
        return None
    top = found.weights[0]
    return (
        f"model.precision is {label!r} but the checkpoint {found.path} is {found.label} "
        f"({found.share(top) * 100:.1f}% of {found.parameters:,} parameters are "
        f"{'+'.join(top.dtypes)}); fix the recipe's label or stage the right checkpoint "
        "(`infx precision PATH` shows the census)"
    )


@dataclass
class PrecisionCheck:
    """The preflight check of one run: where checkpoints already are on this machine, and what
    a disagreement does (``fail``: the point fails before any server starts; ``warn``: one
    warning per recipe and checkpoint; ``off``). Censuses are cached per checkpoint, since every
    point of a recipe asks about the same one."""

    mode: Mode
    staged_root: Path | None
    download_root: Path
    _found: dict[Path, Census | PrecisionError] = field(default_factory=dict)
    _warned: set[str] = field(default_factory=set)

    def local_checkpoint(self, point: Point) -> Path | None:
        """The point's served checkpoint if it is complete on this machine; never downloads
        or installs anything (a GPU node stages its checkpoints after preflight)."""
        from pytest_infx.engines.base import is_embedded
        from pytest_infx.launch.staging import Checkpoint, missing_files

        model = point.recipe.model
        if point.recipe.engine.embedded:
            return _embedded_model(model.path or "embedded:target")
        if model.path and not is_embedded(model.path):
            path = Path(model.path)
            return path if path.exists() else None
        checkpoint = Checkpoint(model.hub_id)
        for root in (r for r in (self.staged_root, self.download_root) if r is not None):
            folder = root / checkpoint.dir_name
            if folder.is_dir() and not missing_files(folder, checkpoint):
                return folder
        return None

    def census_of(self, path: Path) -> Census:
        if path not in self._found:
            try:
                self._found[path] = census(path)
            except PrecisionError as exc:
                self._found[path] = exc
        value = self._found[path]
        if isinstance(value, PrecisionError):
            raise value
        return value

    def problem(self, point: Point) -> str | None:
        """The message for a point whose label disagrees with its local checkpoint."""
        if self.mode == "off":
            return None
        path = self.local_checkpoint(point)
        if path is None:
            return None
        try:
            found = self.census_of(path)
        except PrecisionError as exc:
            return f"{point.recipe_key}: precision check: {exc}"
        why = disagreement(point.recipe.model.precision, found)
        return None if why is None else f"{point.recipe_key}: {why}"

    def preflight(self, point: Point) -> list[str]:
        """The point's preflight problems: the disagreement in ``fail`` mode; in ``warn`` mode
        a PrecisionWarning (once per message, located at the recipe) and none."""
        message = self.problem(point)
        if message is None:
            return []
        if self.mode == "fail":
            return [message]
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn_explicit(
                PrecisionWarning(message), PrecisionWarning, str(point.path), point.line
            )
        return []


def check_for(settings: Settings) -> PrecisionCheck | None:
    """The run's check from its options, or None when it is off."""
    mode = settings.precision_check
    if mode not in MODES:
        raise UsageError(
            f"ini infx_precision_check = {mode!r}: use warn, fail or off "
            "(or pass --infx-precision-check)"
        )
    if mode == "off":
        return None
    return PrecisionCheck(
        mode="fail" if mode == "fail" else "warn",
        staged_root=settings.roots.staged,
        download_root=settings.roots.download,
    )


class PrecisionWarning(UserWarning):
    """A recipe's precision label disagrees with its checkpoint (``--infx-precision-check``)."""


def _embedded_model(path: str) -> Path | None:
    from pytest_infx.engines import embedded

    engine = embedded.installed()
    if engine is None:
        return None
    named = {"embedded:target": engine.model_dir, "embedded:draft": engine.draft_dir}
    return named.get(path)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "precision",
        help="dtype census of a safetensors checkpoint and its precision label",
        description="Read only the safetensors headers of PATH (a file, a folder, or a sharded "
        "checkpoint with model.safetensors.index.json), count parameters per precision class "
        "and print the label the checkpoint deserves (fp4, fp8, bf16, ...).",
    )
    parser.add_argument(
        "path", type=Path, metavar="PATH", help="safetensors file, checkpoint folder or index"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--expect",
        metavar="LABEL",
        default=None,
        help="exit 1 when the label differs from LABEL (a recipe's model.precision)",
    )
    parser.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    try:
        found = census(args.path)
    except PrecisionError as exc:
        print(f"infx precision: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(found.as_json(), indent=2) if args.json else found.render())
    if args.expect is not None:
        why = disagreement(args.expect, found)
        if why is not None:
            print(f"infx precision: {why}", file=sys.stderr)
            return 1
    return 0
