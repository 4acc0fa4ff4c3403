"""The launching step of InferenceX's workflow, read and evaluated for one point as GitHub
would: the expressions its variables use, and the step found by what it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_infx.cli.workflow import (
    WorkflowError,
    evaluate,
    launch_step,
    render,
    step_environment,
)

SUBDIR = "inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/'"


@pytest.mark.parametrize(
    ("scenario", "expected"), [("agentic-coding", "agentic/"), ("fixed-seq-len", "fixed_seq_len/")]
)
def test_a_conditional_expression_picks_its_branch(scenario: str, expected: str) -> None:
    assert evaluate(SUBDIR, {"inputs": {"scenario-type": scenario}}) == expected


def test_booleans_numbers_negation_and_functions_render_as_github_writes_them() -> None:
    context = {"inputs": {"dp-attn": False, "tp": 8, "require-power": True}}
    assert render("${{ inputs.dp-attn }}-${{ inputs.tp }}", context) == "false-8"
    assert render("${{ inputs.require-power && '1' || '0' }}", context) == "1"
    assert render("${{ !inputs.dp-attn }}", context) == "true"
    assert render("${{ inputs.tp != '8' }}", context) == "false"
    assert render("a${{ toJSON(inputs.tp) }}b${{ secrets.TOKEN }}", context) == "ab"


def test_the_step_sees_the_workflow_variables_and_the_inputs_defaults(tmp_path: Path) -> None:
    path = tmp_path / ".github/workflows/benchmark-tmpl.yml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "on:\n  workflow_call:\n    inputs:\n      eval-only: {default: false}\n"
        "env:\n  EXP: ${{ inputs.exp-name }}\n"
        "jobs:\n  b:\n    steps:\n      - run: echo cleanup\n"
        "      - env:\n          NAME: ${{ env.EXP }}_${{ runner.name }}\n"
        "        run: |\n          bash ./runners/launch_x.sh ${{ inputs.eval-only }}\n",
        encoding="utf-8",
    )
    env, script = step_environment(launch_step(tmp_path), {"exp-name": "e"}, "h_00", tmp_path)
    assert env == {"EXP": "e", "NAME": "e_h_00"}
    assert script == "bash ./runners/launch_x.sh false\n"


def test_a_checkout_without_the_workflow_is_named_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match=r"benchmark-tmpl\.yml: not found; give an InferenceX"):
        launch_step(tmp_path)
