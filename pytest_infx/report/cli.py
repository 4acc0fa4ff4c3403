"""``infx report RESULTS``: the sweep report again, from a results folder copied off a runner or
downloaded as a CI artifact (the pictures need the ``plots`` extra here, not on the runner)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_infx.settings import DEFAULT_GOLDEN_DIR, DEFAULT_RESULTS_DIR


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report", help="write report.html and plots/ from a results folder"
    )
    parser.add_argument(
        "results",
        type=Path,
        nargs="?",
        default=Path(DEFAULT_RESULTS_DIR),
        metavar="RESULTS",
        help=f"results folder (default: {DEFAULT_RESULTS_DIR}/)",
    )
    parser.add_argument(
        "--golden",
        type=Path,
        default=Path(DEFAULT_GOLDEN_DIR),
        help=f"golden folder (default: {DEFAULT_GOLDEN_DIR}/)",
    )
    parser.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from pytest_infx.report.html import write_report
    from pytest_infx.results.layout import Layout
    from pytest_infx.results.sweep import read_sweep

    results: Path = args.results
    if not Layout(results).holds_results():
        print(
            f"infx report: {results} holds no cells/ or agentic/ folder; "
            "pass the --infx-results folder of a run",
            file=sys.stderr,
        )
        return 2
    files = write_report(read_sweep(results.resolve(), args.golden.resolve()))
    print(files.html)
    for picture in files.pictures:
        print(picture)
    if files.plots_missing:
        print(f"infx report: no plots: {files.plots_missing}", file=sys.stderr)
    return 0
