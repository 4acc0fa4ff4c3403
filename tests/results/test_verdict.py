from __future__ import annotations

import json

import pytest

from pytest_infx.results.verdict import Verdict, of, passed, read


def test_every_kind_writes_one_of_two_words() -> None:
    assert [str(of(True)), str(of(False))] == ["pass", "fail"]
    assert json.dumps({"verdict": of(True)}) == '{"verdict": "pass"}'


@pytest.mark.parametrize(
    ("word", "meant"),
    [
        ("pass", Verdict.PASS),
        ("fail", Verdict.FAIL),
        ("passed", Verdict.PASS),
        ("failed", Verdict.FAIL),
    ],
)
def test_the_words_of_older_agentic_files_still_read(word: str, meant: Verdict) -> None:
    assert read(word) is meant


@pytest.mark.parametrize("word", [None, "", "PASS", "ok", "drift", True, 1, ["pass"]])
def test_a_missing_or_unknown_word_is_no_verdict(word: object) -> None:
    assert read(word) is None
    assert passed({"verdict": word}) is False


def test_only_a_mapping_whose_verdict_reads_as_pass_passed() -> None:
    assert passed({"verdict": "pass"}) and passed({"verdict": "passed"})
    assert not passed({"verdict": "failed"})
    assert not passed({})
    assert not passed([("verdict", "pass")])
