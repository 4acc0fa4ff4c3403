from __future__ import annotations

import pytest

from pytest_infx.golden.compare import CompareOptions, compare_curves, updated_curve
from pytest_infx.golden.curve import Curve, Provenance

GOLDEN = Curve(
    name="demo",
    model_key="m",
    modes={"thinking_on": {1: 1.80, 2: 2.40, 3: 2.90}, "thinking_off": {1: 1.70, 2: None}},
    header=Provenance(source="golden run", tolerance=None, reference=True),
)


def measured(**changes: float | None) -> Curve:
    modes = {mode: dict(cells) for mode, cells in GOLDEN.modes.items()}
    for key, value in changes.items():
        mode = "thinking_on" if key.startswith("on") else "thinking_off"
        modes[mode][int(key.removeprefix("on").removeprefix("off"))] = value
    return Curve(name="demo", model_key="m", modes=modes, header=Provenance(source="new run"))


def test_identical_curves_match() -> None:
    result = compare_curves(GOLDEN, measured())
    assert result.ok
    assert result.checked == 5
    assert result.largest_delta == 0.0
    assert result.lines() == []


def test_only_cells_beyond_the_tolerance_are_listed() -> None:
    result = compare_curves(GOLDEN, measured(on1=1.84, on2=2.52, on3=2.80))
    assert not result.ok
    assert [(d.mode, d.k) for d in result.drifted] == [("thinking_on", 2), ("thinking_on", 3)]
    assert result.lines() == [
        "k=2 thinking_on: golden 2.40, measured 2.52, delta +0.12, allowed 0.05",
        "k=3 thinking_on: golden 2.90, measured 2.80, delta -0.10, allowed 0.05",
    ]
    assert result.largest_delta == pytest.approx(0.12)
    assert result.largest_at == ("thinking_on", 2)


def test_a_delta_equal_to_the_tolerance_passes_despite_float_error() -> None:
    assert compare_curves(GOLDEN, measured(on2=2.45, on3=2.85)).ok


def test_the_stderr_adds_z_standard_errors_to_that_cell_only() -> None:
    curve = measured(on2=2.50, on3=3.00)
    options = CompareOptions(stderr={("thinking_on", 2): 0.03})
    result = compare_curves(GOLDEN, curve, options)
    assert [(d.k, round(d.allowed, 2)) for d in result.drifted] == [(3, 0.05)]
    tight = compare_curves(GOLDEN, curve, CompareOptions(stderr={("thinking_on", 2): 0.03}, z=1))
    assert [d.k for d in tight.drifted] == [2, 3]


def test_tolerance_comes_from_the_caller_then_the_header_then_the_default() -> None:
    loose = Curve(name="demo", model_key="m", modes=GOLDEN.modes, header=Provenance(tolerance=0.2))
    curve = measured(on2=2.55)
    assert compare_curves(loose, curve).ok
    assert compare_curves(loose, curve).tolerance == 0.2
    assert not compare_curves(loose, curve, CompareOptions(tolerance=0.1)).ok
    assert compare_curves(GOLDEN, curve).tolerance == 0.05


def test_cells_on_one_side_only_have_their_own_messages() -> None:
    curve = Curve(
        name="demo",
        model_key="m",
        modes={"thinking_on": {1: 1.8, 2: 2.4, 3: 2.9, 4: 3.2}, "thinking_off": {1: 1.7}},
    )
    result = compare_curves(GOLDEN, curve)
    assert result.lines() == [
        "k=4 thinking_on was measured but not in the golden curve",
        "k=2 thinking_off is in the golden curve but was not measured",
    ]
    partial = compare_curves(GOLDEN, curve, CompareOptions(partial=True))
    assert partial.lines() == ["k=4 thinking_on was measured but not in the golden curve"]


def test_na_on_one_side_is_drift_and_on_both_sides_is_a_match() -> None:
    result = compare_curves(GOLDEN, measured(on1=None, off2=None))
    assert result.lines() == ["k=1 thinking_on: golden 1.80, measured N/A, delta n/a, allowed 0.05"]
    assert compare_curves(GOLDEN, measured(off2=2.0)).lines() == [
        "k=2 thinking_off: golden N/A, measured 2.00, delta n/a, allowed 0.05"
    ]


def test_a_different_model_key_is_a_mismatch() -> None:
    other = Curve(name="demo", model_key="m2", modes=GOLDEN.modes)
    result = compare_curves(GOLDEN, other)
    assert not result.ok
    assert result.lines() == ["model key: golden 'm', measured 'm2'"]


@pytest.mark.parametrize(
    "options",
    [{"tolerance": -0.1}, {"z": float("nan")}, {"stderr": {("thinking_on", 1): -1.0}}],
)
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be a non-negative number"):
        CompareOptions(**options)  # type: ignore[arg-type]


def test_update_keeps_in_tolerance_golden_values_and_takes_the_drifted_ones() -> None:
    curve = measured(on1=1.83, on2=2.60)
    result = updated_curve(GOLDEN, curve, CompareOptions())
    assert result.modes == {
        "thinking_on": {1: 1.80, 2: 2.60, 3: 2.90},
        "thinking_off": {1: 1.70, 2: None},
    }
    assert result.header.source == "new run"
    assert result.header.reference


def test_update_drops_unmeasured_cells_unless_partial() -> None:
    single = Curve(name="demo", model_key="m", modes={"thinking_on": {2: 2.70}})
    full = updated_curve(GOLDEN, single, CompareOptions())
    assert full.modes == {"thinking_on": {2: 2.70}}
    partial = updated_curve(GOLDEN, single, CompareOptions(partial=True))
    assert partial.modes == {**GOLDEN.modes, "thinking_on": {1: 1.80, 2: 2.70, 3: 2.90}}
    assert partial.header == GOLDEN.header


def test_update_with_zero_tolerance_takes_every_measured_value() -> None:
    result = updated_curve(GOLDEN, measured(on1=1.81), CompareOptions(tolerance=0.0, z=0.0))
    assert result.al("thinking_on", 1) == 1.81
    assert updated_curve(None, measured(on1=1.81), CompareOptions()).al("thinking_on", 1) == 1.81
