"""``infx golden list|show|lookup``: the golden curves from a shell, as launch scripts need them.

Beside the golden package, not in it: ``lookup --engine`` asks the engine adapters for their
synthetic setting, and the golden package is below the engines (recipes name golden curves).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_infx.engines.registry import ENGINES, installed
from pytest_infx.engines.spec import SyntheticSetting
from pytest_infx.files.contained import OutsideFolderError
from pytest_infx.golden.curve import Mode, mode_of
from pytest_infx.golden.io import GoldenFileError, dump_curve
from pytest_infx.golden.lookup import GoldenLookupError, golden_cell, golden_modes
from pytest_infx.golden.store import GoldenNotFoundError, GoldenStore
from pytest_infx.settings import DEFAULT_GOLDEN_DIR


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("golden", help="list, show and look up golden AL curves")
    parser.add_argument(
        "--root", type=Path, default=None, help="golden folder (default: golden/ here)"
    )
    commands = parser.add_subparsers(dest="golden_command", required=True)

    listing = commands.add_parser("list", help="curve names, one a line")
    listing.set_defaults(func=_list)

    show = commands.add_parser("show", help="print a curve in golden format")
    show.add_argument("curve", help="curve name, as `infx golden list` prints it")
    show.set_defaults(func=_show)

    lookup = commands.add_parser("lookup", help="golden AL of one cell (and an engine's setting)")
    lookup.add_argument("curve", help="curve name, as `infx golden list` prints it")
    lookup.add_argument("k", type=int, help="draft length")
    lookup.add_argument(
        "--thinking",
        choices=("on", "off"),
        default=None,
        help="thinking mode (default: both, one line each)",
    )
    lookup.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="also print the engine's synthetic-acceptance setting for this AL",
    )
    lookup.add_argument("--json", action="store_true", help="print one JSON object")
    lookup.set_defaults(func=_lookup)


def _store(args: argparse.Namespace) -> GoldenStore:
    root: Path | None = args.root
    return GoldenStore(root if root is not None else Path.cwd() / DEFAULT_GOLDEN_DIR)


def _list(args: argparse.Namespace) -> int:
    store = _store(args)
    names = store.names()
    if not names:
        print(f"infx golden: no curves in {store.root}", file=sys.stderr)
        return 1
    for name in names:
        print(name)
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        curve = _store(args).get(args.curve, source="infx golden show", field="CURVE")
    except (GoldenNotFoundError, GoldenFileError, OutsideFolderError) as exc:
        print(f"infx golden: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(dump_curve(curve))
    return 0


def _lookup(args: argparse.Namespace) -> int:
    """Both modes unless ``--thinking`` names one, as the help says: a launch script that forces
    the golden rate for either mode needs both, and a single-mode curve answers with its mode."""
    store = _store(args)
    try:
        modes = (
            golden_modes(store, args.curve)
            if args.thinking is None
            else (mode_of(args.thinking == "on"),)
        )
        cells = [(mode, *_cell(args, store, mode)) for mode in modes]
    except (GoldenNotFoundError, GoldenFileError, GoldenLookupError, ValueError) as exc:
        print(f"infx golden: {exc}", file=sys.stderr)
        return 1
    if args.json:
        for mode, al, setting in cells:
            print(json.dumps(_payload(args, mode, al, setting)))
        return 0
    for mode, al, setting in cells:
        _print_cell(f"{mode} " if len(cells) > 1 else "", al, setting)
    notes = {note: None for _, _, setting in cells if setting is not None for note in setting.notes}
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _cell(
    args: argparse.Namespace, store: GoldenStore, mode: Mode
) -> tuple[float, SyntheticSetting | None]:
    _, al = golden_cell(store, args.curve, args.k, mode == "thinking_on")
    if args.engine is None:
        return al, None
    return al, installed().synthetic_setting(args.engine, al, args.k)


def _payload(
    args: argparse.Namespace, mode: Mode, al: float, setting: SyntheticSetting | None
) -> dict[str, Any]:
    payload: dict[str, Any] = {"curve": args.curve, "k": args.k, "mode": mode}
    payload["al"] = al
    if setting is not None:
        payload["engine"] = setting.engine
        payload["spec_config"] = dict(setting.spec_config)
        payload["env"] = dict(setting.env)
        payload["argv"] = list(setting.argv)
        payload["notes"] = list(setting.notes)
    return payload


def _print_cell(prefix: str, al: float, setting: SyntheticSetting | None) -> None:
    print(f"{prefix}{al:.2f}")
    if setting is None:
        return
    if setting.spec_config:
        print(f"{prefix}speculative-config += {json.dumps(dict(setting.spec_config))}")
    for key, value in setting.env.items():
        print(f"{prefix}env {key}={value}")
    if setting.argv:
        print(f"{prefix}argv " + " ".join(setting.argv))
