from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.golden.lookup import GoldenLookupError, golden_al, golden_cell
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
