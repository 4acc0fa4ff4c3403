from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_infx.prepare.precision import PrecisionCheck, PrecisionWarning, census, normalise
from pytest_infx.recipes.loader import load_file
from pytest_infx.recipes.points import Point, expand

from .safetensors_files import fp8_block_layer, write_safetensors

REPO = Path(__file__).resolve().parents[2]
HUB_RECIPE = """\
key: demo-fp8-h200-vllm-ngram
model: {hub-id: deepseek-ai/Demo-V3, served-name: demo, prefix: demo, precision: PRECISION}
runner: h200
engine: {name: vllm, image: "vllm/vllm-openai:v0.31.0@sha256:%s"}
tp: 8
speedbench:
  speculative: {method: ngram}
  draft-lengths: [1]
  thinking-modes: {thinking_off: {enable_thinking: false}}
  concurrency: 8
  dataset: {category: coding}
  output-len: 64
  golden: demo_ngram
""" % ("0" * 64)


def hub_point(tmp_path: Path, precision: str) -> Point:
    path = tmp_path / "recipes" / "demo.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HUB_RECIPE.replace("PRECISION", precision))
    return expand(load_file(path))[0]


def fp8_checkpoint(folder: Path) -> Path:
    tensors = {"embed.weight": ("BF16", (64, 256)), **fp8_block_layer("layers.0")}
    write_safetensors(folder / "model.safetensors", tensors)
    (folder / "config.json").write_text("{}")
    return folder


def test_the_staged_copy_wins_then_the_download_root(tmp_path: Path) -> None:
    point = hub_point(tmp_path, "fp8")
    staged, download = tmp_path / "staged", tmp_path / "download"
    check = PrecisionCheck(mode="warn", staged_root=staged, download_root=download)
    assert check.local_checkpoint(point) is None
    fp8_checkpoint(download / "Demo-V3")
    assert check.local_checkpoint(point) == download / "Demo-V3"
    (staged / "Demo-V3").mkdir(parents=True)
    assert check.local_checkpoint(point) == download / "Demo-V3"
    fp8_checkpoint(staged / "Demo-V3")
    assert check.local_checkpoint(point) == staged / "Demo-V3"
    assert check.problem(point) is None


def test_a_disagreeing_label_fails_or_warns_once(tmp_path: Path) -> None:
    point = hub_point(tmp_path, "bf16")
    fp8_checkpoint(tmp_path / "download" / "Demo-V3")
    failing = PrecisionCheck(mode="fail", staged_root=None, download_root=tmp_path / "download")
    (problem,) = failing.preflight(point)
    assert problem.startswith(
        "demo-fp8-h200-vllm-ngram: model.precision is 'bf16' but the checkpoint "
        f"{tmp_path / 'download' / 'Demo-V3'} is fp8 ("
    )
    warning = PrecisionCheck(mode="warn", staged_root=None, download_root=tmp_path / "download")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warning.preflight(point) == [] and warning.preflight(point) == []
    assert [(w.category, str(w.message)) for w in caught] == [(PrecisionWarning, problem)]
    off = PrecisionCheck(mode="off", staged_root=None, download_root=tmp_path / "download")
    assert off.preflight(point) == []


def test_an_unreadable_local_checkpoint_is_reported_as_such(tmp_path: Path) -> None:
    point = hub_point(tmp_path, "fp8")
    folder = tmp_path / "download" / "Demo-V3"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\x00")
    check = PrecisionCheck(mode="fail", staged_root=None, download_root=tmp_path / "download")
    assert check.preflight(point) == [
        f"demo-fp8-h200-vllm-ngram: precision check: {folder / 'model.safetensors'}: 1 bytes, "
        "too short for a safetensors header (8-byte length first); the file is truncated or "
        "not safetensors"
    ]


@pytest.mark.engine
def test_the_embedded_smollm2_is_bf16_as_the_cpu_recipes_say(tmp_path: Path) -> None:
    from pytest_infx.engines import embedded

    engine = embedded.ensure()
    found = census(engine.model_dir)
    assert found.label == "bf16"
    assert [(r.name, r.dtypes) for r in found.rows] == [("bf16", ("BF16",))]
    assert 134_000_000 < found.parameters < 136_000_000
    check = PrecisionCheck(mode="fail", staged_root=None, download_root=tmp_path)
    recipes = sorted((REPO / "recipes").glob("smollm2-*-cpu-*.yaml"))
    assert recipes
    for path in recipes:
        point = expand(load_file(path))[0]
        assert normalise(point.recipe.model.precision) == "bf16"
        assert check.local_checkpoint(point) == engine.model_dir
        assert check.preflight(point) == []
