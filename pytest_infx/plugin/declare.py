"""The options and ini keys pytest-infx declares (:mod:`.options` reads them into Settings)."""

from __future__ import annotations

import argparse

import pytest

from pytest_infx.settings import (
    DEFAULT_CHANGELOG_ONLY_ENTRIES,
    DEFAULT_ENGINE_CHECK,
    DEFAULT_GOLDEN_DIR,
    DEFAULT_PRECISION_CHECK,
    DEFAULT_PROGRESS,
    DEFAULT_PROGRESS_INTERVAL_S,
    DEFAULT_RECIPES_DIR,
    DEFAULT_RESULTS_DIR,
    ENGINE_CHECK_MODES,
    PROGRESS_MODES,
)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("infx", "pytest-infx: inference benchmarks")
    group.addoption(
        "--infx-gpu",
        dest="infx_gpu",
        metavar="NAME",
        default=None,
        help="run the points of this runner type (b300, b200, h200, cpu, ...); "
        "default: cpu when no NVIDIA GPU is visible, else the visible GPU's type",
    )
    group.addoption(
        "--infx-results",
        dest="infx_results",
        metavar="DIR",
        default=None,
        help="where result files, server logs and measured curves go (default: infx-results/)",
    )
    group.addoption(
        "--infx-plan",
        dest="infx_plan",
        action="store_true",
        default=False,
        help="print, per item, the server argv and environment, the client settings "
        "and the golden curve (use with --collect-only to launch nothing)",
    )
    group.addoption(
        "--infx-recipes",
        dest="infx_recipes",
        metavar="DIR",
        default=None,
        help="recipe folder (default: ini infx_recipes, else recipes/)",
    )
    group.addoption(
        "--infx-gpu-count",
        dest="infx_gpu_count",
        type=int,
        default=None,
        help="number of GPUs to lease to servers (default: what nvidia-smi shows)",
    )
    group.addoption(
        "--infx-dataset-dir",
        dest="infx_dataset_dir",
        metavar="DIR",
        default=None,
        help="folder that recipe dataset paths are relative to (default: the rootdir)",
    )
    group.addoption(
        "--infx-changed-since",
        dest="infx_changed_since",
        metavar="REF",
        default=None,
        help="select only the items of recipe keys whose points changed since REF",
    )
    group.addoption(
        "--infx-rebaseline",
        dest="infx_rebaseline",
        action="store_true",
        default=False,
        help="with --snapshot-update: rewrite every golden cell that "
        "differs at all, not only the cells out of tolerance",
    )
    group.addoption(
        "--infx-staged-root",
        dest="infx_staged_root",
        metavar="DIR",
        default=None,
        help="folder of checkpoints staged on this runner (default: ini "
        "infx_staged_root, else $INFX_STAGED_ROOT)",
    )
    group.addoption(
        "--infx-download-root",
        dest="infx_download_root",
        metavar="DIR",
        default=None,
        help="where missing checkpoints are downloaded (default: ini "
        "infx_download_root, else $INFX_DOWNLOAD_ROOT, else ~/.cache/pytest-infx/models)",
    )
    group.addoption(
        "--infx-lint-root",
        dest="infx_lint_root",
        metavar="DIR",
        default=None,
        help="repository root that pytest -m lint checks (default: ini "
        "infx_lint_root, else the rootdir)",
    )
    group.addoption(
        "--infx-base",
        dest="infx_base",
        metavar="REF",
        default=None,
        help="git ref the lint rules compare with (default: ini infx_base, else "
        "origin/main when it exists)",
    )
    add_slurm_options(group, parser)
    group.addoption(
        "--infx-precision-check",
        dest="infx_precision_check",
        choices=("warn", "fail", "off"),
        default=None,
        help="when a recipe's model.precision disagrees with the dtype census of its "
        "checkpoint on this machine: warn (default), fail the point, or off",
    )
    group.addoption(
        "--infx-engine-check",
        dest="infx_engine_check",
        choices=ENGINE_CHECK_MODES,
        default=None,
        help="parse every selected point's server command with the pinned engine's own parser"
        " before any server starts: auto (default: where its parser environment is installed),"
        " always (install missing ones), off",
    )
    group.addoption(
        "--infx-lint-all",
        dest="infx_lint_all",
        action="store_true",
        default=False,
        help="audit the whole history: every changelog entry and every script, not only what "
        "changed since the base (the default, PR mode)",
    )
    group.addoption(
        "--infx-pr",
        dest="infx_pr",
        metavar="N",
        type=int,
        default=None,
        help="number of the pull request being linted: a new changelog entry's pr-link must be "
        "its URL or an XXX placeholder (default: from GitHub Actions' GITHUB_REF)",
    )
    group.addoption(
        "--infx-main",
        dest="infx_main",
        action="store_true",
        default=False,
        help="lint as on the main branch: new changelog entries need their PR URL, placeholders "
        "fail (default: a push to main in GitHub Actions)",
    )
    group.addoption(
        "--infx-progress",
        dest="infx_progress",
        choices=PROGRESS_MODES,
        default=None,
        help="live progress of the running cells and server starts: 'live' redraws lines in "
        "place, 'lines' prints plain lines every --infx-progress-interval seconds, 'off' "
        "prints nothing (default: ini infx_progress, else 'auto': live on a terminal, "
        "else lines)",
    )
    group.addoption(
        "--infx-progress-interval",
        dest="infx_progress_interval",
        metavar="SECONDS",
        type=float,
        default=None,
        help="seconds between plain progress lines when output is not a terminal "
        "(default: ini infx_progress_interval, else 30)",
    )
    group.addoption(
        "--infx-resume",
        dest="infx_resume",
        action="store_true",
        default=None,
        help="skip a cell whose result file in --infx-results passed with the same point "
        "fingerprint and dataset, reusing its stored AL (default: ini infx_resume)",
    )
    parser.addini(
        "infx_progress", "live, lines, off or auto (the default)", default=DEFAULT_PROGRESS
    )
    parser.addini(
        "infx_progress_interval",
        "seconds between plain progress lines",
        default=f"{DEFAULT_PROGRESS_INTERVAL_S:g}",
    )
    parser.addini("infx_resume", "reuse passed cells of an earlier run", type="bool", default=False)
    group.addoption(
        "--infx-db",
        dest="infx_db",
        metavar="URL",
        default=None,
        help="results history database, e.g. postgresql+psycopg://user@host/db; off for none "
        "(default: ini infx_db, else $INFX_DB_URL, else sqlite:///<results>/history.db)",
    )
    parser.addini("infx_db", "results history database URL, or off")
    group.addoption(
        "--infx-baseline",
        dest="infx_baseline",
        metavar="BRANCH_OR_RUN",
        default=None,
        help="fail a point whose figures moved past their tolerance from the latest passing "
        "row of the same config on this branch (or in this run id) in the history",
    )
    group.addoption(
        "--infx-branch",
        dest="infx_branch",
        metavar="NAME",
        default=None,
        help="the branch this run is stored under in the history (default: from GitHub "
        "Actions, else the checkout's branch)",
    )
    parser.addini(
        "infx_baseline_tolerance",
        "baseline gate tolerances, one METRIC: -N% (more is better) or METRIC: +N% (less is "
        "better) a line",
        type="linelist",
        default=[],
    )
    parser.addini(
        "infx_baseline_mad_k",
        "baseline gate: a point fails only outside the baseline rows' median +/- this many "
        "median absolute deviations (default 3)",
        default="",
    )
    parser.addini(
        "infx_repeats",
        "passes of each point whose recipe names no repeats; the point keeps "
        "their median (default 1)",
        default="",
    )
    parser.addini(
        "infx_baseline_window",
        "baseline gate: how many recent passing rows of a point the baseline is the median "
        "of (default 10)",
        default="",
    )
    parser.addini(
        "infx_scenario_types",
        "accepted scenario-type values of changelog entries (default: fixed-seq-len, "
        "agentic-coding)",
        type="linelist",
        default=[],
    )
    parser.addini(
        "infx_lint_root", "repository root for pytest -m lint, relative to the rootdir", default=""
    )
    parser.addini(
        "infx",
        "true: this repository uses pytest-infx (any infx_* key opts in as well; without one "
        "pytest-infx does nothing here)",
        type="bool",
        default=False,
    )
    parser.addini(
        "infx_lint",
        "include the lint items in runs given no path (plain pytest)",
        type="bool",
        default=False,
    )
    parser.addini(
        "infx_lint_select",
        "lint rule ids or families (changelog, comments, recipes, golden) to run; default all",
        type="args",
        default=[],
    )
    parser.addini(
        "infx_lint_ignore", "lint rule ids or families not to run", type="args", default=[]
    )
    parser.addini(
        "infx_changelog_only_entries",
        "new changelog entries that change no config key: forbid (default), repeat (an"
        " earlier entry's config-keys and description, as a results recovery writes them)"
        " or match:REGEX (a description line matches)",
        default=DEFAULT_CHANGELOG_ONLY_ENTRIES,
    )
    parser.addini("infx_base", "git ref the lint rules compare with", default="")
    parser.addini("infx_staged_root", "folder of checkpoints staged on this runner", default="")
    parser.addini("infx_download_root", "where missing checkpoints are downloaded", default="")
    parser.addini(
        "infx_recipes", "recipe folder, relative to the rootdir", default=DEFAULT_RECIPES_DIR
    )
    parser.addini(
        "infx_results",
        "results folder, relative to the invocation dir",
        default=DEFAULT_RESULTS_DIR,
    )
    parser.addini(
        "infx_golden", "golden curve folder, relative to the rootdir", default=DEFAULT_GOLDEN_DIR
    )
    parser.addini(
        "infx_engine_check",
        "engine argv check: auto, always or off",
        default=DEFAULT_ENGINE_CHECK,
    )
    parser.addini(
        "infx_precision_check",
        "precision label vs checkpoint census: warn, fail or off",
        default=DEFAULT_PRECISION_CHECK,
    )


