from __future__ import annotations

from pytest_infx.results.passes import median_figures, median_index


def test_the_median_pass_is_the_lower_middle_and_a_pass_without_the_figure_sorts_first() -> None:
    passes = [{"al": 2.0}, {"al": 3.0}, {"al": 1.0}]
    assert median_index(passes, "al") == 0
    assert median_index(passes[:2], "al") == 0
    assert median_index([{"al": 2.0}, {}, {"al": 3.0}], "al") == 0
    assert median_index([{"al": 2.0}], "al") == 0


def test_each_figure_s_median_is_over_the_passes_that_have_it() -> None:
    passes = [{"al": 1.0, "output_tput": 9.0}, {"al": 2.0}, {"al": 4.0, "output_tput": 5.0}]
    assert median_figures(passes) == {"al": 2.0, "output_tput": 7.0}
