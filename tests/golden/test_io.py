from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_infx.golden.curve import Curve, Provenance
from pytest_infx.golden.io import (
    GoldenFileError,
    dump_curve,
    load_curve,
    loads_curve,
    write_curve,
)

MIMO = Curve(
    name="mimov2.6flash_dflash",
    model_key="mimo-v2.6-flash-rl",
    modes={
        "thinking_off": {2: 2.52, 1: 1.83},
        "thinking_on": {1: 1.84, 2: 2.5, 3: None},
    },
    header=Provenance(
        source="https://github.com/SemiAnalysisAI/InferenceX/actions/runs/41346734342",
        notes=("Acceptance Length (AL) reference values measured with SPEED-Bench.",),
        dataset="coding",
        dataset_sha256="ab" * 32,
        dataset_n=80,
        sampling={"temperature": 1.0, "top_p": 0.95, "output_len": 4096},
        chat_template_kwargs={
            "thinking_on": {"enable_thinking": True},
            "thinking_off": {"enable_thinking": False},
        },
        model="XiaomiMiMo/MiMo-V2.6-Flash-RL",
        image="vllm/vllm-openai:v0.31.0",
        engine="vLLM v0.31.0",
        tp=4,
        method="dflash",
        draft_model="XiaomiMiMo/MiMo-V2.6-Flash-RL/dflash",
        speculative={"draft_sample_method": "greedy"},
        tolerance=0.08,
        reference=True,
    ),
)


def write(tmp_path: Path, text: str, name: str = "demo_mtp") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_dump_is_inferencex_layout_with_the_header_first() -> None:
    text = dump_curve(MIMO)
    lines = text.splitlines()
    assert lines[0] == (
        "# Source GitHub Actions run: "
        "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/41346734342"
    )
    assert "# dataset: coding | temperature: 1.0 | top_p: 0.95 | output_len: 4096" in lines
    assert '# thinking_on chat_template_kwargs: {"enable_thinking": true}' in lines
    body = lines[lines.index("mimo-v2.6-flash-rl:") :]
    assert body == [
        "mimo-v2.6-flash-rl:",
        "  thinking_on:",
        "    1: 1.84",
        "    2: 2.50",
        "    3: N/A",
        "  thinking_off:",
        "    1: 1.83",
        "    2: 2.52",
    ]


def test_a_reader_knowing_only_the_inferencex_layout_sees_the_body() -> None:
    import yaml

    assert yaml.safe_load(dump_curve(MIMO)) == {
        "mimo-v2.6-flash-rl": {
            "thinking_on": {1: 1.84, 2: 2.5, 3: "N/A"},
            "thinking_off": {1: 1.83, 2: 2.52},
        }
    }


def test_round_trip_keeps_every_field_and_the_exact_text(tmp_path: Path) -> None:
    path = tmp_path / "mimov2.6flash_dflash.yaml"
    write_curve(MIMO, path)
    loaded = load_curve(path)
    assert loaded == MIMO
    assert dump_curve(loaded) == path.read_text()


def test_an_inferencex_file_loads_with_its_header_lines() -> None:
    text = (
        "# Source GitHub Actions run: https://github.com/SemiAnalysisAI/InferenceX/actions/runs/7\n"
        "# Acceptance Length (AL) reference values measured with SPEED-Bench.\n"
        "# dataset: coding | temperature: 1.0 | top_p: 0.95 | output_len: 4096\n"
        '# thinking_on chat_template_kwargs: {"enable_thinking": true}\n'
        "# speculative-config: method=dspark | draft_sample_method=probabilistic\n"
        "# Measured on glm-5.2-fp8 (B300, vLLM MTP), per num_speculative_tokens.\n"
        "# model: zai-org/GLM-5.2-FP8 | image: vllm/vllm-openai:v0.30.0 | TP: 8\n"
        "#\n"
        "# key = num_speculative_tokens (MTP level); value = golden AL\n"
        "glm-5.2-fp8:\n"
        "  thinking_on:\n"
        "    1: 1.84\n"
        "    2: 2.50\n"
    )
    curve = loads_curve(text, name="glm5.2_mtp")
    assert curve.header.source.endswith("/runs/7")
    assert curve.header.source_is_run
    assert curve.header.sampling == {"temperature": 1.0, "top_p": 0.95, "output_len": 4096}
    assert curve.header.method == "dspark"
    assert curve.header.speculative == {"draft_sample_method": "probabilistic"}
    assert curve.header.tp == 8
    assert curve.header.notes == (
        "Acceptance Length (AL) reference values measured with SPEED-Bench.",
        "Measured on glm-5.2-fp8 (B300, vLLM MTP), per num_speculative_tokens.",
        "key = num_speculative_tokens (MTP level); value = golden AL",
    )
    assert curve.modes == {"thinking_on": {1: 1.84, 2: 2.5}}


