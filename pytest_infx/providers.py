"""What other packages provide to pytest-infx: an installed package's entry point, or an
implementation of a pytest hook in a plugin or conftest.

Engine adapters and lint rules are both extended this way, and a provider that breaks is
reported the same way for both: by where it is (the entry point and its distribution, the
hook and its plugin), never as a traceback from inside pytest-infx. This module only finds
and calls the providers; what a valid offer is stays with the area that uses it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Generic, Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True)
class Provided(Generic[T_co]):
    """One object a provider offered, and where it came from (for error messages)."""

    source: str
    value: T_co


class HookImpl(Protocol):
    """What pluggy gives for one implementation of a hook: its plugin's name and function."""

    @property
    def plugin_name(self) -> str: ...

    @property
    def function(self) -> Callable[..., object]: ...


class ProviderError(ValueError):
    """A provider gave something unusable; the message names the provider. An area whose
    callers tell its errors apart gives its own subclass of ``ValueError`` instead."""


@dataclass(frozen=True)
class ExtensionPoint:
    """One way in: the entry point ``group``, the pytest ``hook``, what a provider is to
    return (``returns``, as an error message asks for it) and the area's ``error``.

    A hook returns ``None``, a list of offers or, where ``single`` is given, one offer of that
    type. With ``entry_point_provides`` an entry point is read like a hook (a function that
    takes no arguments is called first); otherwise it names exactly one offer.
    """

    group: str
    hook: str
    returns: str
    error: type[ValueError] = ProviderError
    single: type | None = None
    entry_point_provides: bool = False

    def entry_points(self) -> tuple[metadata.EntryPoint, ...]:
        return tuple(metadata.entry_points(group=self.group))

    def identity(self, hooks: Sequence[HookImpl] = ()) -> str:
        """Names every provider (entry points with their distribution's version, the
        implementers of a pytest run's hook), without loading any; empty when there are none.
        Values derived from the offers, such as cached server keys, are keyed by it."""
        parts = [
            f"{ep.name}={ep.value}@{ep.dist.version if ep.dist else ''}"
            for ep in self.entry_points()
        ]
        parts += [str(impl.plugin_name) for impl in hooks]
        if not parts:
            return ""
        return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()[:12]

    def provided(self, hooks: Sequence[HookImpl] = ()) -> list[Provided[object]]:
        """Every object the providers offer, entry points first, then a pytest run's
        ``hooks``; a provider that cannot be loaded or returns something unusable raises
        :attr:`error` naming it."""
        return [*self.from_entry_points(), *self.from_hooks(hooks)]

    def from_entry_points(self) -> list[Provided[object]]:
        found: list[Provided[object]] = []
        for ep in self.entry_points():
            dist = f" of {ep.dist.name} {ep.dist.version}" if ep.dist else ""
            source = f"entry point {ep.name!r} ({ep.value}){dist} in group {self.group}"
            try:
                value = ep.load()
                if self.entry_point_provides and callable(value) and not self._single(value):
                    value = value()
            except Exception as exc:
                raise self.error(f"{source}: cannot be loaded: {exc!r}") from None
            if self.entry_point_provides:
                found.extend(self.offered(source, value))
            else:
                found.append(Provided(source, value))
        return found

    def from_hooks(self, hooks: Sequence[HookImpl]) -> list[Provided[object]]:
        found: list[Provided[object]] = []
        for impl in hooks:
            source = f"{self.hook} in {impl.plugin_name}"
            found.extend(self.offered(source, impl.function()))
        return found

    def offered(self, source: str, result: object) -> list[Provided[object]]:
        """What one provider gave: ``None``, a list of offers, or one offer of ``single``."""
        if result is None:
            return []
        if self._single(result):
            return [Provided(source, result)]
        if isinstance(result, Iterable) and not isinstance(result, str | bytes):
            return [Provided(source, value) for value in result]
        raise self.error(f"{source}: returned {result!r}; return {self.returns} (or None)")

    def _single(self, value: object) -> bool:
        return self.single is not None and isinstance(value, self.single)
