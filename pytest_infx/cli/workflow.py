"""InferenceX's workflow step that launches a point (``benchmark-tmpl.yml``'s step that runs
``runners/launch_*.sh``), with its ``${{ }}`` expressions evaluated for one point.

What a point runs is decided as much by that step (the variables it exports, the launcher it
picks from the runner's name) as by the per-key script; so a checkout's scripts are replayed
from the step, its expressions evaluated from the point as ``run-sweep.yml`` passes it. Only
what those expressions use is read: ``inputs``, ``env``, ``runner``, ``secrets``, ``vars`` and
``github`` properties, string, number and boolean literals, ``!``, ``==``, ``!=``, ``&&``,
``||`` and parentheses; a function call reads as empty, as a secret does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

WORKFLOW = Path(".github/workflows/benchmark-tmpl.yml")
"""The reusable workflow whose step runs a point's launcher, relative to the checkout."""
LAUNCHER = "runners/launch_"
"""What the launching step's script names; the step is found by it, not by its title."""

Value = str | bool | float | None

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||[!()\[\],])"
    r"|(?P<num>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.\-*]*))"
)


@dataclass(frozen=True)
class Step:
    """The launching step: the variables it sets (the workflow's, then its own) and its
    script, both with expressions still in them."""

    workflow_env: Mapping[str, str]
    step_env: Mapping[str, str]
    run: str
    defaults: Mapping[str, Value]


class WorkflowError(ValueError):
    """The workflow is missing or has no launching step; ``str()`` is the one line."""


def launch_step(checkout: Path) -> Step:
    """The step of the checkout's workflow that runs the launcher."""
    path = checkout / WORKFLOW
    if not path.is_file():
        raise WorkflowError(f"{path}: not found; give an InferenceX checkout (it has {WORKFLOW})")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    trigger = data.get("on", data.get(True)) or {}
    call = trigger.get("workflow_call") or {} if isinstance(trigger, dict) else {}
    defaults = {
        name: spec.get("default")
        for name, spec in (call.get("inputs") or {}).items()
        if isinstance(spec, dict)
    }
    for job in (data.get("jobs") or {}).values():
        for step in job.get("steps") or ():
            if LAUNCHER in str(step.get("run", "")):
                return Step(
                    {k: _text(v) for k, v in (data.get("env") or {}).items()},
                    {k: _text(v) for k, v in (step.get("env") or {}).items()},
                    str(step["run"]),
                    defaults,
                )
    raise WorkflowError(f"{path}: no step runs {LAUNCHER}*.sh; give an InferenceX checkout")


def _text(raw: object) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return "" if raw is None else str(raw)


def step_environment(
    step: Step, inputs: Mapping[str, Any], runner_name: str, workspace: Path
) -> tuple[dict[str, str], str]:
    """The variables the step runs with and its script, evaluated for one point: the
    workflow's variables see the inputs, the step's see those variables too."""
    context: dict[str, Any] = {
        "inputs": {**step.defaults, **inputs},
        "runner": {"name": runner_name},
        "github": {"workspace": str(workspace), "sha": "", "run_attempt": "1"},
        "env": {},
    }
    env = {name: render(text, context) for name, text in step.workflow_env.items()}
    context["env"] = dict(env)
    env.update({name: render(text, context) for name, text in step.step_env.items()})
    context["env"] = dict(env)
    return env, render(step.run, context)


def render(text: str, context: Mapping[str, Any]) -> str:
    """``text`` with each ``${{ expression }}`` replaced by its value as GitHub writes it."""
    return _EXPRESSION.sub(lambda m: _shown(evaluate(m.group(1), context)), text)


def _shown(result: Value) -> str:
    if isinstance(result, bool):
        return "true" if result else "false"
    if isinstance(result, float):
        return str(int(result)) if result.is_integer() else repr(result)
    return "" if result is None else result


def evaluate(expression: str, context: Mapping[str, Any]) -> Value:
    """One expression's value; what it cannot read (a function, an unknown property) is
    ``None``, which renders empty."""
    tokens = [m for m in _TOKEN.finditer(expression) if m.group(0).strip()]
    parser = _Parser(tokens, context)
    return parser.disjunction()


class _Parser:
    def __init__(self, tokens: list[re.Match[str]], context: Mapping[str, Any]) -> None:
        self.tokens = tokens
        self.at = 0
        self.context = context

    def _peek(self) -> str | None:
        return self.tokens[self.at].group(0).strip() if self.at < len(self.tokens) else None

    def _chain(
        self, operator: str, operand: Callable[[], Value], pick: Callable[[Value, Value], Value]
    ) -> Value:
        """``operand (operator operand)*``, left to right; every operand is read, as the
        tokens must be consumed, and ``pick`` keeps the value the operator yields."""
        left = operand()
        while self._peek() == operator:
            self.at += 1
            left = pick(left, operand())
        return left

    def disjunction(self) -> Value:
        return self._chain(
            "||", self.conjunction, lambda left, right: left if _truthy(left) else right
        )

    def conjunction(self) -> Value:
        return self._chain(
            "&&", self.comparison, lambda left, right: right if _truthy(left) else left
        )

    def comparison(self) -> Value:
        left = self.unary()
        while self._peek() in ("==", "!="):
            negate = self._peek() == "!="
            self.at += 1
            same = _loose(left) == _loose(self.unary())
            left = same != negate
        return left

    def unary(self) -> Value:
        if self._peek() == "!":
            self.at += 1
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Value:
        if self.at >= len(self.tokens):
            return None
        token = self.tokens[self.at]
        self.at += 1
        if token.group("str") is not None:
            return token.group("str")[1:-1].replace("''", "'")
        if token.group("num") is not None:
            return float(token.group("num"))
        if token.group("op") == "(":
            inner = self.disjunction()
            self.at += 1
            return inner
        name = token.group("name") or ""
        if self._peek() == "(":
            self._skip_call()
            return None
        return self._lookup(name)

    def _skip_call(self) -> None:
        depth = 0
        while self.at < len(self.tokens):
            op = self._peek()
            self.at += 1
            depth += {"(": 1, ")": -1}.get(op or "", 0)
            if depth == 0:
                return

    def _lookup(self, name: str) -> Value:
        if name in ("true", "false"):
            return name == "true"
        if name == "null":
            return None
        scope, _, field = name.partition(".")
        found = (self.context.get(scope) or {}).get(field)
        if found is None or isinstance(found, (str, bool)):
            return found
        if isinstance(found, (int, float)):
            return float(found)
        return str(found)


def _truthy(result: Value) -> bool:
    return result not in (None, "", False, 0.0)


def _loose(result: Value) -> Value:
    """GitHub compares a number and a string as numbers, and strings without case."""
    if isinstance(result, str):
        try:
            return float(result)
        except ValueError:
            return result.lower()
    return result