def test_a_description_source_is_written_without_the_run_prefix() -> None:
    curve = Curve(
        name="x", model_key="m", modes={"thinking_on": {1: 1.5}}, header=Provenance(source="CPU")
    )
    text = dump_curve(curve)
    assert text.splitlines()[0] == "# Source: CPU"
    assert loads_curve(text, name="x").header.source == "CPU"


def test_write_is_atomic_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mimov2.6flash_dflash.yaml"
    path.write_text("old\n")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk gone"):
        write_curve(MIMO, path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_write_refuses_a_path_that_is_not_named_after_the_curve(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"must be written to mimov2\.6flash_dflash\.yaml"):
        write_curve(MIMO, tmp_path / "other.yaml")


BAD_FILES = [
    pytest.param(
        "demo:\n  thinking_maybe:\n    1: 1.5\n",
        2,
        "unknown mode 'thinking_maybe'; the modes are thinking_on and thinking_off",
        id="unknown-mode",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 1.5\n    1.5: 2.0\n",
        4,
        "thinking_on: draft length 1.5 is not an integer",
        id="float-k",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    one: 1.5\n",
        3,
        "thinking_on: draft length 'one' is not an integer",
        id="word-k",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    true: 1.5\n",
        3,
        "thinking_on: draft length True is not an integer",
        id="bool-k",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    0: 1.0\n",
        3,
        "thinking_on k=0: draft length 0 must be at least 1",
        id="zero-k",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 2.50\n",
        3,
        "thinking_on k=1: AL 2.5 is outside [1, 2]",
        id="al-above-k-plus-1",
    ),
    pytest.param(
        "demo:\n  thinking_off:\n    3: 0.90\n",
        3,
        "thinking_off k=3: AL 0.9 is outside [1, 4]",
        id="al-below-1",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: fast\n",
        3,
        "thinking_on k=1: AL 'fast' is not a number",
        id="word-al",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: '1.5'\n",
        3,
        "thinking_on k=1: AL '1.5' is not a number",
        id="quoted-al",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: [1.5]\n",
        3,
        "thinking_on k=1: AL '<a nested block>' is not a number",
        id="list-al",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: .nan\n",
        3,
        "thinking_on k=1: AL nan is not finite",
        id="nan-al",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1:\n    2: 2.0\n",
        3,
        "thinking_on k=1: the AL is empty; write a number or N/A",
        id="empty-al",
    ),
    pytest.param(
        "a:\n  thinking_on:\n    1: 1.5\nb:\n  thinking_on:\n    1: 1.5\n",
        4,
        "expected exactly one model key, found 2 ('a', 'b'); keep one curve per file",
        id="two-model-keys",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n  thinking_off:\n    1: 1.5\n",
        2,
        "mode thinking_on is empty; give at least one k: AL or remove it",
        id="empty-mode-null",
    ),
    pytest.param(
        "demo:\n  thinking_on: {}\n",
        2,
        "mode thinking_on is empty; give at least one k: AL or remove it",
        id="empty-mode-braces",
    ),
    pytest.param("demo: {}\n", 1, "demo: no thinking_on / thinking_off mode", id="no-modes"),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 1.5\ndemo:\n  thinking_on:\n    1: 1.6\n",
        4,
        "duplicate key 'demo' (first on line 1); keep one",
        id="duplicate-model-key",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 1.5\n  thinking_on:\n    1: 1.6\n",
        4,
        "duplicate key 'thinking_on' (first on line 2); keep one",
        id="duplicate-mode",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 1.5\n    2: 2.1\n    1: 1.6\n",
        5,
        "duplicate key 1 (first on line 3); keep one",
        id="duplicate-k",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 1.5\n   2: 2.1\n",
        4,
        "not valid YAML",
        id="bad-indentation",
    ),
    pytest.param(
        "- demo\n", 1, "the top level must be a mapping '<model key>: {modes}'", id="list"
    ),
    pytest.param(
        "7:\n  thinking_on:\n    1: 1.5\n",
        1,
        "model key 7 must be a string (the model name)",
        id="int-model-key",
    ),
    pytest.param(
        "demo:\n  - thinking_on\n",
        2,
        "demo: expected thinking_on / thinking_off mappings",
        id="modes-as-list",
    ),
    pytest.param(
        "# TP: four\ndemo:\n  thinking_on:\n    1: 1.5\n",
        1,
        "header TP 'four' must be an integer",
        id="header-tp",
    ),
    pytest.param(
        "# tolerance: -1\ndemo:\n  thinking_on:\n    1: 1.5\n",
        1,
        "header tolerance '-1' must be a non-negative number",
        id="header-tolerance",
    ),
    pytest.param(
        "#\n# thinking_on chat_template_kwargs: {enable: yes}\ndemo:\n  thinking_on:\n    1: 1.5\n",
        2,
        "thinking_on chat_template_kwargs is not JSON",
        id="header-kwargs",
    ),
    pytest.param(
        "# reference: maybe\ndemo:\n  thinking_on:\n    1: 1.5\n",
        1,
        "header reference 'maybe' must be true or false",
        id="header-reference",
    ),
    pytest.param(
        "# tolerance: 1.5\ndemo:\n  thinking_on:\n    1: 1.5\n",
        1,
        "header tolerance 1.5 is above 1: a tolerance that wide passes any curve",
        id="header-tolerance-off",
    ),
    pytest.param(
        "demo:\n  thinking_on:\n    1: 1.5\n    2: 2.\n",
        4,
        "the AL '2.' ends at its decimal point, as a value cut short does",
        id="truncated-al",
    ),
]


