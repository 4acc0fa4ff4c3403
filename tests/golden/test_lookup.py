from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.golden.lookup import (
    GoldenLookupError,
    golden_al,
    golden_cell,
    synthetic_setting,
)
from pytest_infx.golden.store import GoldenNotFoundError, GoldenStore


@pytest.fixture
def store(tmp_path: Path) -> GoldenStore:
    (tmp_path / "demo_mtp.yaml").write_text(
        "demo:\n  thinking_on:\n    1: 1.80\n    2: N/A\n  thinking_off:\n    1: 1.70\n"
    )
    (tmp_path / "solo_mtp.yaml").write_text("solo:\n  thinking_off:\n    3: 2.75\n")
    return GoldenStore(tmp_path)


def test_golden_al_reads_one_cell(store: GoldenStore) -> None:
    assert golden_al(store, "demo_mtp", 1, True) == 1.80
    assert golden_al(store, "demo_mtp", 1, False) == 1.70
    assert golden_cell(store, "solo_mtp", 3, None) == ("thinking_off", 2.75)


@pytest.mark.parametrize(
    ("curve", "k", "thinking", "message"),
    [
        ("demo_mtp", 1, None, "has modes thinking_on, thinking_off; say which one"),
        ("solo_mtp", 3, True, "has no thinking_on values (it has thinking_off)"),
        ("demo_mtp", 5, True, "has no k=5 under thinking_on (draft lengths: 1, 2)"),
        ("demo_mtp", 2, True, "thinking_on k=2 is N/A"),
    ],
)
def test_golden_al_errors_say_what_exists(
    store: GoldenStore, curve: str, k: int, thinking: bool | None, message: str
) -> None:
    with pytest.raises(GoldenLookupError) as info:
        golden_al(store, curve, k, thinking)
    assert message in str(info.value)


def test_a_missing_curve_is_a_lookup_error_naming_the_known_ones(store: GoldenStore) -> None:
    with pytest.raises(GoldenNotFoundError, match="known curves: demo_mtp, solo_mtp"):
        golden_al(store, "nope", 1, True)


def test_vllm_gets_speculative_config_keys() -> None:
    setting = synthetic_setting("vllm", 3.24, 4)
    assert setting.spec_config == {
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 3.24,
    }
    assert setting.env == {} and setting.argv == ()


def test_sglang_gets_the_simulation_env() -> None:
    setting = synthetic_setting("sglang", 3.24, 4)
    assert setting.env == {
        "SGLANG_SIMULATE_ACC_LEN": "3.24",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
    }
    assert setting.spec_config == {}


@pytest.mark.parametrize(
    ("al", "value", "warns"),
    [(3.24, "2.24", True), (3.0, "2", False), (1.0, "0", False), (5.0, "4", False)],
)
def test_trtllm_counts_draft_tokens_only_so_it_gets_al_minus_one(
    al: float, value: str, warns: bool
) -> None:
    setting = synthetic_setting("trtllm", al, 4)
    assert setting.env == {"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": value}
    assert bool(setting.notes) == warns
    if warns:
        assert "int()s" in setting.notes[0]


def test_atom_gets_a_command_line_flag() -> None:
    setting = synthetic_setting("atom", 2.5, 3)
    assert setting.argv == ("--spec-decode-acceptance-length", "2.5")


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "atom"])
@pytest.mark.parametrize("al", [0.99, 5.01])
def test_an_al_outside_one_to_k_plus_one_is_refused(engine: str, al: float) -> None:
    with pytest.raises(ValueError, match=r"must lie in \[1, 5\] for k=4"):
        synthetic_setting(engine, al, 4)


def test_an_unknown_engine_is_named() -> None:
    with pytest.raises(ValueError, match="unknown engine 'tgi'; use one of vllm, sglang"):
        synthetic_setting("tgi", 2.0, 2)
