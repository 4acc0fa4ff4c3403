"""Golden curves as syrupy snapshots, compared with tolerance.

syrupy compares serialized text and rewrites a snapshot whenever the texts differ; for measured
ALs that would mean every run is a "change". This extension keeps syrupy's workflow (fail on
drift, ``--snapshot-update`` to record) but decides "matches" with the cell-by-cell tolerance of
:mod:`pytest_infx.golden.compare`, stores each curve as ``<golden dir>/<curve name>.yaml`` in the
golden format, and never takes part in syrupy's unused-snapshot cleanup (that cleanup would delete
the golden files of curves a run did not touch).

syrupy warns "Can not relate snapshot location/name to the test location" when a snapshot does not
live next to its test; the location check is overridden here and the name warning is filtered
around the write, so no ini filter is needed. Should another code path trigger them, the ini
filter is ``filterwarnings = ignore:\\s*Can not relate snapshot:UserWarning`` (it must live in the
ini file: the message starts with a newline and ``-W`` escapes the regex).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

from pytest_infx.compat.syrupy import (
    SingleFileSnapshotExtension,
    SnapshotCollection,
    SnapshotCollections,
    WriteMode,
)
from pytest_infx.files.locks import folder_lock
from pytest_infx.golden.compare import (
    DEFAULT_Z,
    CompareOptions,
    Comparison,
    compare_curves,
    updated_curve,
)
from pytest_infx.golden.curve import Curve
from pytest_infx.golden.io import (
    GoldenFileError,
    dump_curve,
    header_lines,
    loads_curve,
    read_curve,
    write_curve,
)
from pytest_infx.settings import DEFAULT_GOLDEN_DIR

if TYPE_CHECKING:
    from pytest_infx.compat.syrupy import PyTestLocation, SnapshotAssertion

_RELATE_WARNING: Final = r"\s*Can not relate snapshot"


class GoldenDriftError(AssertionError):
    """The measured curve does not match its golden curve; ``comparison`` has the details."""

    def __init__(self, message: str, comparison: Comparison | None) -> None:
        super().__init__(message)
        self.comparison = comparison


class _CurveText(str):
    """Serialized curve that still carries the curve and the options, for the merging writer."""

    curve: Curve
    options: CompareOptions

    def __new__(cls, curve: Curve, options: CompareOptions) -> _CurveText:
        text = super().__new__(cls, dump_curve(curve))
        text.curve = curve
        text.options = options
        return text


class GoldenCurveExtension(SingleFileSnapshotExtension):
    """Use through :func:`assert_curve`; the snapshot name must be the curve name."""

    file_extension = "yaml"
    _write_mode = WriteMode.TEXT
    folder: ClassVar[Path | None] = None
    """Where the curves are (:func:`in_folder` sets it); ``None``: ``golden`` under the
    rootdir."""

    def __init__(self) -> None:
        self.options = CompareOptions()
        self.location = "<golden>"
        self.last_comparison: Comparison | None = None

    def configure(self, options: CompareOptions, *, location: str) -> None:
        self.options = options
        self.location = location

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        if cls.folder is not None:
            return str(cls.folder)
        config = getattr(test_location.item, "config", None)
        root = Path(config.rootpath) if config is not None else Path.cwd()
        return str(root / DEFAULT_GOLDEN_DIR)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
        if not isinstance(index, str):
            raise ValueError(
                "a golden curve snapshot is named after its curve: call "
                "assert_curve(snapshot, curve) (or snapshot(name=curve.name))"
            )
        return index

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: Any) -> str:
        return cls.get_snapshot_name(test_location=test_location, index=index)

    @classmethod
    def matches_test_location(
        cls, *, test_location: PyTestLocation, snapshot_location: str
    ) -> bool:
        return Path(snapshot_location).parent == Path(cls.dirname(test_location=test_location))

    def discover_snapshots(
        self, *, test_location: PyTestLocation, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Nothing: a golden file is never "unused", so syrupy must never delete one."""
        return SnapshotCollections()

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        """Never delete a golden file; removing a curve is a reviewed change, not a cleanup."""

    def serialize(self, data: Any, **_: Any) -> str:
        if not isinstance(data, Curve):
            raise TypeError(
                f"the golden curve extension serializes Curve values, not {type(data).__name__}"
            )
        return _CurveText(data, self.options)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        return self._compare(serialized_data, snapshot_data).ok

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        if not snapshot_data:
            return
        try:
            comparison = self._compare(serialized_data, snapshot_data)
        except GoldenFileError as exc:
            yield str(exc)
            return
        yield from describe(comparison, self.options)

    def _compare(self, serialized_data: Any, snapshot_data: Any) -> Comparison:
        measured = _measured(serialized_data, self.location)
        golden = loads_curve(str(snapshot_data), name=measured.name, source=self.location)
        self.last_comparison = compare_curves(golden, measured, self.options)
        return self.last_comparison

    @classmethod
    def write_snapshot(
        cls,
        *,
        snapshot_location: str,
        snapshots: list[Any],
        name_order: dict[str, int] | None = None,
    ) -> None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_RELATE_WARNING, category=UserWarning)
            super().write_snapshot(
                snapshot_location=snapshot_location, snapshots=snapshots, name_order=name_order
            )

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: SnapshotCollection, name_order: dict[str, int] | None = None
    ) -> None:
        """Merge into the file on disk under a folder lock, then replace it atomically.

        Parallel workers may record cells of the same curve; the lock serialises their
        read-merge-write so none overwrites another's cells. Comment lines a person wrote in
        the body are kept at the lines they annotate.
        """
        path = Path(snapshot_collection.location)
        data = next(iter(snapshot_collection)).data
        if isinstance(data, _CurveText):
            measured, options = data.curve, data.options
        else:
            measured, options = _measured(data, str(path)), CompareOptions()
        with folder_lock(path.parent):
            golden, comments = read_curve(path) if path.exists() else (None, None)
            updated = _with_notes(updated_curve(golden, measured, options), golden)
            write_curve(_kept_provenance(updated, golden, measured), path, comments)


