"""The golden curve files, read once per lint context.

The golden rules judge the curves and the recipe rules check cells against them, so both read
them from here rather than from each other.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from pytest_infx.golden.curve import Curve
from pytest_infx.golden.io import GoldenFileError, load_curve
from pytest_infx.lint.context import Facts, LintContext


def _compute_golden_files(ctx: LintContext) -> dict[str, Path]:
    folder = ctx.golden_dir
    if folder is None or not folder.is_dir():
        return {}
    return {
        p.name.removesuffix(".yaml"): p
        for p in sorted(folder.glob("*.yaml"))
        if not p.name.startswith(".")
    }


def golden_files(ctx: LintContext) -> dict[str, Path]:
    """Curve name (file stem) -> file, for every ``*.yaml`` in the golden folder: one that is
    not a regular file (a pipe, a folder, a link loop) too, so golden-format names what it is
    instead of the registry calling the curve missing."""
    return ctx.facts(_CurveFacts).golden_files


def _compute_load_curves(ctx: LintContext) -> dict[str, Curve | GoldenFileError]:
    def load() -> dict[str, Curve | GoldenFileError]:
        loaded: dict[str, Curve | GoldenFileError] = {}
        for name, path in golden_files(ctx).items():
            try:
                loaded[name] = load_curve(path)
            except GoldenFileError as exc:
                loaded[name] = exc
        return loaded

    return ctx.stored("golden.curves", ctx.golden_signature, load)


def load_curves(ctx: LintContext) -> dict[str, Curve | GoldenFileError]:
    return ctx.facts(_CurveFacts).load_curves


class _CurveFacts(Facts):
    """The golden files and their curves, read once for every golden rule."""

    @cached_property
    def golden_files(self) -> dict[str, Path]:
        return _compute_golden_files(self.ctx)

    @cached_property
    def load_curves(self) -> dict[str, Curve | GoldenFileError]:
        return _compute_load_curves(self.ctx)
