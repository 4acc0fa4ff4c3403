"""The embedded engine as the rest of the package sees it: a name, an installed environment
with a python, a model and a draft, found or installed through one module."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_infx.engines import embedded
from pytest_infx.engines.registry import installed
from pytest_infx.envs import toolenv
from pytest_infx.files.atomic import atomic_write_text as write_atomic


def test_installed_is_none_until_the_environment_is_complete(tmp_path: Path) -> None:
    assert embedded.installed(cache_dir=tmp_path) is None
    env = toolenv.locate(embedded.SPEC, cache_dir=tmp_path)
    env.env_dir.mkdir(parents=True)
    assert embedded.installed(cache_dir=tmp_path) is None
    write_atomic(env.marker_path, json.dumps({"seconds": 1.0}))
    engine = embedded.installed(cache_dir=tmp_path)
    assert engine is not None
    assert engine.env_dir == env.env_dir
    assert engine.python == env.env_dir / "bin" / "python"
    assert engine.model_dir.parent == engine.draft_dir.parent == env.env_dir / "models"
    assert engine.model_dir != engine.draft_dir
    assert engine.version == embedded.SPEC.version


def test_ensure_finds_an_installed_engine_without_installing(tmp_path: Path) -> None:
    env = toolenv.locate(embedded.SPEC, cache_dir=tmp_path)
    env.env_dir.mkdir(parents=True)
    write_atomic(env.marker_path, "{}\n")
    assert embedded.ensure(cache_dir=tmp_path) == embedded.installed(cache_dir=tmp_path)


def test_a_recipe_names_it_as_infx_engine_does() -> None:
    assert embedded.NAME == embedded.SPEC.name
    assert installed().engine_rules().embedded == (embedded.NAME,)
