from __future__ import annotations

from pytest_infx.fixedseq.checks import check
from pytest_infx.fixedseq.client import Output
from pytest_infx.fixedseq.prompts import RandomRequest

REQUESTS = [RandomRequest("p", 10, 8, (1,)) for _ in range(4)]


def _out(tokens: int | None, text: str = "t", error: str = "") -> Output:
    return Output(not error, text, tokens, 0.1, (), 0.2, error, 1)


def test_a_clean_measurement_passes() -> None:
    checked = check(REQUESTS, [_out(8)] * 4)
    assert checked.passed and checked.completed == 4 and checked.problems == ()


def test_empty_text_with_counted_tokens_is_no_problem() -> None:
    assert check(REQUESTS, [_out(8, text="")] * 4).passed


def test_each_kind_of_unusable_measurement_is_named() -> None:
    outputs = [_out(8), _out(None, error="HTTP 500: boom"), _out(0), _out(5)]
    checked = check(REQUESTS, outputs)
    assert not checked.passed
    assert (checked.failed, checked.empty, checked.short) == (1, 1, 1)
    text = "; ".join(checked.problems)
    assert "1 of 4 requests failed: HTTP 500: boom" in text
    assert "1 requests returned no output tokens" in text
    assert "e.g. 5 of 8 tokens" in text and "ignore_eos" in text


def test_requests_that_were_never_sent_are_named() -> None:
    checked = check(REQUESTS, [_out(8)] * 3)
    assert "only 3 of 4 requests were sent" in checked.problems
