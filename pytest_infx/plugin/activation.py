"""Whether pytest-infx acts in this run at all.

pytest loads every installed plugin in every run of its environment, so a project that never
asked for pytest-infx would otherwise get its recipe collector (a ``recipes/`` folder is a
common name), its lint items under a foreign ``-m lint``, its short options and its markers. The
plugin acts only where the repository opted in: its ini file sets an ``infx`` key
(``infx = true``, ``infx_recipes = ...``, any ``infx_*``), ``-o`` overrides one, or the command
line names pytest-infx (an ``--infx-*`` option, ``-p infx``). Elsewhere the session object that
answers pytest's hooks is never registered, so none of them runs. Other packages' plugins are
left alone: syrupy, which the golden extra brings, is the project's as much as ours once
installed, and whether a project wants it cannot be told from how it was installed, so a
foreign run gets syrupy exactly as syrupy's own users expect it.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

PLUGIN_NAMES = frozenset({"infx", "pytest_infx", "pytest_infx.plugin"})
"""What ``-p`` may name to ask for pytest-infx: its entry point's name and its module."""


def decide(config: pytest.Config, args: Sequence[str]) -> bool:
    """Decided once, before the initial conftests load (the short option names are added then);
    the answer is whether the session is registered. ``args`` are the command line with the ini
    file's and ``PYTEST_ADDOPTS``'s options in front, as pytest hands them to that hook."""
    return asked_on_command_line(args) or ini_opts_in(config.inipath, _overrides(config))


def asked_on_command_line(args: Iterable[str]) -> bool:
    pending_plugin = False
    for arg in args:
        if pending_plugin:
            if arg in PLUGIN_NAMES:
                return True
            pending_plugin = False
        elif arg == "-p":
            pending_plugin = True
        elif arg.startswith("-p") and arg[2:] in PLUGIN_NAMES:
            return True
        elif arg.startswith("--infx-"):
            return True
    return False


def _overrides(config: pytest.Config) -> list[str]:
    given = getattr(config.known_args_namespace, "override_ini", None) or []
    return [entry.split("=", 1)[0].strip() for entry in given]


def ini_opts_in(inipath: Path | None, overridden: Iterable[str] = ()) -> bool:
    """Whether pytest's section of the ini file (or a ``-o`` override) has an ``infx`` key."""
    if any(_ours(name) for name in overridden):
        return True
    if inipath is None:
        return False
    return any(_ours(name) for name in _ini_keys(inipath))


def _ours(name: str) -> bool:
    return name == "infx" or name.startswith("infx_")


def _ini_keys(inipath: Path) -> list[str]:
    """The keys of pytest's own section, read the way pytest finds it: ``[tool.pytest.ini_options]``
    (or pytest 9's ``[tool.pytest]``) of a pyproject.toml, ``[pytest]`` of pytest.ini, .pytest.ini
    and tox.ini, ``[tool:pytest]`` of setup.cfg. pytest has already parsed the file, so a file it
    accepted parses here too; one that does not is pytest's error to report, not ours."""
    try:
        text = inipath.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    if inipath.suffix == ".toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return []
        pytest_table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        if not isinstance(pytest_table, dict):
            return []
        keys = list(pytest_table)
        ini_options = pytest_table.get("ini_options", {})
        return keys + (list(ini_options) if isinstance(ini_options, dict) else [])
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text, source=str(inipath))
    except configparser.Error:
        return []
    section = "tool:pytest" if inipath.name == "setup.cfg" else "pytest"
    return list(parser[section]) if parser.has_section(section) else []
