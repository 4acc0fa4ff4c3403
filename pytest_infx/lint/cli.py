"""``infx lint``: run every lint rule outside pytest and print the findings."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_infx.lint.context import build_context, default_base_ref, ref_exists
from pytest_infx.lint.findings import all_rules


def _recipe_keys(root: Path, out: TextIO) -> frozenset[str] | None:
    """The recipe keys from the recipe loader, or ``None`` when it is absent or the recipes do
    not load (then the key rules are skipped, and ``pytest -m lint`` reports the recipe errors)."""
    if not (root / "recipes").is_dir():
        return None
    try:
        loader: Any = importlib.import_module("pytest_infx.recipes.loader")
        tree = loader.read_tree(root / "recipes")
    except (ImportError, AttributeError):
        return None
    if tree.errors:
        print(f"note: {len(tree.errors)} recipe file(s) do not load; key rules skipped", file=out)
        return None
    return frozenset(source.recipe.key for source in tree.sources)


def _changed_keys(root: Path, base: str | None, out: TextIO) -> frozenset[str] | None:
    """Added or modified recipe keys since ``base`` (removed ones cannot be listed in an entry),
    or ``None`` when they cannot be computed (then the coverage rule is skipped)."""
    if base is None or not (root / "recipes").is_dir():
        return None
    try:
        changes: Any = importlib.import_module("pytest_infx.recipes.changes")
        found = changes.changed_since(root, root / "recipes", base)
    except (ImportError, AttributeError):
        return None
    except Exception as exc:
        print(f"note: changed recipe keys unknown ({exc}); coverage skipped", file=out)
        return None
    return frozenset(change.key for change in found if change.status != "removed")


def run(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    out: TextIO = sys.stdout
    base = args.base if args.base is not None else default_base_ref(root)
    if args.base is not None and not ref_exists(root, args.base):
        print(f"error: base ref {args.base!r} does not exist in {root}", file=sys.stderr)
        return 2
    ctx = build_context(
        root,
        base_ref=base,
        recipe_keys=_recipe_keys(root, out),
        changed_keys=_changed_keys(root, base, out),
    )
    failed = 0
    for selected in all_rules():
        reason = selected.skip_reason(ctx)
        if reason is not None:
            print(f"skip {selected.id}: {reason}", file=out)
            continue
        findings = selected.check(ctx)
        if findings:
            failed += len(findings)
            print(f"FAIL {selected.id}: {selected.description}", file=out)
            for finding in findings:
                print(f"  {finding.render()}".replace("\n", "\n  "), file=out)
        else:
            print(f"ok   {selected.id}", file=out)
    if failed:
        print(f"{failed} finding(s)", file=out)
        return 1
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lint", help="check the changelog and comment rules (what `pytest -m lint` runs)"
    )
    parser.add_argument("--root", default=".", help="repository root (default: .)")
    parser.add_argument(
        "--base",
        default=None,
        help="git ref to compare the changelog with (default: origin/main when it exists)",
    )
    parser.set_defaults(func=run)
