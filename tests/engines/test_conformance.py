"""The argv check's machinery: which argv reach which parser, in how many processes, and where
a rejection is reported. A stand-in script stands for the engine's parser here; the engines' own
parsers are exercised in ``test_parsers.py``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from known_recipes import copy_recipes

from pytest_infx.engines import conformance
from pytest_infx.engines.base import ModelPaths, ParserEnv
from pytest_infx.engines.sglang import SglangAdapter
from pytest_infx.engines.vllm import VllmAdapter
from pytest_infx.envs import toolenv
from pytest_infx.envs.toolenv import ToolEnvSpec
from pytest_infx.files.atomic import atomic_write_text as write_atomic
from pytest_infx.prepare import preflight
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import expand_all

REPO = Path(__file__).resolve().parents[2]


FAKE = ToolEnvSpec(name="fake-parser", version="1")
DFLASH = "mimov2.6flash-fp4-b300-vllm-dflash.yaml"


def fake_env(cache: Path) -> None:
    """An installed-looking parser environment whose python is this interpreter."""
    env = toolenv.locate(FAKE, cache_dir=cache)
    (env.env_dir / "bin").mkdir(parents=True)
    os.symlink(sys.executable, env.python)
    write_atomic(env.marker_path, json.dumps({"seconds": 0}))


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every adapter's parser is the stand-in; returns the file each parser process logs to."""
    log = tmp_path / "runs.log"
    monkeypatch.setenv("FAKE_PARSER_LOG", str(log))
    env = ParserEnv(FAKE, "fake_parser.py.txt", "Fake 1", package=__package__ or "")
    for adapter in (VllmAdapter, SglangAdapter):
        monkeypatch.setattr(adapter, "parser_env", lambda self, version: env)
    return log


