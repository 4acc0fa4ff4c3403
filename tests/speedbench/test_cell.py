from __future__ import annotations

import pytest

from pytest_infx.speedbench import checks
from pytest_infx.speedbench.cell import CellOutcome, CellSettings, run_cell
from pytest_infx.speedbench.client import RequestSampling
from pytest_infx.speedbench.dataset import Dataset, default_dataset_path, load_dataset

from .standin import StandinServer


def small_dataset() -> Dataset:
    ds = load_dataset(default_dataset_path(), category="coding")
    return Dataset(ds.name, ds.path, ds.category, ds.sha256, ds.rows[:4])


def cell(server: StandinServer, engine: str, *, thinking: bool) -> CellOutcome:
    settings = CellSettings(
        base_url=server.url,
        model="m",
        engine=engine,
        draft_length=server.state.k,
        thinking=thinking,
        chat_template_kwargs={"enable_thinking": thinking},
        max_tokens=64,
        concurrency=2,
        sampling=RequestSampling(),
        request_timeout_s=30,
    )
    return run_cell(settings, small_dataset())


@pytest.mark.parametrize("thinking", [True, False])
def test_a_vllm_cell_checks_the_prompt_the_server_rendered(
    standin: StandinServer, thinking: bool
) -> None:
    outcome = cell(standin, "vllm", thinking=thinking)
    assert outcome.reasons == ()
    assert outcome.render_error is None
    assert outcome.rendered_prompt is not None
    assert outcome.rendered_prompt.endswith("<think>\n") is thinking
    assert outcome.al is not None
    assert outcome.counters.drafts is not None and outcome.counters.drafts > 0


def test_a_vllm_render_failure_is_a_rendered_prompt_reason(standin: StandinServer) -> None:
    standin.state.tokenize_status = 500
    outcome = cell(standin, "vllm", thinking=True)
    assert outcome.rendered_prompt is None
    assert outcome.render_error is not None and "/tokenize: HTTP 500" in outcome.render_error
    (reason,) = outcome.reasons
    assert reason.code == "rendered-prompt"
    assert reason.message.startswith("could not ask the server: POST ")
    assert outcome.al is None


def test_an_sglang_cell_skips_the_prompt_check(standin: StandinServer) -> None:
    standin.state.tokenize_status = 500
    outcome = cell(standin, "sglang", thinking=True)
    assert outcome.rendered_prompt is None and outcome.render_error is None
    assert "rendered-prompt" not in [r.code for r in outcome.reasons]
    assert checks.PROMPT_THINKING not in [r.code for r in outcome.reasons]
    assert len(standin.state.bodies) == 4
