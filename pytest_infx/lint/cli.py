"""``infx lint``: run every lint rule outside pytest and print the findings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from pytest_infx.files.git import ref_exists
from pytest_infx.files.git import toplevel as git_toplevel
from pytest_infx.lint.context import CHANGELOG_NAME, GOLDEN_DIR, RECIPE_DIRS, repository_root
from pytest_infx.lint.findings import selectors
from pytest_infx.lint.masters import master_changes, master_keys
from pytest_infx.lint.session import CLI, LintRequest, LintSetupError, open_session
from pytest_infx.settings import DEFAULT_CHANGELOG_ONLY_ENTRIES


def run(args: argparse.Namespace) -> int:
    root = Path(args.root or ".").resolve()
    if args.root is not None:
        root = repository_root("--root", root)
    elif not (root / CHANGELOG_NAME).exists():
        root = git_toplevel(root) or root
    out: TextIO = sys.stdout
    request = LintRequest(
        root,
        args.environment,
        CLI,
        base=args.base,
        audit=args.all,
        pr=args.pr,
        main=args.main,
        select=selectors(args.select),
        ignore=selectors(args.ignore),
        changelog_only_entries=args.changelog_only_entries,
        recipes=args.recipes,
        golden=args.golden,
    )
    try:
        session = open_session(request)
    except LintSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rules = session.rules
    ctx = session.context()
    if ctx.base_missing is not None:
        print(
            f"warning: no base ({ctx.base_missing} not found): judging the whole history;"
            " pass --base REF to lint a change",
            file=out,
        )
    failed = 0
    skipped = 0
    for selected in rules:
        reason = selected.skip(ctx)
        if reason is not None:
            skipped += 1
            print(f"skip {selected.id}: {reason}", file=out)
            continue
        findings = selected.findings(ctx)
        if findings and selected.severity == "warning":
            print(f"warn {selected.id}: {selected.description}", file=out)
            for finding in findings:
                print(f"  {finding.render()}".replace("\n", "\n  "), file=out)
        elif findings:
            failed += len(findings)
            print(f"FAIL {selected.id}: {selected.description}", file=out)
            for finding in findings:
                print(f"  {finding.render()}".replace("\n", "\n  "), file=out)
        else:
            print(f"ok   {selected.id}", file=out)
    if failed:
        print(f"{failed} finding(s)", file=out)
        return 1
    if skipped == len(rules):
        print(f"error: nothing to judge in {root}: every lint rule was skipped", file=out)
        return 1
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="check the changelog, comment, recipe and golden registry rules and those of"
        " installed packages (what `pytest -m lint` runs)",
    )
    parser.add_argument(
        "--root",
        default=None,
        help="repository root (default: . when it holds perf-changelog.yaml, else the Git top"
        " level)",
    )
    parser.add_argument(
        "--base",
        default=None,
        help="git ref to compare the changelog with (default: origin/main when it exists)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="audit the whole history, not only what changed since the base",
    )
    parser.add_argument(
        "--pr", type=int, default=None, help="number of the pull request (checks new pr-links)"
    )
    parser.add_argument(
        "--main", action="store_true", help="lint as on the main branch (placeholders fail)"
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        help="rule ids or families to run (comma-separated, repeatable; default: all)",
    )
    parser.add_argument(
        "--changelog-only-entries",
        default=DEFAULT_CHANGELOG_ONLY_ENTRIES,
        help="new entries that change no config key: forbid (default), repeat or match:REGEX"
        " (as ini infx_changelog_only_entries)",
    )
    parser.add_argument(
        "--recipes",
        default=RECIPE_DIRS[0],
        help="the recipe folder, relative to the root (default: %(default)s; as ini infx_recipes)",
    )
    parser.add_argument(
        "--golden",
        default=GOLDEN_DIR,
        help="the golden curve folder, relative to the root (default: %(default)s; as ini"
        " infx_golden)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        help="rule ids or families not to run (comma-separated, repeatable)",
    )
    parser.set_defaults(func=run)
    _master_layout_for_changed(subparsers)


def _master_layout_for_changed(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """``infx changed --recipes configs`` on a repository that keeps InferenceX's master
    configs: the config keys are the top-level keys of ``*-master.yaml``, not recipe files,
    so the keys whose block changed are listed instead of every file failing to load as a
    recipe."""
    parser = getattr(subparsers, "choices", {}).get("changed")
    if parser is None:
        return
    recipes_changed = parser.get_default("func")

    def changed(args: argparse.Namespace) -> int:
        folder = Path(args.recipes)
        if not any(folder.glob("*-master.yaml")):
            status: int = recipes_changed(args)
            return status
        return _print_master_changes(Path.cwd(), folder, args.base)

    parser.set_defaults(func=changed)


def _print_master_changes(root: Path, folder: Path, base: str) -> int:
    pattern = f"{folder.as_posix().rstrip('/')}/*-master.yaml"
    if not ref_exists(root, base):
        print(f"infx changed: git ref {base!r} does not exist in {root}; fetch it or name another")
        return 2
    changes = master_changes(root, pattern, base)
    keys = master_keys(root, pattern) or {}
    for key, how in (changes or {}).items():
        where = keys[key]
        print(f"{key}: {how} ({where.path.relative_to(root)}:{where.line})")
    print(f"{len(changes or {})} of {len(keys)} config keys changed since {base}")
    return 0
