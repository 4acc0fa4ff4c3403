from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_infx.cli import main
from pytest_infx.prepare.precision import PrecisionError, census, disagreement, normalise

from .safetensors_files import fp8_block_layer, mxfp4_moe_layer, write_safetensors

EMBED = {"model.embed_tokens.weight": ("BF16", (256, 128))}


def mxfp4_checkpoint(folder: Path) -> Path:
    tensors = {**EMBED, **mxfp4_moe_layer("model.layers.0"), **mxfp4_moe_layer("model.layers.1")}
    write_safetensors(folder / "model.safetensors", tensors)
    return folder


def test_packed_mxfp4_experts_count_two_values_per_byte_and_decide_the_label(
    tmp_path: Path,
) -> None:
    found = census(mxfp4_checkpoint(tmp_path))
    rows = {row.name: row for row in found.rows}
    assert list(rows) == ["fp4", "bf16", "scales"]
    packed = 2 * 2 * (4 * 128 * 4 * 16 + 4 * 64 * 4 * 16)
    assert (rows["fp4"].tensors, rows["fp4"].parameters, rows["fp4"].bytes) == (
        4,
        packed,
        packed // 2,
    )
    assert rows["fp4"].dtypes == ("U8",)
    assert rows["bf16"].parameters == 256 * 128 + 2 * (4 * 128 + 128 * 128 + 128)
    assert rows["scales"].dtypes == ("F8_E8M0", "U8") and rows["scales"].tensors == 4
    assert found.parameters == rows["fp4"].parameters + rows["bf16"].parameters
    assert found.label == "fp4"
    assert found.share(rows["fp4"]) == pytest.approx(packed / found.parameters)


def test_block_scaled_fp8_is_fp8_and_its_scales_do_not_count(tmp_path: Path) -> None:
    tensors = {
        "model.embed_tokens.weight": ("BF16", (1000, 256)),
        **fp8_block_layer("model.layers.0"),
        **fp8_block_layer("model.layers.1"),
    }
    found = census(write_safetensors(tmp_path / "model.safetensors", tensors))
    rows = {row.name: row for row in found.rows}
    assert rows["fp8"].parameters == 2 * 4 * 256 * 256 and rows["fp8"].dtypes == ("F8_E4M3",)
    assert rows["scales"].dtypes == ("F32",) and rows["scales"].parameters == 2 * 4 * 2 * 2
    assert rows["bf16"].parameters == 1000 * 256 + 2 * 256
    assert found.label == "fp8"


def test_a_bf16_checkpoint_with_a_few_fp32_norms_is_bf16(tmp_path: Path) -> None:
    tensors = {"lm_head.weight": ("BF16", (512, 64)), "norm.weight": ("F32", (64,))}
    found = census(write_safetensors(tmp_path / "m.safetensors", tensors))
    assert [(r.name, r.parameters) for r in found.rows] == [("bf16", 512 * 64), ("fp32", 64)]
    assert found.label == "bf16"


def test_sharded_checkpoints_follow_their_index(tmp_path: Path) -> None:
    layer0, layer1 = mxfp4_moe_layer("model.layers.0"), mxfp4_moe_layer("model.layers.1")
    write_safetensors(tmp_path / "model-00001-of-00002.safetensors", {**EMBED, **layer0})
    write_safetensors(tmp_path / "model-00002-of-00002.safetensors", layer1)
    write_safetensors(tmp_path / "stray.safetensors", {"x": ("F32", (10_000_000,))})
    write_safetensors(tmp_path / "dflash" / "model.safetensors", {"y": ("F32", (10_000_000,))})
    weight_map = {name: "model-00001-of-00002.safetensors" for name in {**EMBED, **layer0}}
    weight_map |= {name: "model-00002-of-00002.safetensors" for name in layer1}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    found = census(tmp_path)
    assert [f.name for f in found.files] == [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ]
    assert found.label == "fp4"
    assert found.parameters == census(mxfp4_checkpoint(tmp_path / "single")).parameters


def test_without_an_index_every_safetensors_file_of_the_folder_counts(tmp_path: Path) -> None:
    write_safetensors(tmp_path / "a.safetensors", {"a": ("BF16", (100,))})
    write_safetensors(tmp_path / "b.safetensors", {"b": ("F8_E4M3", (300,))})
    write_safetensors(tmp_path / "sub" / "c.safetensors", {"c": ("F32", (1000,))})
    found = census(tmp_path)
    assert [f.name for f in found.files] == ["a.safetensors", "b.safetensors"]
    assert [(r.name, r.parameters) for r in found.rows] == [("fp8", 300), ("bf16", 100)]


def _raw(header: bytes) -> bytes:
    return struct.pack("<Q", len(header)) + header


