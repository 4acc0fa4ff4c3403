from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_infx.cli import main

REPO_GOLDEN = Path(__file__).resolve().parents[2] / "golden"
MIMO_ON = [1.84, 2.51, 2.97, 3.35, 3.76, 3.86, 4.08]
MIMO_OFF = [1.83, 2.52, 2.95, 3.30, 3.74, 3.89, 4.00]


def infx(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["golden", "--root", str(REPO_GOLDEN), *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_list_shows_every_committed_curve(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = infx(capsys, "list")
    assert status == 0
    assert out.split() == sorted(p.stem for p in REPO_GOLDEN.glob("*.yaml"))
    assert "mimov2.6flash_dflash" in out.split()


def test_show_prints_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = infx(capsys, "show", "mimov2.6flash_dflash")
    assert status == 0
    assert out == (REPO_GOLDEN / "mimov2.6flash_dflash.yaml").read_text()


@pytest.mark.parametrize(("thinking", "values"), [("on", MIMO_ON), ("off", MIMO_OFF)])
def test_lookup_returns_the_mimo_values(
    capsys: pytest.CaptureFixture[str], thinking: str, values: list[float]
) -> None:
    for k, expected in enumerate(values, start=1):
        status, out, _ = infx(
            capsys, "lookup", "mimov2.6flash_dflash", str(k), "--thinking", thinking
        )
        assert status == 0
        assert out == f"{expected:.2f}\n"


def test_lookup_json_with_each_engine(capsys: pytest.CaptureFixture[str]) -> None:
    results = {}
    for engine in ("vllm", "sglang", "trtllm", "atom"):
        status, out, _ = infx(
            capsys,
            *("lookup", "mimov2.6flash_dflash", "4", "--thinking", "on", "--engine", engine),
            "--json",
        )
        assert status == 0
        results[engine] = json.loads(out)
    assert {r["al"] for r in results.values()} == {3.35}
    assert {r["mode"] for r in results.values()} == {"thinking_on"}
    assert results["vllm"]["spec_config"] == {
        "rejection_sample_method": "synthetic",
        "synthetic_acceptance_length": 3.35,
    }
    assert results["sglang"]["env"] == {
        "SGLANG_SIMULATE_ACC_LEN": "3.35",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
    }
    assert results["trtllm"]["env"] == {"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "2.35"}
    assert results["trtllm"]["notes"]
    assert results["atom"]["argv"] == ["--spec-decode-acceptance-length", "3.35"]


def test_lookup_without_thinking_prints_both_modes(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = infx(capsys, "lookup", "mimov2.6flash_dflash", "2")
    assert status == 0
    assert out == f"thinking_on {MIMO_ON[1]:.2f}\nthinking_off {MIMO_OFF[1]:.2f}\n"
    status, out, err = infx(
        capsys, "lookup", "mimov2.6flash_dflash", "2", "--engine", "trtllm", "--json"
    )
    assert status == 0
    payloads = [json.loads(line) for line in out.splitlines()]
    assert [(p["mode"], p["al"]) for p in payloads] == [
        ("thinking_on", MIMO_ON[1]),
        ("thinking_off", MIMO_OFF[1]),
    ]
    status, out, err = infx(capsys, "lookup", "mimov2.6flash_dflash", "2", "--engine", "trtllm")
    assert status == 0
    assert "thinking_off env TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.52" in out
    assert err.count("two-model path") == 1


def test_lookup_plain_text_with_an_engine(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = infx(
        capsys, "lookup", "mimov2.6flash_dflash", "3", "--thinking", "off", "--engine", "trtllm"
    )
    assert status == 0
    assert out == "2.95\nenv TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.95\n"
    assert "two-model path" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("lookup", "nope_mtp", "1", "--thinking", "on"), "no golden curve 'nope_mtp'"),
        (("lookup", "mimov2.6flash_dflash", "8", "--thinking", "on"), "has no k=8 under"),
        (("show", "nope_mtp"), "known curves: "),
    ],
)
def test_a_missing_curve_or_cell_exits_non_zero_with_a_message(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    status, out, err = infx(capsys, *args)
    assert status == 1
    assert out == ""
    assert message in err


def test_root_defaults_to_golden_under_the_current_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO_GOLDEN, tmp_path / "golden")
    monkeypatch.chdir(tmp_path)
    assert main(["golden", "lookup", "dsv4_mtp", "8", "--thinking", "off"]) == 0
    assert capsys.readouterr().out == "3.11\n"
    monkeypatch.chdir(tmp_path / "golden")
    assert main(["golden", "list"]) == 1
    assert "no curves in" in capsys.readouterr().err


@pytest.mark.parametrize("verb", [["show"], ["lookup"]])
def test_show_and_lookup_refuse_a_curve_outside_the_golden_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: list[str]
) -> None:
    golden = tmp_path / "golden"
    shutil.copytree(REPO_GOLDEN, golden)
    shutil.copy(golden / "dsv4_mtp.yaml", tmp_path / "stolen.yaml")
    args = [*verb, "../stolen"] + (["8", "--thinking", "off"] if verb == ["lookup"] else [])
    assert main(["golden", "--root", str(golden), *args]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "'../stolen.yaml', which leads outside" in captured.err
    assert str(golden.resolve()) in captured.err
