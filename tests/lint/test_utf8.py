"""A recipe, golden file or script that is not UTF-8: each rule that reads it gives one finding
naming the file, line and column; none raises, and none reports a consequence of the bad byte."""

from __future__ import annotations

from pathlib import Path

from pytest_infx.lint.builtin import all_rules
from pytest_infx.lint.context import build_context

from .helpers import repo_files, write_files

DFLASH = "recipes/mimov2.6flash-fp4-b300-vllm-dflash.yaml"


def test_bytes_that_are_not_utf8_are_one_finding_per_rule(tmp_path: Path) -> None:
    write_files(tmp_path, dict(repo_files()))
    recipe = tmp_path / DFLASH
    recipe.write_bytes(
        recipe.read_bytes().replace(b"reasoning-parser: mimo", b"reasoning: mim\xe9")
    )
    curve = tmp_path / "golden/dsv4_mtp.yaml"
    curve.write_bytes(curve.read_bytes().replace(b"# speculative", b"# sp\xe9culative"))
    (tmp_path / "collect.sh").write_bytes(b"#!/usr/bin/env bash\necho caf\xe9\n")
    ctx = build_context(tmp_path, comment_files=[tmp_path / "collect.sh", recipe])
    found = {
        rule.id: [f.render().splitlines()[0] for f in rule.check(ctx)]
        for rule in all_rules()
        if rule.skip_reason(ctx) is None
    }
    failing = {rule: lines for rule, lines in found.items() if lines}
    script = "collect.sh:2: not valid UTF-8 at line 2, column 9 (byte 0xe9)"
    yaml_line = f"{DFLASH}:15: not valid UTF-8 at line 15, column 19 (byte 0xe9)"
    for rule in ("comments-header", "comments-broad", "comments-describe"):
        assert [line.split(";")[0] for line in failing.pop(rule)] == [script, yaml_line]
    (load,) = failing.pop("recipes-load")
    assert load.startswith(f"{DFLASH}:15:") and "not valid UTF-8" in load
    (golden,) = failing.pop("golden-format")
    assert golden.startswith("golden/dsv4_mtp.yaml:2:") and "not valid UTF-8" in golden
    assert "column 5" in golden
    assert failing == {}