def _bad(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "model.safetensors"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x01\x02", "too short for a safetensors header"),
        (struct.pack("<Q", 4096) + b"{}", "header length 4096 does not fit the file (10 bytes)"),
        (_raw(b"oops"), "the header is not UTF-8 JSON"),
        (_raw(b"\xff{}"), "the header is not UTF-8 JSON"),
        (_raw(b"[]"), "the header is a JSON list, not an object"),
        (_raw(b'{"w": {"shape": [1]}}'), "tensor 'w' has no string 'dtype'"),
        (
            _raw(b'{"w": {"dtype": "F32", "shape": 3}}'),
            "tensor 'w' has shape 3; expected a list of sizes >= 0",
        ),
        (_raw(b"[" * 100_000 + b"]" * 100_000), "the header nests too deep"),
    ],
    ids=[
        "short",
        "long-header",
        "not-json",
        "not-utf8",
        "not-object",
        "no-dtype",
        "bad-shape",
        "deep",
    ],
)
def test_a_broken_header_names_the_file_and_what_is_wrong(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    path = _bad(tmp_path, data)
    with pytest.raises(PrecisionError) as info:
        census(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (os.mkfifo, "is a pipe, not a regular file; give a file"),
        (lambda p: p.symlink_to(p.name), "is a symbolic link loop; point the link at a file"),
        (lambda p: p.symlink_to("/dev/null"), "is a character device, not a regular file"),
    ],
    ids=["pipe", "link-loop", "device"],
)
def test_a_checkpoint_that_is_not_a_file_says_what_it_is_and_never_blocks(
    tmp_path: Path, make: Callable[[Path], object], expected: str
) -> None:
    path = tmp_path / "model.safetensors"
    make(path)
    with pytest.raises(PrecisionError) as info:
        census(path)
    assert str(info.value).startswith(f"{path}: {expected}")


def test_an_index_naming_a_missing_shard_or_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(PrecisionError, match=r"no \*\.safetensors files"):
        census(tmp_path / "empty")
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"w": "model-00001-of-00002.safetensors"}}))
    with pytest.raises(PrecisionError) as info:
        census(tmp_path)
    assert str(info.value) == (
        f"{index}: names shard(s) that are not there: model-00001-of-00002.safetensors; "
        "the checkpoint is incomplete"
    )
    index.write_text("{}")
    with pytest.raises(PrecisionError, match=r"unreadable index \(KeyError"):
        census(tmp_path)


@pytest.mark.parametrize(
    "shard", ["../outside/shard.safetensors", "/proc/self/environ", "link/shard.safetensors"]
)
def test_an_index_naming_a_shard_outside_the_checkpoint_is_refused_unread(
    tmp_path: Path, shard: str
) -> None:
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (tmp_path / "outside").mkdir()
    write_safetensors(tmp_path / "outside" / "shard.safetensors", EMBED)
    (checkpoint / "link").symlink_to(tmp_path / "outside")
    index = checkpoint / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"w": shard}}))
    with pytest.raises(PrecisionError) as info:
        census(checkpoint)
    assert str(info.value) == (
        f"{index}: 'weight_map' is {shard!r}, which leads outside {checkpoint.resolve()}; "
        f"give a path inside {checkpoint.resolve()}"
    )


def test_labels_and_their_aliases(tmp_path: Path) -> None:
    found = census(mxfp4_checkpoint(tmp_path))
    assert normalise(" MXFP4 ") == normalise("nvfp4") == "fp4"
    assert disagreement("mxfp4", found) is None
    why = disagreement("fp8", found)
    assert why is not None and why.startswith("model.precision is 'fp8' but the checkpoint ")
    assert f"{tmp_path} is fp4 (" in why and "% of " in why and " parameters are U8)" in why
    unknown = disagreement("w4a16", found)
    assert unknown is not None and "'w4a16' is not a label the census knows" in unknown


def test_infx_precision_prints_the_census_and_the_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = mxfp4_checkpoint(tmp_path)
    assert main(["precision", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{folder}: 1 file(s), 15 tensors, ")
    assert out[1].split() == ["class", "dtypes", "tensors", "parameters", "share", "bytes"]
    assert out[2].split()[:3] == ["fp4", "U8", "4"] and out[-1] == "label: fp4"
    assert main(["precision", str(folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["label"] == "fp4" and [c["class"] for c in data["classes"]][-1] == "scales"
    assert main(["precision", str(folder), "--expect", "bf16"]) == 1
    assert "model.precision is 'bf16' but the checkpoint" in capsys.readouterr().err
    assert main(["precision", str(tmp_path / "nowhere")]) == 2
    assert (
        capsys.readouterr().err
        == f"infx precision: {tmp_path / 'nowhere'}: no such file or folder\n"
    )


def test_nvfp4_e4m3_block_scales_are_scales_not_fp8_weights(tmp_path: Path) -> None:
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {"embed.weight": ("BF16", (64, 128))}
    for proj in ("q_proj", "down_proj"):
        tensors[f"layers.0.{proj}.weight"] = ("U8", (256, 64))
        tensors[f"layers.0.{proj}.weight_scale"] = ("F8_E4M3", (256, 8))
        tensors[f"layers.0.{proj}.weight_scale_2"] = ("F32", ())
        tensors[f"layers.0.{proj}.input_scale"] = ("F32", ())
    found = census(write_safetensors(tmp_path / "model.safetensors", tensors))
    rows = {row.name: row for row in found.rows}
    assert set(rows) == {"fp4", "bf16", "scales"}
    assert rows["fp4"].parameters == 2 * 2 * 256 * 64
    assert rows["scales"].dtypes == ("F32", "F8_E4M3") and rows["scales"].tensors == 6
    assert rows["scales"].parameters == 2 * (256 * 8 + 1 + 1)
    assert found.label == "fp4" and disagreement("nvfp4", found) is None
