"""``infx lint``: run every lint rule outside pytest and print the findings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_infx.lint.context import DEFAULT_BASE_REF, build_context, default_base_ref, ref_exists
from pytest_infx.lint.findings import all_rules
from pytest_infx.lint.scope import PullRequest, pull_request_from_env


def run(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    out: TextIO = sys.stdout
    base = args.base if args.base is not None else default_base_ref(root)
    if args.base is not None and not ref_exists(root, args.base):
        print(f"error: base ref {args.base!r} does not exist in {root}", file=sys.stderr)
        return 2
    pull = pull_request_from_env()
    if args.pr is not None:
        pull = PullRequest(number=args.pr)
    if args.main:
        pull = PullRequest(main=True)
    ctx = build_context(root, base_ref=base, audit=args.all, pull=pull)
    if base is None:
        print(
            f"warning: no base ({DEFAULT_BASE_REF} not found): judging the whole history;"
            " pass --base REF to lint a change",
            file=out,
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
        "lint",
        help="check the changelog, comment, recipe and golden registry rules (what"
        " `pytest -m lint` runs)",
    )
    parser.add_argument("--root", default=".", help="repository root (default: .)")
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
    parser.set_defaults(func=run)
