"""The options, ini keys and variables checked at configure, in one place, before collection
or any server starts: a value that cannot work is one usage line there, never an error of
every item later. Reading them into Settings is :mod:`.options`' part, and the checks it makes
while reading run here too."""

from __future__ import annotations

import itertools
import os

import pytest

import pytest_infx.plugin.options as options
from pytest_infx.plugin.state import RunState

PATH_OPTIONS = (
    "--infx-results",
    "--infx-recipes",
    "--infx-dataset-dir",
    "--infx-staged-root",
    "--infx-download-root",
    "--infx-lint-root",
)


def check(config: pytest.Config) -> None:
    """The first thing configure does; an xdist worker only reads the booleans, since its
    controller checked the rest and the worker's command line is not the user's."""
    options.check_ini_booleans(config)
    if RunState.of(config).worker:
        return
    _check_rootdir(config)
    options.settings(config)


def _check_rootdir(config: pytest.Config) -> None:
    """pytest picks the rootdir and ini file before it loads the plugin, so the folder in
    ``--infx-results /tmp/x`` is taken for a test path there: the run would start from that
    folder without the project's ini file, collect nothing and exit 5, which CI reads as
    "nothing to test". Said instead, with the form that works."""
    from pytest_infx.compat.pytest import setup_from_paths

    expected = setup_from_paths(config)
    if expected == (config.rootpath, config.inipath):
        return
    args = list(config.invocation_params.args)
    for flag, value in itertools.pairwise(args):
        if flag in PATH_OPTIONS and os.path.lexists(config.invocation_params.dir / value):
            raise pytest.UsageError(
                f"{flag} {value}: pytest took this folder for a test path before pytest-infx"
                f" was loaded, and would run from {config.rootpath} without the ini file of"
                f" {expected[0]}; write {flag}={value}"
            )
