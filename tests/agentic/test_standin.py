from __future__ import annotations

from fractions import Fraction
from types import ModuleType


def test_failures_are_exact_over_the_first_hundred(standin_module: ModuleType) -> None:
    for fraction, expected in (("0.11", 11), ("0.10", 10), ("0", 0), ("1", 100)):
        failed = sum(standin_module.is_failing(i, Fraction(fraction)) for i in range(100))
        assert failed == expected, fraction


def test_failures_never_exceed_the_fraction(standin_module: ModuleType) -> None:
    fraction = Fraction("0.10")
    for n in range(1, 400):
        failed = sum(standin_module.is_failing(i, fraction) for i in range(n))
        assert Fraction(failed, n) <= fraction, n