def assert_curve(
    snapshot: SnapshotAssertion,
    measured: Curve,
    *,
    tolerance: float | None = None,
    stderr: Mapping[tuple[str, int], float] | None = None,
    z: float = DEFAULT_Z,
    partial: bool = False,
    rebaseline: bool = False,
    folder: Path | None = None,
) -> Comparison | None:
    """Gate ``measured`` against the golden curve of the same name; the one call tests make.

    ``tolerance`` overrides the golden header's (default 0.05 AL, absolute); ``stderr`` maps
    ``(mode, k)`` to the standard error of the measured cell, adding ``z`` of them to its
    allowance. ``partial`` compares only the measured cells (one item per cell). ``rebaseline``
    compares exactly, so ``--snapshot-update`` rewrites every cell that differs at all.
    ``folder`` is the golden folder, which the caller takes from the run's settings (default
    ``golden`` under the rootdir).
    Returns the comparison (None when the golden file was just created) and raises
    :class:`GoldenDriftError` listing only the drifted and missing cells.
    """
    __tracebackhide__ = True
    options = CompareOptions(
        tolerance=0.0 if rebaseline else tolerance,
        stderr={} if rebaseline else dict(stderr or {}),
        z=0.0 if rebaseline else z,
        partial=partial,
    )
    assertion = snapshot.use_extension(in_folder(folder))
    extension = assertion.extension
    if not isinstance(extension, GoldenCurveExtension):
        raise TypeError("snapshot.use_extension did not give a GoldenCurveExtension")
    location = extension.get_location(test_location=assertion.test_location, index=measured.name)
    extension.configure(options, location=location)
    if assertion(name=measured.name) == measured:
        return extension.last_comparison
    result = assertion.executions[assertion.num_executions - 1]
    if result.exception is not None:
        message = f"golden curve {measured.name}: {result.exception}"
    elif result.recalled_data is None:
        message = (
            f"golden curve {measured.name} does not exist ({location}); "
            "record it with --snapshot-update"
        )
    else:
        lines = list(extension.diff_lines(result.asserted_data, result.recalled_data))
        message = f"golden curve {measured.name} ({location}) drifted:\n  " + "\n  ".join(lines)
    raise GoldenDriftError(message, extension.last_comparison)


def describe(comparison: Comparison, options: CompareOptions) -> Iterator[str]:
    """Summary line, then one line per drifted or missing cell."""
    allowance = f"tolerance {comparison.tolerance:.2f} AL"
    if options.stderr and options.z:
        allowance += f" + {options.z:g} x stderr"
    yield (
        f"{len(comparison.drifted)} of {comparison.checked} compared cells out of {allowance}, "
        f"{len(comparison.missing)} on one side only"
    )
    yield from comparison.lines()


@functools.cache
def in_folder(folder: Path | None) -> type[GoldenCurveExtension]:
    """The extension that keeps its curves in ``folder``: syrupy asks a class, not an
    instance, where its snapshots are, so each folder is a class (one per folder, so syrupy
    groups the writes of one folder together)."""
    if folder is None:
        return GoldenCurveExtension

    class InFolder(GoldenCurveExtension):
        pass

    InFolder.folder = folder
    return InFolder


def _with_notes(curve: Curve, golden: Curve | None) -> Curve:
    """``curve`` keeping the free comment lines of the golden file's header, which a person
    wrote and a new measurement's provenance knows nothing of."""
    if golden is None:
        return curve
    notes = (*golden.header.notes, *(n for n in curve.header.notes if n not in golden.header.notes))
    if notes == curve.header.notes:
        return curve
    return dataclasses.replace(curve, header=dataclasses.replace(curve.header, notes=notes))


def _kept_provenance(curve: Curve, golden: Curve | None, measured: Curve) -> Curve:
    """``curve`` with notes giving, for the golden cells a partial update did not measure, the
    header lines of the run that recorded them: the new header alone would credit this run
    with cells it never measured."""
    if golden is None:
        return curve
    kept = [(mode, k) for mode, k, _ in golden.cells() if not measured.has(mode, k)]
    if not kept:
        return curve
    new = set(header_lines(dataclasses.replace(curve.header, notes=())))
    old = header_lines(dataclasses.replace(golden.header, notes=()))
    earlier = [line.removeprefix("#").strip() for line in old if line not in new]
    if not earlier:
        return curve
    shown = ", ".join(f"k={k} {mode}" for mode, k in kept)
    added = [f"not re-recorded ({shown}), recorded with: {line}" for line in earlier]
    notes = (*curve.header.notes, *(n for n in added if n not in curve.header.notes))
    return dataclasses.replace(curve, header=dataclasses.replace(curve.header, notes=notes))


def _measured(data: Any, location: str) -> Curve:
    if isinstance(data, _CurveText):
        return data.curve
    name = Path(location).name.removesuffix(".yaml")
    return loads_curve(str(data), name=name, source=location)
