"""An engine adapter from another package runs a SPEED-Bench cell end to end: its own plan,
its own counters (under its own series names) and its own per-request parser."""

from __future__ import annotations

import pytest

from .conftest import Sweep
from .fake_vllm import DEFAULT_PATTERN, expected_al
from .helpers import MODES

ADAPTER = """
import json

from pytest_infx.engines.base import make_plan, speculation
from pytest_infx.engines.spec import RequestSpecMetrics, SpecCounters

PREFIX = "lmdeploy:spec_"


class LmdeployAdapter:
    name = "lmdeploy"

    def plan(self, point, paths, *, synthetic=None, embedded_python=None):
        spec, k = speculation(point)
        command = list(point.recipe.engine.command)
        argv = command + ["--model", paths.target, "--port", "{port}", "--host", "127.0.0.1"]
        argv += ["--served-model-name", point.recipe.model.served_name]
        argv += ["--per-request-spec-decode-metrics", "summary"]
        config = {"method": spec.method, "num_speculative_tokens": k}
        argv += ["--speculative-config", json.dumps(config)]
        env = {"INFX_FAKE_SPEC_PREFIX": PREFIX}
        return make_plan(self.name, point, argv, env, k, command=len(command))

    async def rendered_prompt(self, base_url, *, model, messages, chat_template_kwargs,
                              timeout_s=60.0):
        return None

    def spec_counters(self, snapshot):
        drafts = snapshot.total(PREFIX + "num_drafts_total")
        return SpecCounters(
            engine=self.name if drafts is not None else None,
            drafts=drafts,
            accepted=snapshot.total(PREFIX + "num_accepted_tokens_total"),
            empty=not snapshot.series,
            series={"drafts": PREFIX + "num_drafts_total"},
        )

    def request_spec(self, frame):
        metrics = frame.get("metrics") or {}
        m = metrics.get("speculative_decoding")
        if not isinstance(m, dict):
            return None
        return RequestSpecMetrics(
            "lmdeploy", m["num_spec_steps"], m["num_accepted_draft_tokens"], None, None
        )


def pytest_infx_register_engines():
    return [LmdeployAdapter]
"""
KEY = "fake-cpu-lmdeploy"


def test_a_provided_adapter_runs_a_cell_with_its_own_counters(sweep: Sweep) -> None:
    sweep.pytester.makeconftest(ADAPTER)
    path = sweep.add(KEY, draft_lengths=(2,))
    path.write_text(path.read_text().replace("name: vllm", "name: lmdeploy"))
    sweep.commit_golden({m: {2: expected_al(DEFAULT_PATTERN, 2)} for m in MODES})
    result = sweep.run()
    result.assert_outcomes(passed=len(MODES))
    for mode in MODES:
        cell = sweep.cell(f"{KEY}[k2-{mode}]")
        assert cell["engine"]["name"] == "lmdeploy"
        assert cell["al"] == round(expected_al(DEFAULT_PATTERN, 2), 2)
        assert cell["counters"]["delta"]["drafts"] > 0
        assert cell["al_token_weighted"] == pytest.approx(cell["al_request_weighted"])
        assert cell["verdict"] == "pass"