@pytest.fixture
def recipes(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    copy_recipes(root)
    return root


def check(recipes: Path, tmp_path: Path, **kwargs: Any) -> conformance.Report:
    return preflight.engine_check(
        recipes, REPO / "golden", cache_dir=tmp_path / "cache", install=False, **kwargs
    )


def test_parser_argv_drops_the_command_and_fills_the_port(recipes: Path) -> None:
    point = next(p for p in expand_all(load_tree(recipes)) if p.runner == "b300")
    plan = VllmAdapter().plan(point, ModelPaths("/m", "/m/dflash"))
    argv = conformance.parser_argv(plan)
    assert plan.argv[:2] == ("vllm", "serve") and argv[:2] == ["--model", "/m"]
    assert argv[argv.index("--port") + 1] == conformance.PORT
    assert argv == list(plan.argv[2:])[: argv.index("--port")] + argv[argv.index("--port") :]


def test_every_point_is_parsed_in_one_process_per_environment(
    recipes: Path, tmp_path: Path, runs: Path
) -> None:
    fake_env(tmp_path / "cache")
    report = check(recipes, tmp_path, runner="b200")
    assert report.ok and not report.unchecked
    (run,) = report.runs
    assert run.release == "Fake 1" and run.points == 48
    assert run.argvs <= run.points
    assert runs.read_text().splitlines() == ["run"]


def test_a_second_check_of_unchanged_commands_starts_no_parser(
    recipes: Path, tmp_path: Path, runs: Path
) -> None:
    fake_env(tmp_path / "cache")
    path = recipes / DFLASH
    path.write_text(path.read_text().replace("  args:\n", "  args:\n    bogus-flag: 3\n"))
    said: list[str] = []
    first = check(recipes, tmp_path, runner="b300", progress=said.append)
    assert runs.read_text().splitlines() == ["run"]
    assert len(said) == 1 and said[0].startswith("engine argv check: parsing ")
    assert "the Fake 1 parser" in said[0]
    again = check(recipes, tmp_path, runner="b300", progress=said.append)
    assert runs.read_text().splitlines() == ["run"] and len(said) == 1
    assert [str(r) for r in again.rejected] == [str(r) for r in first.rejected] != []
    (run,) = again.runs
    assert run.cached == run.argvs > 0 and run.import_s is None
    assert f"({run.argvs} verdicts from the cache)" in conformance.summary(again)[0]
    path.write_text(path.read_text().replace("bogus-flag: 3", "bogus-flag: 4"))
    check(recipes, tmp_path, runner="b300", progress=said.append)
    assert runs.read_text().splitlines() == ["run", "run"]


def test_a_rejection_names_the_recipe_line_of_the_flag(
    recipes: Path, tmp_path: Path, runs: Path
) -> None:
    fake_env(tmp_path / "cache")
    path = recipes / DFLASH
    text = path.read_text().replace("  args:\n", "  args:\n    bogus-flag: 3\n")
    path.write_text(text)
    report = check(recipes, tmp_path, runner="b300")
    (rejection,) = report.rejected
    line = text.splitlines().index("    bogus-flag: 3") + 1
    assert (rejection.location.path, rejection.location.line) == (path, line)
    assert len(rejection.point_ids) == 14
    assert str(rejection) == (
        f"{path}:{line}: Fake 1 rejects the server command of"
        " mimov2.6flash-fp4-b300-vllm-dflash[k1-thinking_off],"
        " mimov2.6flash-fp4-b300-vllm-dflash[k1-thinking_on],"
        " mimov2.6flash-fp4-b300-vllm-dflash[k2-thinking_off] and 11 more:"
        " unrecognized arguments: --bogus-flag"
    )


def test_without_install_a_missing_parser_leaves_points_unchecked(
    recipes: Path, tmp_path: Path, runs: Path
) -> None:
    report = check(recipes, tmp_path, runner="b300")
    assert report.ok and not report.runs
    assert len(report.unchecked) == 14
    assert "Fake 1 parser not installed" in report.unchecked[0]
    assert not runs.exists()


def test_a_local_command_is_not_checked(recipes: Path, tmp_path: Path, runs: Path) -> None:
    fake_env(tmp_path / "cache")
    path = recipes / DFLASH
    text = path.read_text()
    image = next(line for line in text.splitlines() if line.startswith("  image: "))
    path.write_text(text.replace(image, "  command: [my-vllm, serve]"))
    report = check(recipes, tmp_path, runner="b300")
    assert not report.runs and len(report.unchecked) == 14
    assert "a local command's parser is whatever it runs" in report.unchecked[0]


def test_a_parser_that_does_not_install_here_falls_back_to_the_closest(
    recipes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PARSER_LOG", str(tmp_path / "runs.log"))
    fake_env(tmp_path / "cache")
    fallback = ParserEnv(FAKE, "fake_parser.py.txt", "Fake 1", package=__package__ or "")
    broken = ToolEnvSpec(name="broken-parser", version="1", check=("python", "-c", "exit(3)"))
    primary = ParserEnv(broken, "fake_parser.py.txt", "Broken 1", fallback=fallback)
    monkeypatch.setattr(VllmAdapter, "parser_env", lambda self, version: primary)
    report = preflight.engine_check(
        recipes, REPO / "golden", runner="b300", cache_dir=tmp_path / "cache"
    )
    (run,) = report.runs
    assert run.release == "Fake 1" and run.points == 14
    assert run.note.startswith("Broken 1's parser does not run here (broken-parser 1: step 'check'")
    assert run.note.endswith("the closest one that does")


def test_a_parser_standing_in_for_the_pinned_release_proves_acceptance_only(
    recipes: Path, tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nightly pin is parsed by the closest release that imports here; a flag that release
    does not know may be one the nightly has, so its rejection is unchecked, not a failure."""
    fake_env(tmp_path / "cache")
    path = recipes / DFLASH
    path.write_text(path.read_text().replace("  args:\n", "  args:\n    bogus-flag: 3\n"))
    assert len(check(recipes, tmp_path, runner="b300").rejected) == 1
    standing_in = ParserEnv(
        FAKE, "fake_parser.py.txt", "Fake 1", package=__package__ or "", stands_in=True
    )
    monkeypatch.setattr(VllmAdapter, "parser_env", lambda self, version: standing_in)
    report = check(recipes, tmp_path, runner="b300")
    assert report.rejected == ()
    assert len(report.unchecked) == 14
    assert (
        "Fake 1, standing in for the pinned release, rejects it (unrecognized arguments:"
        in (report.unchecked[0])
    )


def test_a_parser_that_does_not_install_is_tried_once_then_its_fallback_is_used(
    recipes: Path, tmp_path: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_env(tmp_path / "cache")
    broken = ToolEnvSpec(name="broken-parser", version="1")
    fallback = ParserEnv(FAKE, "fake_parser.py.txt", "Fake 1", package=__package__ or "")
    pinned = ParserEnv(
        broken, "fake_parser.py.txt", "Broken 1", package=__package__ or "", fallback=fallback
    )
    monkeypatch.setattr(VllmAdapter, "parser_env", lambda self, version: pinned)
    tried: list[str] = []
    real_ensure = toolenv.ensure

    def ensure(spec: ToolEnvSpec, **kwargs: object) -> toolenv.ToolEnv:
        tried.append(spec.name)
        if spec is broken:
            raise toolenv.InstallError("broken-parser 1: step 'check' failed\nmore")
        return real_ensure(spec, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(conformance, "ensure", ensure)
    for _ in range(2):
        report = preflight.engine_check(
            recipes, REPO / "golden", cache_dir=tmp_path / "cache", runner="b300"
        )
        assert report.ok
        (run,) = report.runs
        assert run.release == "Fake 1"
        assert run.note.startswith("Broken 1's parser does not run here (broken-parser 1: step")
    assert tried == ["broken-parser", "fake-parser", "fake-parser"]
