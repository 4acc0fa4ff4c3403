from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import pytest

from pytest_infx.providers import ExtensionPoint, Provided


class OfferError(ValueError):
    pass


@dataclass(frozen=True)
class Hook:
    plugin_name: str
    function: Callable[..., object]


ONE = ExtensionPoint("infx_test_group", "infx_test_hook", "a list of widgets", OfferError)
MANY = ExtensionPoint(
    "infx_test_group",
    "infx_test_hook",
    "a list of ints",
    OfferError,
    int,
    entry_point_provides=True,
)


def _entry_points(monkeypatch: pytest.MonkeyPatch, **named: str) -> None:
    found = tuple(metadata.EntryPoint(n, v, "infx_test_group") for n, v in named.items())
    monkeypatch.setattr(ExtensionPoint, "entry_points", lambda self: found)


def test_a_hook_offers_none_a_list_or_one_of_the_single_type() -> None:
    hooks = [Hook("a", lambda: None), Hook("b", lambda: [1, 2]), Hook("c", lambda: 3)]
    assert MANY.provided(hooks) == [
        Provided("infx_test_hook in b", 1),
        Provided("infx_test_hook in b", 2),
        Provided("infx_test_hook in c", 3),
    ]


def test_a_hook_that_returns_something_else_is_named() -> None:
    with pytest.raises(OfferError, match=r"^infx_test_hook in p: returned 3; return a list of"):
        ONE.from_hooks([Hook("p", lambda: 3)])
    with pytest.raises(OfferError, match=r"returned 'ab'; return a list of ints \(or None\)"):
        MANY.from_hooks([Hook("p", lambda: "ab")])


def test_an_entry_point_names_one_offer_unless_it_provides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _entry_points(monkeypatch, widgets="string:digits", count="math:factorial")
    assert ONE.from_entry_points() == [
        Provided("entry point 'widgets' (string:digits) in group infx_test_group", "0123456789"),
        Provided(
            "entry point 'count' (math:factorial) in group infx_test_group",
            ONE.entry_points()[1].load(),
        ),
    ]
    _entry_points(monkeypatch, ints="builtins:list")
    assert MANY.from_entry_points() == []


def test_an_entry_point_that_cannot_be_loaded_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _entry_points(monkeypatch, broken="infx_no_such_module:x")
    with pytest.raises(OfferError, match=r"^entry point 'broken' .* cannot be loaded: Module"):
        ONE.provided()


def test_the_identity_names_providers_without_loading_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _entry_points(monkeypatch)
    assert ONE.identity() == ""
    alone = ONE.identity([Hook("a", lambda: None)])
    assert len(alone) == 12 and alone != ONE.identity([Hook("b", lambda: None)])
    _entry_points(monkeypatch, broken="infx_no_such_module:x")
    assert ONE.identity() not in ("", alone)
