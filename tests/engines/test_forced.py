from __future__ import annotations

import pytest

from pytest_infx.engines.forced import TRTLLM_ENV, atom, number, trtllm


@pytest.mark.parametrize(("value", "text"), [(3.0, "3"), (2.5, "2.5"), (1.2345678, "1.234568")])
def test_a_number_is_written_as_an_engine_reads_it(value: float, text: str) -> None:
    assert number(value) == text


def test_tensorrt_llm_is_forced_to_al_minus_one_accepted_tokens() -> None:
    whole = trtllm(3.0, 3)
    assert (whole.engine, whole.env, whole.argv, whole.notes) == (
        "trtllm",
        {TRTLLM_ENV: "2"},
        (),
        (),
    )
    fraction = trtllm(2.5, 3)
    assert fraction.env == {TRTLLM_ENV: "1.5"}
    assert fraction.notes and "one-model path honours the fraction" in fraction.notes[0]


def test_atom_is_forced_to_the_acceptance_length_itself() -> None:
    forced = atom(2.5, 3)
    assert (forced.engine, forced.argv, forced.env) == (
        "atom",
        ("--spec-decode-acceptance-length", "2.5"),
        {},
    )
