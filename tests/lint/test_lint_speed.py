from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from pytest_infx.lint.builtin import all_rules, run_rules
from pytest_infx.lint.changelog import load_changelog
from pytest_infx.lint.context import build_context, default_base_ref


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "lint_speed.py"
    spec = importlib.util.spec_from_file_location("lint_speed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_changelog_is_inferencex_sized_and_valid(tmp_path: Path) -> None:
    bench = _bench()
    keys = bench.make_keys(208)
    size = bench.generate_changelog(tmp_path / "perf-changelog.yaml", 772, keys)
    assert 380_000 <= size <= 440_000
    entries = load_changelog((tmp_path / "perf-changelog.yaml").read_bytes())
    assert len(entries) == 772
    assert any(len(e.description) > 1 for e in entries)
    assert any(key.endswith("*") for e in entries for key in e.config_keys)


def test_generated_repo_passes_every_rule(tmp_path: Path) -> None:
    bench = _bench()
    keys = bench.make_keys(50)
    _, changed = bench.make_repo(tmp_path, 100, keys)
    ctx = build_context(
        tmp_path, base_ref=default_base_ref(tmp_path), recipe_keys=keys, changed_keys=[changed]
    )
    assert [f.render() for f in run_rules(ctx)] == []
    assert len(ctx.base_changelog or b"") < (tmp_path / "perf-changelog.yaml").stat().st_size


def test_generated_full_repo_passes_every_rule_and_runs_them_all(tmp_path: Path) -> None:
    bench = _bench()
    keys = bench.make_keys(40)
    changed = bench.make_full_repo(tmp_path, 60, keys, 2)
    ctx = build_context(tmp_path, base_ref=default_base_ref(tmp_path))
    assert [f.render() for f in run_rules(ctx)] == []
    skipped = {rule.id: rule.skip_reason(ctx) for rule in all_rules() if rule.skip_reason(ctx)}
    assert skipped == {}
    assert ctx.changed() == frozenset({changed})
    assert len(list((tmp_path / "golden").glob("*.yaml"))) >= 5
