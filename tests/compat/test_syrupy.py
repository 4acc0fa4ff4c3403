from __future__ import annotations

import inspect

import pytest

from pytest_infx.compat.syrupy import EXTENSION_METHODS, SingleFileSnapshotExtension
from pytest_infx.golden.extension import GoldenCurveExtension


@pytest.mark.parametrize("method", sorted(EXTENSION_METHODS))
def test_syrupy_passes_the_parameters_the_golden_extension_takes(method: str) -> None:
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
    assert overridden == set(EXTENSION_METHODS)
