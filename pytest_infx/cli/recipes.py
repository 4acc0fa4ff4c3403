"""``infx changed`` and ``infx recipes``: the recipe tree from the shell.

They load the tree with the engines' rules (their names, their owned flags), as ``pytest`` and
the lint do, so a recipe naming no installed engine fails here the same way and at the same line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_infx.engines.registry import installed
from pytest_infx.files.git import GitError
from pytest_infx.recipes.changes import changed_since
from pytest_infx.recipes.errors import RecipeErrors
from pytest_infx.recipes.loader import checked_tree, load_tree
from pytest_infx.recipes.points import expand_all
from pytest_infx.settings import DEFAULT_RECIPES_DIR
from pytest_infx.usage import existing_folder


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    changed = subparsers.add_parser(
        "changed", help="recipe keys whose points changed since a git ref (by fingerprint)"
    )
    changed.add_argument("--base", default="origin/main", help="git ref (default origin/main)")
    changed.add_argument("--recipes", default=DEFAULT_RECIPES_DIR, type=Path, help="recipe folder")
    changed.set_defaults(func=_changed)
    listing = subparsers.add_parser("recipes", help="list recipe points and fingerprints")
    listing.add_argument("--recipes", default=DEFAULT_RECIPES_DIR, type=Path, help="recipe folder")
    listing.set_defaults(func=_list)


def _changed(args: argparse.Namespace) -> int:
    existing_folder("--recipes", args.recipes, "give the recipe folder")
    try:
        now = checked_tree(args.recipes, installed().engine_rules())
        changes = changed_since(Path.cwd(), args.recipes, args.base, now)
    except GitError as exc:
        print(f"infx changed: {exc}")
        return 2
    except RecipeErrors as exc:
        print(exc)
        return 2
    for change in changes:
        print(change.render())
    print(f"{len(changes)} of {len(now.sources)} config keys changed since {args.base}")
    return 0


def _list(args: argparse.Namespace) -> int:
    existing_folder("--recipes", args.recipes, "give the recipe folder")
    try:
        points = expand_all(load_tree(args.recipes, installed().engine_rules()))
    except RecipeErrors as exc:
        print(exc)
        return 2
    for point in points:
        print(f"{point.id}\t{point.runner}\t{point.fingerprint}")
    return 0
