"""``infx engine check`` from the shell: exit status and what it prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from known_recipes import copy_recipes

from pytest_infx.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_without_installed_parsers_it_lists_what_it_did_not_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy_recipes(tmp_path / "recipes")
    args = ["engine", "check", "--gpu", "b300", "--no-install", "--cache-dir", str(tmp_path)]
    status = main([*args, "--recipes", str(tmp_path / "recipes"), "--golden", str(REPO / "golden")])
    out = capsys.readouterr().out
    assert status == 0
    assert out.count("unchecked: ") == 14
    assert "vLLM 0.31.0 parser not installed" in out
    assert out.rstrip().endswith(
        "every checked server command accepted (0 points checked, 14 unchecked)"
    )


def test_a_recipe_error_is_printed_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipes = tmp_path / "recipes"
    copy_recipes(recipes)
    path = recipes / "mimov2.6flash-fp4-b300-vllm-dflash.yaml"
    path.write_text(path.read_text().replace("  args:\n", "  args:\n    served-model: x\n"))
    status = main(["engine", "check", "--recipes", str(recipes), "--no-install"])
    err = capsys.readouterr().err
    assert status == 2
    assert f"{path}:14" in err and "served-model" in err


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--gpu", "b3000"], "--gpu b3000: no runner type 'b3000'; did you mean b300 or gb300?"),
        (["--recipes", "{tmp}/none"], "--recipes {tmp}/none: does not exist; give the recipe"),
        (["--golden", "{tmp}/loop"], "--golden {tmp}/loop: is a symbolic link loop; give the"),
        (["--golden", "{tmp}/file"], "--golden {tmp}/file: is a file, not a folder; give the"),
    ],
    ids=["unknown-gpu", "no-recipes", "golden-loop", "golden-file"],
)
def test_an_option_that_cannot_be_used_is_a_usage_error_not_zero_points_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], shown: str
) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "file").write_text("")
    given = {"--recipes": str(REPO / "recipes"), "--golden": str(REPO / "golden")}
    given |= dict(zip(args[::2], (a.format(tmp=tmp_path) for a in args[1::2]), strict=True))
    status = main(["engine", "check", "--no-install", *(x for kv in given.items() for x in kv)])
    err = capsys.readouterr().err
    assert status == 4
    assert err.startswith(f"infx engine check: error: {shown.format(tmp=tmp_path)}")


def test_option_set_writes_what_it_read_from_a_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from engines.engine_sources import trtllm_checkout

    from pytest_infx.engines.optionset import OptionSet

    checkout = trtllm_checkout(tmp_path / "trt")
    out = tmp_path / "sets"
    args = ["engine", "option-set", "trtllm", str(checkout), "--release", "v1.3.0rc14"]
    assert main([*args, "--out", str(out)]) == 0
    written = out / "trtllm-1.3.0rc14.json"
    found = OptionSet.model_validate_json(written.read_text())
    assert found.release == "1.3.0rc14" and found.root == "TorchLlmArgs"
    printed = capsys.readouterr().out
    assert printed.startswith(f"{written}: 16 flags, ") and "NVIDIA/TensorRT-LLM@" in printed
    assert main(["engine", "option-set", "atom", str(checkout), "--release", "1"]) == 1
    assert "none of atom/utils/arg_parser.py" in capsys.readouterr().err
    assert main(["engine", "option-set", "vllm", str(checkout), "--release", "1"]) == 4
    assert "no option-set reader for 'vllm'; engines with one: trtllm, atom" in (
        capsys.readouterr().err
    )
