"""Engine knowledge lives in ``pytest_infx/engines/``: outside it, a built-in engine's name
appears only in prose (docstrings and comments) explaining a fact, never in code, so adding an
engine is one module there and its tests."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytest_infx

PACKAGE = Path(pytest_infx.__file__).parent
OWNER = PACKAGE / "engines"
NAMED = re.compile(r"vllm|sglang|trtllm|tensorrt|\batom\b", re.IGNORECASE)


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        for index, statement in enumerate(body):
            is_doc = index == 0 or isinstance(body[index - 1], ast.Assign | ast.AnnAssign)
            if (
                is_doc
                and isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                end = statement.end_lineno or statement.lineno
                lines.update(range(statement.lineno, end + 1))
    return lines


def engine_names_in_code(source: str) -> Iterator[tuple[int, str]]:
    """(line, token) of each mention of a built-in engine that is not prose: a name, or a
    string that is not a docstring (an attribute docstring after an assignment is prose)."""
    prose = _docstring_lines(ast.parse(source))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT or not NAMED.search(token.string):
            continue
        if token.type == tokenize.STRING and token.start[0] in prose:
            continue
        yield token.start[0], token.string


def test_the_finder_tells_code_from_prose() -> None:
    source = (
        '"""vLLM runs here."""\n'
        "# SGLang answers 503\n"
        'ENGINE = "vllm"\n'
        '"""Attribute prose about SGLang."""\n'
        "def f(x):\n"
        '    """Docstring naming vllm."""\n'
        "    return x.sglang_flag\n"
    )
    assert list(engine_names_in_code(source)) == [(3, '"vllm"'), (7, "sglang_flag")]


def _outside() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not p.is_relative_to(OWNER))


@pytest.mark.parametrize("path", _outside(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_outside_engines_names_an_engine_in_code(path: Path) -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {text}"
        for line, text in engine_names_in_code(path.read_text())
    ]
    assert not found, (
        "engine knowledge outside pytest_infx/engines/ (ask the adapter instead):\n"
        + "\n".join(found)
    )


def test_the_package_is_searched() -> None:
    paths = {p.relative_to(PACKAGE).as_posix() for p in _outside()}
    assert {
        "prepare/plan.py",
        "prepare/serving.py",
        "recipes/schema.py",
        "cli/compare.py",
    } <= paths
    assert not any(p.startswith("engines/") for p in paths)
