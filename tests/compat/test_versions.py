"""The internal pytest, xdist and syrupy names the package touches are the ones listed, only
pytest_infx.compat touches them, they exist on the installed versions, and those versions are
the ones they were checked with.

Which names the package touches is read with ``ast``: every ``x._name`` whose ``_name`` the
package does not define itself, and every import from a private module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import pytest_infx
from pytest_infx.compat.versions import CHECKED, NAMES, PrivateName, outside_checked

PACKAGE = Path(pytest_infx.__file__).parent
STDLIB = {
    "_replace": "a named tuple's documented copy-with-changes",
    "_SubParsersAction": "the type argparse's add_subparsers() returns",
}


def _has(entry: PrivateName) -> bool:
    module_name, _, class_name = entry.owner.partition(":")
    module = importlib.import_module(module_name)
    if not class_name:
        return hasattr(module, entry.name)
    owner = getattr(module, class_name)
    for klass in owner.__mro__:
        if entry.name in vars(klass) or entry.name in vars(klass).get("__annotations__", {}):
            return True
    assigned = rf"\bself\.{re.escape(entry.name)}\b\s*(:[^=\n]+)?="
    return re.search(assigned, inspect.getsource(owner)) is not None


def _module_name(path: Path) -> str:
    parts = ["pytest_infx", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private_names_touched() -> dict[str, set[str]]:
    """Each private name of another package the package uses, with the modules using it."""
    defined: set[str] = set()
    used: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for part in ast.walk(target):
                        if isinstance(part, ast.Name):
                            defined.add(part.id)
                        elif isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name):
                            if part.value.id in ("self", "cls"):
                                defined.add(part.attr)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                if isinstance(node, ast.ImportFrom):
                    modules = [node.module or ""]
                else:
                    modules = [alias.name for alias in node.names]
                for name in modules:
                    if any(p.startswith("_") and not p.startswith("__") for p in name.split(".")):
                        used.setdefault(name, set()).add(module)
            if isinstance(node, ast.Attribute) and re.fullmatch(r"_[A-Za-z]\w*", node.attr):
                if not node.attr.endswith("__"):
                    used.setdefault(node.attr, set()).add(module)
    return {name: users for name, users in used.items() if name not in defined}


def _token(entry: PrivateName) -> str:
    """What the package's source spells: the private name, or the private module imported."""
    return entry.name if entry.name.startswith("_") else entry.owner


@pytest.mark.parametrize("distribution", sorted(CHECKED))
def test_the_installed_version_is_one_the_private_names_were_checked_with(
    distribution: str,
) -> None:
    problem = outside_checked(distribution, version(distribution))
    assert problem is None, problem


def test_a_version_outside_the_checked_range_names_what_to_check() -> None:
    assert outside_checked("pytest-xdist", "3.8.0") is None
    assert outside_checked("pytest-xdist", "3.6.0") is not None
    newer = outside_checked("pytest-xdist", "3.9.0")
    assert newer is not None
    assert newer.startswith("pytest-xdist 3.9.0 is outside the versions pytest-infx was checked")
    assert "(>=3.6.1,<3.9)" in newer
    assert "DSession._clone_node, DSession._active_nodes" in newer
    assert outside_checked("pytest", "9.2.0") is None
    assert outside_checked("pytest", "10.0.0") is None
    pytest_old = outside_checked("pytest", "8.4.2")
    assert pytest_old is not None and "Session._fixturemanager" in pytest_old


def test_pyproject_requires_the_checked_ranges(request: pytest.FixtureRequest) -> None:
    pyproject = tomllib.loads((request.config.rootpath / "pyproject.toml").read_text())
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    lines = [*project["dependencies"], *extras["golden"], *extras["xdist"]]
    required = {req.name: req.specifier for req in map(Requirement, lines)}
    for distribution, checked in CHECKED.items():
        assert required[distribution] == SpecifierSet(checked), (
            f"pyproject requires {distribution}{required[distribution]}; "
            f"the private names were checked with {checked}"
        )


@pytest.mark.parametrize("entry", NAMES, ids=lambda e: f"{e.owner}.{e.name}")
def test_each_private_name_exists_on_the_installed_version(entry: PrivateName) -> None:
    """A name listed for some releases only is absent from the others, so the code that
    touches it is right to expect it only there."""
    installed = version(entry.distribution)
    if entry.versions and Version(installed) not in SpecifierSet(entry.versions):
        assert not _has(entry), (
            f"{entry.distribution} {installed} has {entry.owner}.{entry.name}, listed as only "
            f"in {entry.versions}"
        )
        return
    assert _has(entry), (
        f"{entry.distribution} {version(entry.distribution)} has no {entry.owner}.{entry.name}, "
        f"which {entry.user} uses: {entry.why}"
    )


def test_a_name_gone_from_the_installed_version_is_noticed() -> None:
    gone = PrivateName("pytest-xdist", "xdist.dsession:DSession", "_no_such_name", "x", "y")
    assert not _has(gone)
    gone_module = PrivateName("pytest", "_pytest._code.code", "NoSuchRepr", "x", "y")
    assert not _has(gone_module)


def test_every_private_name_the_package_touches_is_listed_with_its_users() -> None:
    touched = {
        name: users for name, users in _private_names_touched().items() if name not in STDLIB
    }
    listed: dict[str, set[str]] = {}
    for entry in NAMES:
        if entry.name.startswith("_") or entry.owner.startswith("_"):
            listed.setdefault(_token(entry), set()).add(entry.user)
    assert touched == listed


@pytest.mark.parametrize("entry", NAMES, ids=lambda e: f"{e.owner}.{e.name}")
def test_each_listed_name_is_touched_in_compat_and_only_there(entry: PrivateName) -> None:
    assert entry.user.startswith("pytest_infx.compat."), entry
    source = importlib.import_module(entry.user).__file__
    assert source is not None
    assert re.search(rf"\b{re.escape(entry.name)}\b", Path(source).read_text()), entry


FOREIGN = ("_pytest", "xdist", "syrupy")


def test_only_compat_imports_xdist_syrupy_or_pytests_private_modules() -> None:
    strays = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module.startswith("pytest_infx.compat"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [alias.name for alias in node.names]
                )
                strays += [f"{module}: {n}" for n in names if n.split(".")[0] in FOREIGN]
    assert not strays, strays