@pytest.mark.parametrize(("text", "line", "reason"), BAD_FILES)
def test_bad_files_are_rejected_with_file_line_and_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(GoldenFileError) as info:
        load_curve(path)
    assert info.value.path == str(path)
    assert info.value.line == line
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("stem", ["Demo_MTP", "demo mtp", "demo+mtp", "démo"])
def test_a_curve_name_outside_the_allowed_characters_is_rejected(tmp_path: Path, stem: str) -> None:
    path = write(tmp_path, "demo:\n  thinking_on:\n    1: 1.5\n", name=stem)
    with pytest.raises(GoldenFileError) as info:
        load_curve(path)
    assert info.value.line is None
    assert f"curve name {stem!r} (the file stem) must match [a-z0-9_.-]+" in str(info.value)
    assert str(info.value).startswith(f"{path}: ")


def test_an_empty_file_and_a_missing_file_are_named(tmp_path: Path) -> None:
    with pytest.raises(GoldenFileError, match="the file has no curve"):
        load_curve(write(tmp_path, "# only a header\n"))
    with pytest.raises(GoldenFileError, match="no such golden file"):
        load_curve(tmp_path / "absent.yaml")


def test_a_file_that_is_not_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(dump_curve(MIMO).encode() + b"# measured in M\xfcnchen\n")
    line = dump_curve(MIMO).count("\n") + 1
    with pytest.raises(GoldenFileError) as info:
        load_curve(path)
    assert str(info.value) == (
        f"{path}:{line}: column 16: not valid UTF-8 (byte 0xfc); save the file as UTF-8"
    )


def test_a_byte_order_mark_keeps_the_header() -> None:
    text = "# Source: run 7\n# tolerance: 0.05\ndemo:\n  thinking_on:\n    1: 1.5\n"
    curve = loads_curve("\ufeff" + text, name="demo")
    assert curve == loads_curve(text, name="demo")
    assert (curve.header.source, curve.header.tolerance) == ("run 7", 0.05)


def test_na_cells_and_integer_als_load() -> None:
    curve = loads_curve("demo:\n  thinking_on:\n    1: N/A\n    2: 3\n", name="demo")
    assert curve.modes == {"thinking_on": {1: None, 2: 3.0}}


@pytest.mark.parametrize("depth", [20_000, 100_000])
def test_a_deeply_nested_file_is_one_error_at_the_file(tmp_path: Path, depth: int) -> None:
    path = write(tmp_path, "demo: " + "{a: " * depth + "1" + "}" * depth + "\n")
    with pytest.raises(GoldenFileError) as info:
        load_curve(path)
    assert "nests too deep" in info.value.reason
    assert str(info.value).startswith(f"{path}")
