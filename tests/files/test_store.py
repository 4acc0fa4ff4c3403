from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lint.helpers import DFLASH_RECIPE, line_of, repo_files, write_files

from pytest_infx.files import store as store_mod
from pytest_infx.files.store import PickleCache, digest
from pytest_infx.lint.builtin import all_rules

SCRIPT = "#!/bin/bash\nset -euo pipefail\npython3 collect.py\n"

pytest_plugins = ["pytester"]

PROBE = """
import json, sys

def pytest_sessionfinish(session):
    with open("probe.jsonl", "a") as out:
        out.write(json.dumps({"schema": "pytest_infx.recipes.schema" in sys.modules}) + "\\n")
"""


def test_a_value_is_computed_once_per_key(tmp_path: Path) -> None:
    calls: list[str] = []
    store = PickleCache(tmp_path)

    def compute(value: str) -> str:
        calls.append(value)
        return value

    assert store.get("v", "k1", lambda: compute("a")) == "a"
    assert PickleCache(tmp_path).get("v", "k1", lambda: compute("b")) == "a"
    assert PickleCache(tmp_path).get("v", "k2", lambda: compute("c")) == "c"
    assert calls == ["a", "c"]


def test_another_pytest_infx_or_a_broken_file_recomputes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PickleCache(tmp_path)
    store.get("v", "k", lambda: 1)
    monkeypatch.setattr(store_mod, "package_signature", lambda: "another version")
    assert store.get("v", "k", lambda: 2) == 2
    (tmp_path / "v.pickle").write_bytes(b"not a pickle")
    assert store.get("v", "k", lambda: 3) == 3


def test_digest_tells_a_missing_file_from_an_empty_one() -> None:
    assert digest(None) != digest(b"")
    assert digest("ab", "c") != digest("a", "bc")


def test_per_file_rescans_only_changed_files(tmp_path: Path) -> None:
    a, b, gone = tmp_path / "a.sh", tmp_path / "b.sh", tmp_path / "gone.sh"
    a.write_text("one\n")
    b.write_text("two\n")
    scanned: list[str] = []

    def scan(path: Path) -> str:
        scanned.append(path.name)
        return path.read_text()

    store = PickleCache(tmp_path / "store")
    assert store.per_file("f", [a, b, gone], scan) == {a: "one\n", b: "two\n"}
    assert scanned == ["a.sh", "b.sh"]
    b.write_text("two, edited\n")
    stat = b.stat()
    os.utime(b, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert store.per_file("f", [a, b], scan) == {a: "one\n", b: "two, edited\n"}
    assert scanned == ["a.sh", "b.sh", "b.sh"]


def _touch(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def test_a_warm_lint_run_reports_the_same_and_sees_every_edit(
    pytester: pytest.Pytester,
) -> None:
    files = dict(repo_files())
    files["benchmarks/collect.sh"] = SCRIPT
    write_files(pytester.path, files)
    pytester.makeini("[pytest]\ninfx = true\n")
    pytester.makeconftest(PROBE)
    dflash = pytester.path / "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"
    args = ("-m", "lint", "-k", "recipes-thinking or comments-header")

    cold = pytester.runpytest_subprocess(*args)
    warm = pytester.runpytest_subprocess(*args)
    cold.assert_outcomes(passed=2, deselected=len(all_rules()) - 2)
    warm.assert_outcomes(passed=2, deselected=len(all_rules()) - 2)

    bad = DFLASH_RECIPE.replace(
        "thinking_on: {enable_thinking: true}", "thinking_on: {thinking: true}"
    )
    _touch(dflash, bad)
    _touch(pytester.path / "benchmarks/collect.sh", SCRIPT.replace("\n", "\n# Collects AL.\n", 1))
    edited = pytester.runpytest_subprocess(*args)
    edited.assert_outcomes(failed=2, deselected=len(all_rules()) - 2)
    edited.stdout.fnmatch_lines_random(
        [
            f"recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml:{line_of(bad, 'thinking_on:')}: *",
            "benchmarks/collect.sh:2: *",
        ]
    )
    again = pytester.runpytest_subprocess(*args)
    again.assert_outcomes(failed=2, deselected=len(all_rules()) - 2)
    probes = (pytester.path / "probe.jsonl").read_text().splitlines()
    assert [json.loads(line)["schema"] for line in probes] == [True, False, True, False]


def test_per_file_rescans_an_edit_that_keeps_size_and_modification_time(tmp_path: Path) -> None:
    script = tmp_path / "a.sh"
    script.write_text("one\n")
    store = PickleCache(tmp_path / "store")
    assert store.per_file("f", [script], lambda p: p.read_text()) == {script: "one\n"}
    stat = script.stat()
    script.write_text("two\n")
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert store.per_file("f", [script], lambda p: p.read_text()) == {script: "two\n"}


def test_a_warm_lint_run_fails_where_a_cold_one_does_after_an_edit_keeping_size_and_time(
    pytester: pytest.Pytester,
) -> None:
    write_files(pytester.path, dict(repo_files()))
    pytester.makeini("[pytest]\ninfx = true\n")
    dflash = pytester.path / "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"
    args = ("-m", "lint", "-k", "recipes-thinking")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1, deselected=len(all_rules()) - 1)
    bad = DFLASH_RECIPE.replace("{enable_thinking: true}", "{enable_thinkin: true} ")
    stat = dflash.stat()
    assert len(bad) == len(DFLASH_RECIPE)
    dflash.write_text(bad, encoding="utf-8")
    os.utime(dflash, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    warm = pytester.runpytest_subprocess(*args)
    warm.assert_outcomes(failed=1, deselected=len(all_rules()) - 1)
    cold = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    cold.assert_outcomes(failed=1, deselected=len(all_rules()) - 1)


def test_the_code_signature_covers_every_module_of_the_package() -> None:
    """A recipe model pickled by an older schema must not outlive the schema's module, which
    lies outside ``files/``."""
    covered = {
        Path(p).relative_to(store_mod._PACKAGE).as_posix()
        for p in store_mod.files_under(store_mod._PACKAGE)
    }
    assert {"recipes/schema.py", "files/store.py", "plugin/__init__.py"} <= covered
