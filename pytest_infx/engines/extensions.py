"""Engine adapters from outside pytest-infx: an installed package's entry point, or a
``pytest_infx_register_engines`` hook in a plugin or conftest.

A third party adds an engine (TensorRT-LLM) without editing the registry. This module only
finds the providers; it imports neither the adapters nor the recipe schema, so a run whose
catalog is cached pays for them only when someone provides one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Protocol

GROUP = "pytest_infx_engines"
HOOK = "pytest_infx_register_engines"


class EngineRegistrationError(ValueError):
    """An engine provider gave something unusable; the message names the provider."""


@dataclass(frozen=True)
class Provided:
    """One object offered as an adapter, and where it came from (for error messages)."""

    source: str
    value: object


class HookImpl(Protocol):
    """What pluggy gives for one implementation of the hook: its plugin's name and function."""

    @property
    def plugin_name(self) -> str: ...

    @property
    def function(self) -> Callable[..., object]: ...


def _entry_points() -> tuple[metadata.EntryPoint, ...]:
    return tuple(metadata.entry_points(group=GROUP))


def identity(hooks: Sequence[HookImpl] = ()) -> str:
    """Names every provider (entry points with their distribution's version, the implementers
    of a pytest run's hook), without loading any; empty when there are none. Values derived
    from the adapters, such as cached server keys, are keyed by it."""
    parts = [f"{ep.name}={ep.value}@{ep.dist.version if ep.dist else ''}" for ep in _entry_points()]
    parts += [str(impl.plugin_name) for impl in hooks]
    if not parts:
        return ""
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()[:12]


def provided(hooks: Sequence[HookImpl] = ()) -> list[Provided]:
    """Every object the providers offer, entry points first, then a pytest run's ``hooks``."""
    found: list[Provided] = []
    for ep in _entry_points():
        dist = f" of {ep.dist.name} {ep.dist.version}" if ep.dist else ""
        source = f"entry point {ep.name!r} ({ep.value}){dist} in group {GROUP}"
        try:
            value = ep.load()
        except Exception as exc:
            raise EngineRegistrationError(f"{source}: cannot be loaded: {exc!r}") from None
        found.append(Provided(source, value))
    for impl in hooks:
        source = f"{HOOK} in {impl.plugin_name}"
        result = impl.function()
        found.extend(Provided(source, value) for value in _as_list(source, result))
    return found


def _as_list(source: str, result: object) -> Iterable[object]:
    if result is None:
        return ()
    if isinstance(result, Iterable) and not isinstance(result, str | bytes):
        return list(result)
    raise EngineRegistrationError(
        f"{source}: returned {result!r}; return a list of engine adapters (or None)"
    )
