"""Tests mirror the package: ``pytest_infx/<package>/<module>.py`` is tested in
``tests/<package>/test_<module>.py`` and a top-level ``pytest_infx/<module>.py`` in
``tests/core/test_<module>.py`` (tests/README.md). A module without its test module is listed in
``UNMIRRORED`` with the reason, so the list can only shrink on purpose and never grows unseen."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_infx"
TESTS = ROOT / "tests"
E2E = "proven by inner pytest runs in tests/e2e/"
KINDS = "the kinds are tested together through their registry: tests/plugin/run/test_kinds.py"
CHANGELOG = "the changelog package is tested as one: tests/lint/test_changelog.py"

MIGRATIONS = (
    "run on every open of a store: tests/history/test_store.py migrates, upgrades and checks them"
)
UNMIRRORED: dict[str, str] = {
    "history/migrations/env.py": MIGRATIONS,
    "history/migrations/versions/0001_initial.py": MIGRATIONS,
    "history/migrations/versions/0002_lookup_indexes.py": MIGRATIONS,
    "history/migrations/versions/0003_verdict_reason_and_provenance.py": MIGRATIONS,
    "history/schema.py": "the tables the queries name; tests/history/test_store.py checks that "
    "the migrated database has exactly them",
    "cli/__init__.py": "the dispatcher; each command is tested with its module (tests/cli/, "
    "tests/lint/test_cli.py, tests/lint/test_masters.py, tests/report/test_html.py)",
    "gcpause.py": f"only observable from a pytest run: {E2E}test_host_suite.py",
    "engines/base.py": "the adapter protocol; each adapter is tested in tests/engines/ and outside "
    f"adapters are {E2E}test_engine_providers.py",
    "engines/extensions.py": f"entry points and conftest hooks: {E2E}test_engine_providers.py",
    "engines/spec.py": "plain values read by tests/engines/test_vllm.py and test_sglang.py",
    "launch/procfs.py": "the /proc reads every launch test asserts with (tests/launch/conftest.py)",
    "files/folderlock.py": "a re-export of files/locks.folder_lock for results/cells.py",
    "lint/changelog/entries.py": CHANGELOG,
    "lint/changelog/history.py": CHANGELOG,
    "lint/changelog/layout.py": CHANGELOG,
    "lint/changelog/rules.py": CHANGELOG,
    "lint/curves.py": "golden files read once per lint context: tests/lint/test_golden.py",
    "lint/scope.py": "pull-request scope: tests/lint/test_replay.py and test_masters.py",
    "plugin/__init__.py": "the bootstrap hooks that register the session: "
    f"tests/plugin/test_hooks.py and {E2E}",
    "plugin/collect/session.py": f"collection hooks: {E2E} and tests/plugin/collect/test_files.py",
    "plugin/configure.py": f"configure hooks: {E2E}test_bad_input.py and test_host_suite.py",
    "plugin/declare.py": f"option declarations: tests/plugin/test_options.py and {E2E}"
    "test_host_suite.py",
    "plugin/run/fixtures.py": f"recipe item fixtures: {E2E}test_sweep.py and test_sharing.py",
    "plugin/gc.py": f"garbage collector hooks: {E2E}test_host_suite.py",
    "plugin/hookspecs.py": f"hook specifications: {E2E}test_engine_providers.py",
    "plugin/collect/items.py": f"recipe item functions: {E2E}test_sweep.py",
    "plugin/run/kinds/speedbench.py": KINDS,
    "plugin/run/kinds/base.py": KINDS,
    "plugin/run/kinds/measured.py": KINDS,
    "results/measure.py": "protocols only: the generic adapter measures fixed-seq-len and the toy"
    " kind through them (tests/plugin/run/test_kinds.py, tests/kinds/test_toykind.py)",
    "plugin/markers.py": f"marker declarations: {E2E}test_host_suite.py",
    "plugin/output/reporter.py": f"the sweep report's pytest side: {E2E}test_report_files.py",
    "plugin/run/session.py": f"the session context: {E2E}test_sharing.py and test_resume.py",
    "plugin/slurm/controller.py": "needs a Slurm cluster: tests/e2e/slurm/",
    "plugin/slurm/replace.py": "replacement jobs need a Slurm cluster: tests/e2e/slurm/; the xdist "
    "calls they make are pinned in tests/compat/test_xdist.py",
    "plugin/stash.py": "stash keys only",
    "plugin/output/summary.py": "the end-of-run summary: tests/report/test_html.py",
    "plugin/output/terminal.py": f"terminal hooks: {E2E}test_progress.py and test_sweep.py",
    "recipes/changes.py": "changed keys by fingerprint: tests/lint/test_changed.py",
    "recipes/schema.py": "the schema: every bad-input case of tests/recipes/test_loader.py",
    "report/cli.py": "`infx report`: tests/report/test_html.py",
    "report/plots.py": "the pictures: tests/report/test_html.py",
    "results/reuse.py": "stored results for resume: tests/plugin/run/test_resume.py",
}


def _has_code(init: Path) -> bool:
    tree = ast.parse(init.read_text())
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(isinstance(node, defs) for node in tree.body)


def mirror_of(module: Path) -> Path:
    """The test module of a source module; a package's ``__init__`` is its package's module."""
    parts = module.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    folder = parts[:-1] or ("core",)
    return TESTS.joinpath(*folder, f"test_{parts[-1]}.py")


def modules() -> list[Path]:
    """Every source module; an ``__init__`` that only re-exports or documents is left out."""
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "__init__.py" or _has_code(path)
    ]


def unmirrored() -> list[str]:
    return [
        path.relative_to(PACKAGE).as_posix() for path in modules() if not mirror_of(path).is_file()
    ]


def test_the_mirror_rule() -> None:
    assert mirror_of(PACKAGE / "recipes" / "loader.py") == TESTS / "recipes" / "test_loader.py"
    assert mirror_of(PACKAGE / "plan.py") == TESTS / "core" / "test_plan.py"
    assert mirror_of(PACKAGE / "lint" / "changelog" / "__init__.py") == (
        TESTS / "lint" / "test_changelog.py"
    )
    assert mirror_of(PACKAGE / "lint" / "changelog" / "rules.py") == (
        TESTS / "lint" / "changelog" / "test_rules.py"
    )


def test_no_module_without_a_test_module_beyond_the_allow_list() -> None:
    new = [name for name in unmirrored() if name not in UNMIRRORED]
    assert not new, (
        f"modules without a mirrored test module: {new}; add "
        + ", ".join(mirror_of(PACKAGE / name).relative_to(ROOT).as_posix() for name in new)
        + " (or, with a reason, an entry in UNMIRRORED of tests/test_layout.py)"
    )


def test_the_allow_list_names_only_modules_still_unmirrored() -> None:
    missing = set(unmirrored())
    stale = sorted(name for name in UNMIRRORED if name not in missing)
    assert not stale, (
        f"UNMIRRORED in tests/test_layout.py lists {stale}, which now have their test module or "
        "no longer exist: delete those entries"
    )
    assert all(reason.strip() for reason in UNMIRRORED.values())
