"""The kinds of this run: the built-in ones and those other packages provide, through an entry
point in the ``pytest_infx_kinds`` group or a ``pytest_infx_kinds`` hook in a plugin or
conftest.

A provided kind is one object with three faces: what its recipe block means
(:class:`~pytest_infx.recipes.blocks.BlockKind`), what its records are to the results, the
history and the report (:class:`~pytest_infx.results.kind.BenchmarkKind`), and how it measures
a point against its server (:class:`~pytest_infx.results.measure.Measures`), which the generic
adapter (:class:`~pytest_infx.plugin.run.kinds.measured.Measured`) runs as it runs
fixed-seq-len's. Each face is handed to the layer that asks it, so that adding a kind changes no
module, and a kind needs neither pytest nor the session.

The built-in results kinds import the recipe schema, which a cached collection never loads,
so they are imported only when a record is kept or shown.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, cast

import pytest

from pytest_infx.plugin.output.summary import RECORD_PROPERTY
from pytest_infx.plugin.run.kinds import ADAPTERS, ItemKind
from pytest_infx.plugin.run.kinds.measured import Measured
from pytest_infx.providers import ExtensionPoint, HookImpl, ProviderError
from pytest_infx.recipes.blocks import BlockKind
from pytest_infx.results.kind import BenchmarkKind
from pytest_infx.results.measure import Measures

if TYPE_CHECKING:
    from pytest_infx.results.kind import Kinds

GROUP = HOOK = "pytest_infx_kinds"
FACES = (
    "name",
    "points",
    "material",
    "result_path",
    "row",
    "metrics",
    "figure",
    "client_settings",
    "title",
    "table",
    "measure",
    "properties",
    "data_sha256",
)
"""What a provided kind answers: its block's points and material, its records' path, history
row, metrics, headline, client settings and table, and its point's measurement, item
properties and data digest."""


KINDS_POINT = ExtensionPoint(group=GROUP, hook=HOOK, returns="a list of kinds")
"""An entry point names one kind (``evals = my_evals:KIND``); a hook returns a list of them."""


class ProvidedKind(BlockKind, BenchmarkKind, Measures, Protocol):
    """What a provider offers: one object with every face of a kind."""


@dataclass(frozen=True)
class ProvidedKinds:
    """The kinds other packages provide to this run, by name (each is its own recipe block's
    reader and its records' kind), and every kind of the run as the run measures it."""

    blocks: Mapping[str, ProvidedKind]
    items: Mapping[str, ItemKind]
    identity: str

    @property
    def results(self) -> tuple[BenchmarkKind, ...]:
        return tuple(self.blocks.values())


def hooks(config: pytest.Config) -> list[HookImpl]:
    """This run's implementations of ``pytest_infx_kinds``."""
    found: list[HookImpl] = list(config.pluginmanager.hook.pytest_infx_kinds.get_hookimpls())
    return found


@functools.lru_cache(maxsize=4)
def provided(config: pytest.Config) -> ProvidedKinds:
    """The provided kinds, read once per run (collection asks for every file, and reading the
    installed entry points costs milliseconds); kept here rather than on the session, whose
    own modules would then have to import this one. A provider that offers something that is
    not a whole kind, or a name that is taken, is a usage error naming it."""
    impls = hooks(config)
    taken = set(ADAPTERS)
    blocks: dict[str, ProvidedKind] = {}
    item_kinds: dict[str, ItemKind] = dict(ADAPTERS)
    try:
        offers = KINDS_POINT.provided(impls)
    except ProviderError as exc:
        raise pytest.UsageError(str(exc)) from None
    for offer in offers:
        missing = [face for face in FACES if not hasattr(offer.value, face)]
        if missing:
            raise pytest.UsageError(
                f"{offer.source}: offered {offer.value!r}, which is not a kind (it lacks "
                f"{', '.join(missing)}); a kind answers {', '.join(FACES)}"
            )
        kind = cast("ProvidedKind", offer.value)
        name: object = kind.name
        if not isinstance(name, str) or not name.isidentifier() or name in taken:
            raise pytest.UsageError(
                f"{offer.source}: offered a kind named {name!r}, which "
                + ("is taken" if name in taken else "is not a marker name")
                + f"; the kinds of this run are {', '.join(sorted(taken))}"
            )
        assert isinstance(name, str)
        taken.add(name)
        blocks[name] = kind
        item_kinds[name] = Measured(name, _loaded(kind), RECORD_PROPERTY)
    return ProvidedKinds(
        MappingProxyType(blocks),
        MappingProxyType(item_kinds),
        KINDS_POINT.identity(impls),
    )


def _loaded(kind: ProvidedKind) -> Callable[[], Measures]:
    """A provided kind is loaded already: its provider imported it."""
    return lambda: kind


def item_kinds(config: pytest.Config) -> Mapping[str, ItemKind]:
    """Every kind of this run, as the run measures and reuses its points, by name."""
    return provided(config).items


def result_kinds(config: pytest.Config) -> Kinds:
    """Every kind of this run, as the results, the history and the report see its records."""
    from pytest_infx.kinds import KINDS
    from pytest_infx.results.kind import Kinds

    return Kinds((*KINDS, *provided(config).results))


def marker_lines(config: pytest.Config) -> list[str]:
    """The marker of each provided kind, which its items carry like the built-in kinds'."""
    return [f"{name}: a point of the {name} kind" for name in provided(config).blocks]
