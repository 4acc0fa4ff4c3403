"""``infx engine``: install, locate and inspect the engine environments.

Installing takes minutes, so people (and CI images) want to do it ahead of a test run; ``path``
lets shell scripts reach the engine's python without knowing the cache layout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from pytest_infx.envs import aiperf
from pytest_infx.envs.toolenv import InstallError, ToolEnvSpec, ensure, locate
from pytest_infx.files.cachedir import cache_root
from pytest_infx.usage import writable_folder

SPECS: dict[str, ToolEnvSpec] = {aiperf.SPEC.name: aiperf.SPEC}
"""The environments of the tools; the engines' own come with :func:`register`."""


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    engines: Mapping[str, ToolEnvSpec] | None = None,
) -> tuple[argparse._SubParsersAction[argparse.ArgumentParser], argparse.ArgumentParser]:
    """Adds ``infx engine`` for the ``engines``' environments and the tools', and returns its
    sub-command list and their common options, so the argv check (which needs the recipes and
    the adapters) can join them."""
    specs = {**(engines or {}), **SPECS}
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "engine", help=f"install and locate the engine environments ({', '.join(specs)})"
    )
    common = argparse.ArgumentParser(add_help=False)
    add_cache_dir(common)
    actions = parser.add_subparsers(dest="engine_command", required=True)
    install = actions.add_parser(
        "install", parents=[common], help="install an environment (minutes, once)"
    )
    install.add_argument("name", choices=sorted(specs), help="the environment to install")
    install.add_argument("--force", action="store_true", help="delete and reinstall")
    install.set_defaults(func=_install, specs=specs)
    path = actions.add_parser(
        "path", parents=[common], help="print an installed environment's folder"
    )
    path.add_argument("name", choices=sorted(specs), help="the environment to locate")
    path.set_defaults(func=_path, specs=specs)
    status = actions.add_parser(
        "status", parents=[common], help="show which environments are installed"
    )
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(func=_status, specs=specs)
    return actions, common


def add_cache_dir(parser: argparse.ArgumentParser) -> None:
    """The cache root option of every command that reads the cached environments."""
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="cache root (default: $INFX_CACHE_DIR, else $XDG_CACHE_HOME/pytest-infx, "
        "else ~/.cache/pytest-infx)",
    )


def _install(args: argparse.Namespace) -> int:
    spec = args.specs[args.name]
    what = "--cache-dir" if args.cache_dir is not None else "INFX_CACHE_DIR"
    writable_folder(what, cache_root(args.cache_dir))
    try:
        env = ensure(spec, cache_dir=args.cache_dir, force=args.force)
    except InstallError as exc:
        print(f"infx engine install {spec.name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"infx engine install {spec.name}: interrupted", file=sys.stderr)
        return 130
    print(env.env_dir)
    return 0


def _path(args: argparse.Namespace) -> int:
    env = locate(args.specs[args.name], cache_dir=args.cache_dir)
    if not env.is_complete():
        print(
            f"{args.name} is not installed (expected at {env.env_dir}); "
            f"run `infx engine install {args.name}`",
            file=sys.stderr,
        )
        return 1
    print(env.env_dir)
    return 0


def _status(args: argparse.Namespace) -> int:
    rows: list[dict[str, object]] = []
    for name, spec in sorted(args.specs.items()):
        env = locate(spec, cache_dir=args.cache_dir)
        state = env.state
        row: dict[str, object] = {
            "name": name,
            "version": spec.version,
            "state": state,
            "path": str(env.env_dir),
        }
        if state == "installed":
            record = env.record()
            row["installed_at"] = record.get("installed_at")
            row["seconds"] = record.get("seconds")
        rows.append(row)
    if args.json:
        print(json.dumps({"cache": str(cache_root(args.cache_dir)), "envs": rows}, indent=2))
        return 0
    print(f"cache: {cache_root(args.cache_dir)}")
    for row in rows:
        extra = ""
        if "seconds" in row:
            extra = f"  (installed {row['installed_at']} in {row['seconds']}s)"
        print(f"{row['name']:<10} {row['version']:<8} {row['state']:<10} {row['path']}{extra}")
    return 0