def add_slurm_options(group: pytest.OptionGroup, parser: pytest.Parser) -> None:
    """Options of a sweep whose xdist workers are Slurm jobs (see pytest_infx.plugin.slurm.jobs)."""
    slurm = {
        "infx_slurm": ("N", "run on Slurm: N xdist workers, each one srun job of one task"),
        "infx_slurm_partition": ("NAME", "Slurm partition of the worker jobs"),
        "infx_slurm_gpus": ("G", "GPUs per worker job (--gres=gpu:G); servers lease from them"),
        "infx_slurm_time": ("TIME", "time limit per worker job, in srun's --time format"),
        "infx_slurm_account": ("NAME", "Slurm account charged for the worker jobs"),
        "infx_slurm_args": ("ARGS", "extra srun arguments for every worker job, shell-quoted"),
        "infx_slurm_wait": (
            "S",
            "seconds a replacement job may wait in the queue; then the items no worker can run "
            "fail with squeue's reason (default: wait as long as it takes)",
        ),
    }
    for dest, (metavar, text) in slurm.items():
        flag = "--" + dest.replace("_", "-")
        group.addoption(flag, dest=dest, metavar=metavar, default=None, help=text)
        parser.addini(dest, text, default="")


SHORT_NAMES = {
    "--gpu": ("--infx-gpu", "infx_gpu", "NAME"),
    "--changed-since": ("--infx-changed-since", "infx_changed_since", "REF"),
}


def add_short_names(parser: pytest.Parser) -> list[str]:
    """The short names docs/options.md uses (``--gpu``, ``--changed-since``), added once every
    plugin and initial conftest has added its options, and only where none of them has the
    name: a host's own ``--gpu`` keeps working, and pytest-infx's stays reachable under its
    ``--infx-`` name. Returns a note for each short name left to its owner."""
    group = parser.getgroup("infx")
    notes = []
    for short, (full, dest, metavar) in SHORT_NAMES.items():
        if not _taken(parser, short):
            try:
                group.addoption(short, dest=dest, metavar=metavar, help=f"short for {full}")
                continue
            except (ValueError, argparse.ArgumentError):
                pass
        notes.append(
            f"{short} is another plugin's or conftest's option here; pytest-infx's is {full}"
        )
    return notes


def _taken(parser: pytest.Parser, name: str) -> bool:
    """Whether an option already answers to ``name``: parsed alone, it is either consumed or
    wants its value. Asked of the parser rather than of its option groups, because pytest
    before 9 only meets another group's option of the same name when it parses."""
    try:
        _, unknown = parser.parse_known_and_unknown_args([name])
    except pytest.UsageError:
        return True
    return name not in unknown
