"""The one reader of a number found in a file or an option: a figure, a count or a size.

Python's JSON parser reads ``NaN``, ``Infinity`` and ``1e999``, ``bool`` is an ``int``, and
``max(1, value)`` turns ``-4`` into a point that was never measured. A NaN baseline makes every
comparison false, so a gate against it passes anything; an infinite or negative one fails every
later point. Each reader below refuses such a value where it is read, naming the field, instead
of letting it reach the store, a table or a gate.
"""

from __future__ import annotations

import math


class NumberError(ValueError):
    """A value that is not the number its field needs; ``str()`` names the field, the value and
    what is accepted."""

    def __init__(self, field: str, value: object, need: str) -> None:
        super().__init__(f"'{field}' is {value!r}, not {need}")
        self.field = field


def _real(value: object, field: str, need: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NumberError(field, value, need)
    try:
        number = float(value)
    except OverflowError:
        raise NumberError(field, value, need) from None
    if not math.isfinite(number):
        raise NumberError(field, value, need)
    return number


def finite(value: object, field: str) -> float:
    """A finite number of either sign (a change, an offset)."""
    return _real(value, field, "a finite number")


def figure(value: object, field: str) -> float:
    """A measured figure: a rate, a latency, a ratio. Finite and not negative (no duration,
    token count or rate is below zero; zero is a real reading of a ratio)."""
    number = _real(value, field, "a finite number of at least 0")
    if number < 0:
        raise NumberError(field, value, "a finite number of at least 0")
    return number


def positive(value: object, field: str) -> float:
    """A physical size that cannot be zero (a tolerance base, a size limit)."""
    number = _real(value, field, "a finite number above 0")
    if number <= 0:
        raise NumberError(field, value, "a finite number above 0")
    return number


def count(value: object, field: str, *, least: int = 1, most: int | None = None) -> int:
    """A count (a parallel size, a concurrency, a length): an integer from ``least`` (and up to
    ``most``); ``4.5``, ``true`` and ``"8"`` are not counts."""
    bound = f"from {least}" if most is None else f"from {least} to {most}"
    need = f"a whole number {bound}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise NumberError(field, value, need)
    if value < least or (most is not None and value > most):
        raise NumberError(field, value, need)
    return value


def rate(amount: float, seconds: float, field: str) -> float | None:
    """``amount`` per second over ``seconds``; None when no time passed. A denormal time such as
    ``1e-320`` would give an infinite rate, which is refused as a figure would be."""
    if seconds <= 0:
        return None
    try:
        quotient = amount / seconds
    except OverflowError:
        quotient = math.inf
    if not math.isfinite(quotient):
        raise NumberError(field, seconds, f"a time that gives a finite rate for {amount:g}")
    return quotient
