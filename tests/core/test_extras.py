"""A missing optional dependency is one line naming the extra to install."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from pytest_infx.extras import EXTRA_OF, MissingExtra, missing_message, require
from pytest_infx.usage import UsageError

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _project() -> dict[str, object]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert isinstance(project, dict)
    return project


def _names(lines: list[str]) -> set[str]:
    return {Requirement(line).name.lower() for line in lines}


def test_an_installed_module_is_no_problem() -> None:
    require("sqlalchemy", "numpy", purpose="anything")


def test_a_missing_module_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXTRA_OF, "no_such_module_infx", ("no-such-dist", "history"))
    with pytest.raises(MissingExtra) as raised:
        require("numpy", "no_such_module_infx", purpose="the results history")
    assert isinstance(raised.value, UsageError)
    assert str(raised.value) == missing_message("no_such_module_infx", "the results history")
    assert "pip install 'pytest-infx[history]'" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_plain_install_brings_none_of_the_optional_distributions() -> None:
    project = _project()
    plain = _names(list(project["dependencies"]))  # type: ignore[call-overload]
    optional = {distribution.lower() for distribution, _ in EXTRA_OF.values()}
    assert not plain & optional, plain & optional
    assert {"tokenizers", "huggingface-hub", "pytest-xdist"}.isdisjoint(plain)


@pytest.mark.parametrize("name", sorted(EXTRA_OF))
def test_each_extra_named_installs_its_distribution_as_do_run_and_dev(name: str) -> None:
    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    distribution, extra = EXTRA_OF[name]
    for which in (extra, "run", "dev"):
        assert distribution.lower() in _names(extras[which]), (distribution, which)


def test_pytest_has_no_upper_bound() -> None:
    """Nothing is known to break on a newer pytest (9.2 is checked: compat/versions.py), so a
    plain install never downgrades a project's pytest."""
    pytest_line = next(
        Requirement(line)
        for line in _project()["dependencies"]  # type: ignore[attr-defined]
        if Requirement(line).name == "pytest"
    )
    assert [spec.operator for spec in pytest_line.specifier] == [">="], pytest_line
    assert pytest_line.specifier.contains("9.2.0") and pytest_line.specifier.contains("10.0")
