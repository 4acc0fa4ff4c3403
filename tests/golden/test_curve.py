from __future__ import annotations

import pytest

from pytest_infx.golden.curve import Curve, CurveError, Provenance, cell_problem, mode_of


def test_cells_come_in_canonical_order() -> None:
    curve = Curve(
        name="demo",
        model_key="m",
        modes={"thinking_off": {2: 2.0, 1: 1.5}, "thinking_on": {3: None, 1: 1.6}},
    )
    assert list(curve.cells()) == [
        ("thinking_on", 1, 1.6),
        ("thinking_on", 3, None),
        ("thinking_off", 1, 1.5),
        ("thinking_off", 2, 2.0),
    ]
    assert curve.has("thinking_off", 2)
    assert not curve.has("thinking_on", 2)
    assert curve.al("thinking_on", 3) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "Bad"}, "must match [a-z0-9_.-]+"),
        ({"model_key": ""}, "the model key is empty"),
        ({"modes": {"thinking": {1: 1.5}}}, "unknown mode 'thinking'"),
        ({"modes": {"thinking_on": {1: 2.2}}}, "thinking_on k=1: AL 2.2 is outside [1, 2]"),
    ],
)
def test_the_model_enforces_the_format_rules(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"name": "demo", "model_key": "m", "modes": {"thinking_on": {}}}
    with pytest.raises(CurveError) as info:
        Curve(**{**base, **kwargs})  # type: ignore[arg-type]
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("k", "al", "problem"),
    [
        (1, 1.0, None),
        (1, 2.0, None),
        (4, None, None),
        (1, 2.01, "outside [1, 2]"),
        (1, 0.99, "outside [1, 2]"),
        (1.0, 1.5, "is not an integer"),
        (True, 1.5, "is not an integer"),
        (2, True, "is not a number"),
        (2, float("inf"), "is not finite"),
    ],
)
def test_cell_problem(k: object, al: object, problem: str | None) -> None:
    found = cell_problem(k, al)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_provenance_knows_a_run_url_from_a_description() -> None:
    assert Provenance(source="https://github.com/o/r/actions/runs/1").source_is_run
    assert not Provenance(source="measured on the CPU engine").source_is_run
    assert mode_of(True) == "thinking_on"
    assert mode_of(False) == "thinking_off"
