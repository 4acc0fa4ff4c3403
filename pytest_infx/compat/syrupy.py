"""The syrupy names the golden-curve extension builds on (see
:mod:`pytest_infx.compat.versions`).

A custom extension subclasses syrupy's single-file extension and overrides some of its methods;
syrupy documents that as the way to extend it, but the classes live in its internal modules and
their signatures change between majors, so they are imported here only, and
:data:`EXTENSION_METHODS` is what the tests hold against the installed syrupy.
"""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion
from syrupy.data import SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

__all__ = [
    "EXTENSION_METHODS",
    "SINCE",
    "PyTestLocation",
    "SingleFileSnapshotExtension",
    "SnapshotAssertion",
    "SnapshotCollection",
    "SnapshotCollections",
    "WriteMode",
]

EXTENSION_METHODS: dict[str, tuple[str, ...]] = {
    "dirname": ("test_location",),
    "discovery_dirname": ("test_location",),
    "get_snapshot_name": ("test_location", "index"),
    "get_file_basename": ("test_location", "index"),
    "matches_test_location": ("test_location", "snapshot_location"),
    "discover_snapshots": ("test_location",),
    "delete_snapshots": ("snapshot_location", "snapshot_names"),
    "serialize": ("data",),
    "matches": ("serialized_data", "snapshot_data"),
    "diff_lines": ("serialized_data", "snapshot_data"),
    "write_snapshot": ("snapshot_location", "snapshots"),
    "write_snapshot_collection": ("snapshot_collection",),
}
"""Each method of syrupy's extension that the golden extension overrides, with the parameters
(beyond ``self``/``cls``) it takes and syrupy passes."""

SINCE: dict[str, str] = {"discovery_dirname": "7.0.0", "matches_test_location": "7.0.1"}
"""The overridden methods older syrupy releases lack (and so never call)."""
