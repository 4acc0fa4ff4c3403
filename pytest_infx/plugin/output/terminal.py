"""What pytest-infx adds to pytest's terminal output and exit status: header notes, the plan,
the lint summary and the selection reasons."""

from __future__ import annotations

import pytest

import pytest_infx.plugin.collect.lint as lint
from pytest_infx.plugin.state import RunState


def header(config: pytest.Config) -> list[str]:
    return [f"infx: {note}" for note in RunState.of(config).notes]


def exit_status(session: pytest.Session) -> None:
    """A lint run whose rules judged nothing fails: an empty lint pass is a setup mistake."""
    if lint.judged_nothing(session.config) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    plan_lines = RunState.of(config).plan
    if plan_lines:
        terminalreporter.write_sep("=", "infx plan")
        for line in plan_lines:
            terminalreporter.write_line(line)
    errors = sum(
        1 for r in terminalreporter.stats.get("error", []) if isinstance(r, pytest.CollectReport)
    )
    lint_lines = lint.stopped_by_collection(config, errors) or lint.summary_lines(config)
    if lint_lines:
        terminalreporter.write_sep("-", "infx lint")
        for line in lint_lines:
            red = line.startswith("ERROR")
            terminalreporter.write_line(line, yellow=line.startswith("WARNING"), red=red, bold=True)
    reasons = RunState.of(config).reasons
    if reasons:
        terminalreporter.write_sep("-", "infx selection")
        for reason in reasons:
            terminalreporter.write_line(reason)
