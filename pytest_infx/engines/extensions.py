"""Engine adapters from outside pytest-infx: an installed package's entry point, or a
``pytest_infx_register_engines`` hook in a plugin or conftest.

A third party adds an engine (TensorRT-LLM) without editing the registry. This module only
names the way in (:mod:`pytest_infx.providers` finds the providers); it imports neither the
adapters nor the recipe schema, so a run whose catalog is cached pays for them only when
someone provides one.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_infx.providers import ExtensionPoint, HookImpl, Provided

__all__ = [
    "ENGINES",
    "GROUP",
    "HOOK",
    "EngineRegistrationError",
    "HookImpl",
    "Provided",
    "identity",
    "provided",
]

GROUP = "pytest_infx_engines"
HOOK = "pytest_infx_register_engines"


class EngineRegistrationError(ValueError):
    """An engine provider gave something unusable; the message names the provider."""


ENGINES = ExtensionPoint(
    group=GROUP,
    hook=HOOK,
    returns="a list of engine adapters",
    error=EngineRegistrationError,
)


def identity(hooks: Sequence[HookImpl] = ()) -> str:
    """Names every engine provider without loading any (see
    :meth:`~pytest_infx.providers.ExtensionPoint.identity`)."""
    return ENGINES.identity(hooks)


def provided(hooks: Sequence[HookImpl] = ()) -> list[Provided[object]]:
    """Every object the engine providers offer, entry points first, then a pytest run's
    ``hooks``."""
    return ENGINES.provided(hooks)
