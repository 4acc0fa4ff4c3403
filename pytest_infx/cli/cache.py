"""``infx cache`` and ``infx cache prune``: what the tool environments in the cache hold.

Every engine release a recipe pins brings a parser environment of a few hundred MB to a few GB;
when a recipe moves to a newer release, the old environment stays. The cache knows only folder
names; which of them are still used is a question about the recipes, so the command sits here,
above the recipes and the engine adapters.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_infx.envs.cli import add_cache_dir
from pytest_infx.settings import DEFAULT_RECIPES_DIR

ENVS = "envs"


@dataclass(frozen=True)
class CachedEnv:
    path: Path
    size: int
    state: str
    """installed, incomplete (an install that did not finish) or installing."""
    used: bool
    """Whether a pinned version (the embedded engine, aiperf, a recipe's engine parser) uses it."""

    @property
    def prunable(self) -> bool:
        return self.state != "installing" and (not self.used or self.state == "incomplete")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="list the cached tool environments with their sizes; prune those no pin uses",
    )
    add_cache_dir(parser)
    parser.add_argument(
        "--recipes",
        type=Path,
        default=Path(DEFAULT_RECIPES_DIR),
        help="the recipe folder whose pinned engine versions are kept (default: recipes/)",
    )
    actions = parser.add_subparsers(
        dest="cache_command", metavar="{list,prune}", help="list (the default) or prune"
    )
    actions.add_parser("list", help="the environments, their sizes and whether a pin uses them")
    actions.add_parser(
        "prune",
        help="remove the environments no pinned version uses and the unfinished installs",
    )
    parser.set_defaults(func=_run)


def used_folders(recipes: Path, cache_dir: Path | None) -> set[str]:
    """The environment folders the pinned versions use: the embedded engine's, aiperf's and the
    parser environment (with its fallback) of every recipe's engine release."""
    from pytest_infx.engines import embedded
    from pytest_infx.engines.registry import installed
    from pytest_infx.envs import aiperf
    from pytest_infx.envs.toolenv import locate
    from pytest_infx.recipes.loader import load_tree

    specs = [embedded.SPEC, aiperf.SPEC]
    engines = installed()
    for source in load_tree(recipes, engines.engine_rules()) if recipes.is_dir() else ():
        parser = engines.parser_env(source.recipe)
        while parser is not None:
            specs.append(parser.spec)
            parser = parser.fallback
    return {locate(spec, cache_dir=cache_dir).env_dir.name for spec in specs}


def cached_envs(cache_dir: Path | None, used: set[str]) -> list[CachedEnv]:
    from pytest_infx.envs.toolenv import env_state
    from pytest_infx.files.cachedir import cache_root

    folder = cache_root(cache_dir) / ENVS
    found = []
    for path in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else ():
        found.append(CachedEnv(path, _size(path), env_state(path), path.name in used))
    return found


def _size(path: Path) -> int:
    total = 0
    for entry in path.rglob("*"):
        try:
            if entry.is_file() and not entry.is_symlink():
                total += entry.stat().st_size
        except OSError:
            continue
    return total


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _run(args: argparse.Namespace) -> int:
    from pytest_infx.files.cachedir import cache_root
    from pytest_infx.recipes.errors import RecipeErrors
    from pytest_infx.usage import existing_folder

    root = cache_root(args.cache_dir)
    if os.path.lexists(root):
        what = "--cache-dir" if args.cache_dir is not None else "INFX_CACHE_DIR"
        existing_folder(what, root, "give the cache folder")

    try:
        used = used_folders(args.recipes, args.cache_dir)
    except RecipeErrors as exc:
        print(exc, file=sys.stderr)
        return 2
    envs = cached_envs(args.cache_dir, used)
    if args.cache_command == "prune":
        freed = 0
        for env in envs:
            if env.prunable:
                shutil.rmtree(env.path, ignore_errors=True)
                (env.path.parent / f"{env.path.name}.lock").unlink(missing_ok=True)
                freed += env.size
                print(f"removed {env.path.name} ({_human(env.size)}, {_why(env)})")
        print(f"freed {_human(freed)}")
        return 0
    for env in envs:
        mark = "pruned by `infx cache prune`" if env.prunable else "kept"
        print(f"{env.path.name:<48} {_human(env.size):>9}  {env.state:<10}  {_why(env)}; {mark}")
    total = sum(env.size for env in envs)
    print(f"{len(envs)} environments, {_human(total)}")
    return 0


def _why(env: CachedEnv) -> str:
    if env.state == "incomplete":
        return "an install that did not finish"
    return "used by a pinned version" if env.used else "no pinned version uses it"
