import math

import pytest

from pytest_infx.files.numbers import NumberError, count, figure, finite, positive, rate


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, float("1e999"), True, "5", None])
def test_a_figure_that_is_not_a_finite_number_is_refused_by_name(bad: object) -> None:
    with pytest.raises(NumberError) as info:
        figure(bad, "tput_per_gpu")
    assert str(info.value).startswith(f"'tput_per_gpu' is {bad!r}, not a finite number")


def test_a_negative_figure_is_refused_and_zero_is_a_reading() -> None:
    with pytest.raises(NumberError, match="'median_ttft' is -5, not a finite number of at least 0"):
        figure(-5, "median_ttft")
    assert figure(0, "acceptance_rate") == 0.0
    assert finite(-5, "offset") == -5.0


def test_an_integer_too_large_for_a_float_is_refused() -> None:
    with pytest.raises(NumberError):
        finite(10**400, "tput_per_gpu")


@pytest.mark.parametrize("bad", [0, -8, 4.5, True, "eight", None])
def test_a_count_is_a_whole_number_from_its_least(bad: object) -> None:
    with pytest.raises(NumberError, match=r"'tp' is .*, not a whole number from 1"):
        count(bad, "tp")


def test_a_count_above_its_most_is_refused() -> None:
    assert count(8, "gpus", most=8) == 8
    with pytest.raises(NumberError, match="not a whole number from 1 to 4096"):
        count(10_000_000, "gpus", most=4096)


def test_positive_refuses_zero_and_infinity() -> None:
    for bad in (0, -1.0, math.inf):
        with pytest.raises(NumberError):
            positive(bad, "INFX_MAX_INPUT_MB")
    assert positive(0.5, "INFX_MAX_INPUT_MB") == 0.5


def test_a_rate_over_a_denormal_time_is_refused_instead_of_infinite() -> None:
    assert rate(100, 0.0, "wall_s") is None
    assert rate(100, 2.0, "wall_s") == 50.0
    with pytest.raises(NumberError, match="'wall_s' is 1e-320"):
        rate(100, 1e-320, "wall_s")
