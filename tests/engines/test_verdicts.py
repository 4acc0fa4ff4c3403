"""The parser verdicts kept between runs: keyed by the parser and the argv, and never trusted
from a file that cannot be read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pytest_infx.engines.base import ParserEnv
from pytest_infx.engines.verdicts import Verdicts
from pytest_infx.envs.toolenv import ToolEnvSpec

PARSER = ParserEnv(
    ToolEnvSpec(name="fake-parser", version="1"),
    "fake_parser.py.txt",
    "Fake 1",
    package=__package__ or "",
)
ACCEPTED = ("--port", "8000")
REJECTED = ("--bogus", "1")


def test_verdicts_are_kept_per_argv(tmp_path: Path) -> None:
    store = Verdicts.of(PARSER, tmp_path)
    assert store.known([ACCEPTED, REJECTED]) == {}
    store.add({ACCEPTED: None, REJECTED: "unrecognized arguments: --bogus"})
    again = Verdicts.of(PARSER, tmp_path)
    assert again.path == store.path and again.path.parent == tmp_path / "engine-check"
    assert again.known([ACCEPTED, REJECTED, ("--other",)]) == {
        ACCEPTED: None,
        REJECTED: "unrecognized arguments: --bogus",
    }


def test_another_release_or_environment_has_its_own_verdicts(tmp_path: Path) -> None:
    Verdicts.of(PARSER, tmp_path).add({ACCEPTED: None})
    other_release = replace(PARSER, release="Fake 2")
    other_env = replace(PARSER, spec=ToolEnvSpec(name="fake-parser", version="2"))
    assert Verdicts.of(other_release, tmp_path).known([ACCEPTED]) == {}
    assert Verdicts.of(other_env, tmp_path).known([ACCEPTED]) == {}


def test_a_file_that_cannot_be_read_is_an_empty_store(tmp_path: Path) -> None:
    store = Verdicts.of(PARSER, tmp_path)
    store.path.parent.mkdir(parents=True)
    for text in ("{half", '{"format": 0, "verdicts": {}}', '{"format": 1, "verdicts": []}'):
        store.path.write_text(text)
        assert store.known([ACCEPTED]) == {}
    store.add({ACCEPTED: None})
    assert store.known([ACCEPTED]) == {ACCEPTED: None}
