"""The kinds other packages provide are read once per run from the ``pytest_infx_kinds`` hook:
a whole kind joins the built-in ones under its name, with its marker; something that is not
a kind, or a name that is taken or no marker name, stops the run at configure, naming the
provider. The toy kind runs end to end in tests/kinds/test_toykind.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pytest_infx.plugin.kinds as kinds
from pytest_infx.plugin.collect.items import recipe_point
from pytest_infx.plugin.run.kinds import ADAPTERS

pytest_plugins = ["pytester"]

TOYKIND = Path(__file__).resolve().parents[1] / "kinds" / "toykind"
OFFER = """
from toykind import TOY, ToyKind


class Renamed(ToyKind):
    name = {name!r}


def pytest_infx_kinds():
    return [{offer}]
"""


def _configure(pytester: pytest.Pytester, offer: str, name: str = "toy") -> pytest.Config:
    pytester.makeini("[pytest]\ninfx = true\n")
    shutil.copytree(TOYKIND, pytester.path / "toykind")
    pytester.syspathinsert()
    pytester.makeconftest(OFFER.format(offer=offer, name=name))
    return pytester.parseconfigure("-p", "no:cacheprovider")


def test_a_provided_kind_joins_the_built_in_ones_with_its_marker(pytester: pytest.Pytester) -> None:
    config = _configure(pytester, "TOY")
    found = kinds.item_kinds(config)
    assert list(found) == [*ADAPTERS, "toy"]
    assert found["toy"].function is recipe_point
    assert kinds.result_kinds(config).names()[-1] == "toy"
    assert list(kinds.provided(config).blocks) == ["toy"]
    assert kinds.provided(config).identity != ""
    assert "toy: a point of the toy kind" in config.getini("markers")


def test_without_a_provider_the_run_has_the_built_in_kinds(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ninfx = true\n")
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    assert list(kinds.item_kinds(config)) == list(ADAPTERS)
    assert kinds.provided(config).identity == ""


@pytest.mark.parametrize(
    ("name", "problem"),
    [("agentic", "is taken"), ("two words", "is not a marker name")],
)
def test_a_kind_under_a_taken_or_unusable_name_is_a_usage_error(
    pytester: pytest.Pytester, name: str, problem: str
) -> None:
    with pytest.raises(pytest.UsageError) as caught:
        _configure(pytester, "Renamed()", name=name)
    assert f"offered a kind named {name!r}, which {problem}" in str(caught.value)
    assert "pytest_infx_kinds in " in str(caught.value)


def test_two_providers_of_one_name_are_a_usage_error(pytester: pytest.Pytester) -> None:
    with pytest.raises(pytest.UsageError, match="offered a kind named 'toy', which is taken"):
        _configure(pytester, "TOY, Renamed()", name="toy")


def test_an_offer_that_is_no_kind_names_what_it_lacks(pytester: pytest.Pytester) -> None:
    with pytest.raises(pytest.UsageError) as caught:
        _configure(pytester, "'toy'")
    assert "offered 'toy', which is not a kind (it lacks name, points," in str(caught.value)
