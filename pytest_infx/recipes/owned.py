"""Engine flags that pytest-infx sets itself, under every spelling an engine's parser accepts.

The adapters put the model, the served name, the address, the TP size and the speculative
settings on the command line from the recipe's own fields. The same flag in ``engine.args``
gives the server two conflicting values (argparse keeps the last, so which one wins depends on
the adapter's order), so it is refused when the recipe is loaded, under any spelling that the
engines' ``argparse`` parsers resolve to it: underscores or dashes (one engine's parser maps one to
the other), leading or doubled dashes, surrounding spaces, ``name=value`` in the key, a JSON
sub-key (``speculative-config.num_speculative_tokens``), the engines' short aliases, and any
unambiguous prefix (argparse's ``allow_abbrev``, on in both engines: ``served-model`` is
``--served-model-name``).

Which flags those are is each engine adapter's answer (``owned_flags``); this module reads a
recipe key the way the parsers do and looks it up in the tables it is given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

OwnedFlags = Mapping[str, str]
"""Flag (as :func:`canonical` writes it) -> the recipe field pytest-infx sets it from."""


@dataclass(frozen=True)
class EngineRules:
    """What loading a recipe must know of the engines: the names a recipe may use (and those
    of the embedded engines), and the flags each engine's adapter sets itself (``agentic``
    adds an agentic server's).

    The adapters sit above the recipes, so the rules are handed down as a value; a load
    without them checks neither.
    """

    engines: tuple[str, ...] = ()
    embedded: tuple[str, ...] = ()
    owned: Mapping[str, OwnedFlags] = field(default_factory=dict)
    agentic: Mapping[str, OwnedFlags] = field(default_factory=dict)
    lowercase_methods: frozenset[str] = frozenset()
    """The engines that take a speculative method only in lower case."""

    def tables(self, engine: str, *, agentic: bool) -> tuple[OwnedFlags, ...]:
        always = self.owned.get(engine, {})
        return (always, self.agentic.get(engine, {})) if agentic else (always,)


_DASHES = re.compile(r"[-_]+")


def canonical(name: str) -> str:
    """The flag a recipe key names, as the engines' parsers read it: no spaces, no leading
    dashes, no ``=value``, no JSON sub-key, lower case, one dash between words."""
    flag = name.strip().split("=", 1)[0].strip().lstrip("-").split(".", 1)[0]
    return _DASHES.sub("-", flag.lower()).strip("-")


def owner(name: str, tables: Sequence[OwnedFlags]) -> str | None:
    """The recipe field that sets flag ``name`` when the plugin owns it, else ``None``.

    An owned flag that ``name`` is a prefix of counts: argparse expands a unique prefix to the
    full flag, and an ambiguous one is an error in the engine anyway.
    """
    flag = canonical(name)
    if not flag:
        return None
    for table in tables:
        found = table.get(flag)
        if found is not None:
            return found
    for table in tables:
        for owned in sorted(table):
            if owned.startswith(flag):
                return table[owned]
    return None


def spellings(names: Iterable[str]) -> dict[str, list[str]]:
    """Recipe keys by the flag they name, for the keys that name the same flag twice."""
    by_flag: dict[str, list[str]] = {}
    for name in names:
        by_flag.setdefault(canonical(name), []).append(name)
    return {flag: found for flag, found in by_flag.items() if len(found) > 1}
