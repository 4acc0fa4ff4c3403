from __future__ import annotations

from pytest_infx.results.figure import figure


def test_a_figure_is_separated_rounded_and_a_missing_one_is_a_dash() -> None:
    assert figure(1301.44, 0) == "1,301"
    assert figure(0.5384) == "0.54"
    assert figure(0.0, 1) == "0.0"
    assert figure(None, 1) == "-"
