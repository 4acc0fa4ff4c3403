"""Dependencies sit at the top of a module: a reader sees what a module needs where it starts,
and the import graph (``test_imports``) sees the same. An import inside a function is kept
only at the entry points (``plugin/``, ``cli/``), for an optional extra a plain install lacks,
or where it is listed below with why, so the list can only shrink on purpose."""

from __future__ import annotations

import ast
from pathlib import Path

from core.test_imports import PACKAGE

ENTRY_POINTS = ("plugin/", "cli/")
EXTRAS = frozenset(
    {
        "alembic",
        "huggingface_hub",
        "jinja2",
        "matplotlib",
        "numpy",
        "psycopg",
        "sqlalchemy",
        "syrupy",
        "tokenizers",
        "xdist",
    }
)
"""The top-level modules of pyproject's optional dependencies."""
WARM = "a warm collection or lint run reaches this module and must not load what it defers"
DEFERRED: dict[str, str] = {
    "engines/fidelity.py": "the installed engines' registry is read only for a recorded point",
    "engines/registry.py": "the embedded engine's rules load its adapter only when asked",
    "engines/sglang.py": "the parser's tool environment is built only by the argument check",
    "engines/vllm.py": "the embedded engine and its parser environment only when used",
    "lint/context.py": WARM,
    "lint/golden.py": WARM,
    "lint/recipes.py": WARM + " (the recipe schema and pydantic load only for a changed recipe)",
    "prepare/catalog.py": "the point expansion loads the recipe schema only for a catalog",
    "prepare/plan.py": "the embedded engine only for a plan that names it",
    "prepare/precision.py": "the embedded model and staging only for a local checkpoint",
    "prepare/preflight.py": WARM + " (golden, engines and recipe rules only for what is checked)",
    "recipes/cache.py": "a warm collection reads the cached tree without the recipe loader",
    "recipes/schema.py": "hardware names and tolerances only for a value that fails",
    "report/cli.py": "the report's writer only when the command runs",
    "report/html.py": "the history section only for a page that shows one",
}


def _deferred(path: Path) -> set[str]:
    """The modules ``path`` imports inside a function, optional extras left out."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                found.update(alias.name for alias in inner.names)
            elif isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
                found.add(inner.module)
    return {name for name in found if name.split(".")[0] not in EXTRAS}


def _deferring() -> dict[str, set[str]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ENTRY_POINTS):
            continue
        deferred = _deferred(path)
        if deferred:
            found[relative] = deferred
    return found


def test_imports_inside_functions_only_where_allowed() -> None:
    deferring = _deferring()
    unlisted = {
        module: sorted(names) for module, names in deferring.items() if module not in DEFERRED
    }
    assert unlisted == {}, "move these imports to the top of the module, or list why they wait"
    assert sorted(set(DEFERRED) - set(deferring)) == [], "listed modules that no longer defer"


def test_the_reader_sees_nested_and_dotted_imports_and_skips_extras(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import os\n"
        "def f():\n"
        "    def g():\n"
        "        from pytest_infx.usage import UsageError\n"
        "    import numpy\n"
        "    import jinja2.ext\n"
        "    import email.utils\n"
    )
    assert _deferred(module) == {"pytest_infx.usage", "email.utils"}
