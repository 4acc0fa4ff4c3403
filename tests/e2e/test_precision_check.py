from __future__ import annotations

from .conftest import INI, Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import MODES, records

KEY = "fake-cpu-vllm"


def _bf16_checkpoint(sweep: Sweep) -> None:
    """The recipe's model.path (models/smollm2-target) holds a bf16 safetensors file."""
    from prepare.safetensors_files import write_safetensors

    folder = sweep.root / "models" / "smollm2-target"
    write_safetensors(folder / "model.safetensors", {"w": ("BF16", (64, 64)), "n": ("F32", (64,))})


def _fp8_labelled(sweep: Sweep) -> None:
    path = sweep.add(KEY)
    path.write_text(path.read_text().replace("precision: bf16", "precision: fp8"))
    sweep.commit_golden({m: {1: expected_al(DEFAULT_PATTERN, 1)} for m in MODES})
    _bf16_checkpoint(sweep)


MESSAGE = (
    f"{KEY}: model.precision is 'fp8' but the checkpoint models/smollm2-target is bf16 "
    "(98.5% of 4,160 parameters are BF16)*"
)


def test_a_wrong_precision_label_warns_by_default(sweep: Sweep) -> None:
    _fp8_labelled(sweep)
    result = sweep.run()
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(
        ["*warnings summary*", f"recipes/{KEY}.yaml:1", f"*PrecisionWarning: {MESSAGE}"]
    )


def test_with_fail_the_points_fail_before_any_server_starts(sweep: Sweep) -> None:
    _fp8_labelled(sweep)
    result = sweep.run("--infx-precision-check", "fail")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*preflight failed (no server was started):", MESSAGE])
    assert records(sweep.record) == []


def test_the_ini_turns_it_off_and_a_bad_ini_value_is_named(sweep: Sweep) -> None:
    _fp8_labelled(sweep)
    sweep.pytester.makeini(INI + "infx_precision_check = off\n")
    quiet = sweep.run()
    quiet.assert_outcomes(passed=2)
    assert "PrecisionWarning" not in quiet.stdout.str()
    sweep.pytester.makeini(INI + "infx_precision_check = loud\n")
    bad = sweep.run()
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(
        ["ERROR: ini infx_precision_check = 'loud': use warn, fail or off (or pass --infx-*"]
    )
