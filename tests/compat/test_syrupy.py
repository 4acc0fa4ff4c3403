from __future__ import annotations

import inspect
from importlib.metadata import version

import pytest
from packaging.version import Version

from pytest_infx.compat.syrupy import EXTENSION_METHODS, SINCE, SingleFileSnapshotExtension
from pytest_infx.golden.extension import GoldenCurveExtension


@pytest.mark.parametrize("method", sorted(EXTENSION_METHODS))
def test_syrupy_passes_the_parameters_the_golden_extension_takes(method: str) -> None:
    if Version(version("syrupy")) < Version(SINCE.get(method, "0")):
        assert not hasattr(SingleFileSnapshotExtension, method)
        return
    theirs = inspect.signature(getattr(SingleFileSnapshotExtension, method)).parameters
    ours = inspect.signature(getattr(GoldenCurveExtension, method)).parameters
    for name in EXTENSION_METHODS[method]:
        assert name in theirs, f"syrupy's {method} no longer takes {name!r}"
        assert name in ours or any(p.kind is p.VAR_KEYWORD for p in ours.values()), (method, name)


def test_the_list_names_every_syrupy_method_the_golden_extension_overrides() -> None:
    overridden = {
        name
        for name, value in vars(GoldenCurveExtension).items()
        if not name.startswith("_")
        and callable(getattr(SingleFileSnapshotExtension, name, None))
        and (callable(value) or isinstance(value, classmethod | staticmethod))
    }
    installed = Version(version("syrupy"))
    expected = {m for m in EXTENSION_METHODS if installed >= Version(SINCE.get(m, "0"))}
    assert overridden == expected
