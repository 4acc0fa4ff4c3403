from __future__ import annotations

from results import samples

from pytest_infx.fixedseq.table import text_table


def test_the_table_shows_each_point_in_the_comparison_s_units() -> None:
    good = samples.fixed()
    bad = samples.fixed(id="x[tp1-isl256-osl32-c8]", verdict="fail", figures={})
    head, first, second = text_table([bad, good])
    assert "TTFT p50 ms" in head and "intvty p50" in head
    assert first.startswith(good.id)
    assert "350.0" in first and "400.0" in first and "80.0" in first and "FAIL" not in first
    assert second.startswith(bad.id) and second.endswith("FAIL") and " - " in second


def test_gpu_power_and_tokens_per_joule_follow_where_a_point_has_them() -> None:
    measured = samples.fixed(gpu_telemetry=samples.TELEMETRY)
    other = samples.fixed(id="x[tp1-isl256-osl32-c8]")
    head, first, second = text_table([measured, other])
    assert head.endswith("GPU W    tok/J")
    assert first.startswith(measured.id) and first.endswith("  1,310     2.10")
    assert second.endswith("  -        -")
    assert "GPU W" not in text_table([other])[0]
