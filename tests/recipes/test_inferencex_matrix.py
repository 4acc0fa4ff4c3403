"""The recipe tree holds InferenceX's whole single-node matrix at 843c6254f: per runner type and
key, ``pytest --collect-only -m <kind> --gpu <runner>`` gives exactly the points of its
``sweep.json`` (AgentX and fixed-seq-len) and the cells of each SPEED-Bench collector, and
``infx compare-configs`` finds no key that differs from its master configs. Read from the
reference data beside the repository (tests/inferencex_reference.py), skipped without it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from inferencex_reference import RECIPES, ROOT, records, reference, sweep_points

from pytest_infx.cli import main
from pytest_infx.cli.importer import point_name
from pytest_infx.hardware import gpu_type

KINDS = ("agentic", "fixed_seq_len", "speedbench")
ONE_MODE = dict.fromkeys(
    (
        "dsr1-fp4-b300-vllm",
        "dsv4dspark-fp4-b300-vllm",
        "dsv4dsparkprob-fp4-b300-vllm",
        "glm52-fp4-b300-vllm",
        "kimik3-fp4-b300-vllm",
        "kimik3-fp4-b300-vllm-probabilistic-sample-method-block-rejection-sample-method",
    ),
    "thinking_on",
)
"""Collectors whose recipe measures one thinking mode of the workflow's two, each saying why
in its docs: the model's template has no thinking switch (DeepSeek-R1), or InferenceX's
committed curve has that mode only."""
LOCAL = {
    "b200": {"mimov2.6flash-fp4-b200-sglang-agentic", "mimov2.6flash-fp4-b200-vllm-agentic"},
    "b300": {"mimov2.6flash-fp4-b300-vllm-dflash"},
}
"""Recipes of this repository with no InferenceX key or collector at 843c6254f."""
_NODE = re.compile(r"^recipes/.*::(?P<key>[^\[]+)\[(?P<name>[^\]]+)\]$")


def key_groups() -> dict[str, frozenset[str]]:
    """Each key and the keys ``commands.jsonl`` could not tell its points from (it writes
    ``a|b`` where two keys expand to the same point): their points are compared together."""
    groups: dict[str, set[str]] = {}
    for record in records():
        names = set(record["key"].split("|"))
        merged = set(names).union(*(groups.get(n, set()) for n in names))
        for name in merged:
            groups[name] = merged
    return {key: frozenset(group) for key, group in groups.items()}


def expected() -> dict[str, dict[frozenset[str], Counter[tuple[str, str]]]]:
    """Runner type -> key group -> (kind, point name) counts, from ``sweep.json`` and the
    SPEED-Bench collectors' workflow inputs."""
    groups = key_groups()
    points = sweep_points()
    found: dict[str, dict[frozenset[str], Counter[tuple[str, str]]]] = defaultdict(dict)
    for record in records():
        runner = gpu_type(record["runner"])
        if record["scenario"] == "speedbench":
            key = record["key"].removeprefix("speedbench:").replace("_", "-")
            inputs = record["params"]["workflow_dispatch_inputs"]
            cells = Counter(
                ("speedbench", f"k{k}-thinking_{mode}")
                for k in inputs["mtp-list"].split()
                for mode in inputs["thinking-modes"].split()
                if ONE_MODE.get(key, f"thinking_{mode}") == f"thinking_{mode}"
            )
            found[runner].setdefault(frozenset({key}), Counter()).update(cells)
            continue
        point = points[record["index"]]
        kind = "agentic" if point.get("scenario-type") == "agentic-coding" else "fixed_seq_len"
        group = groups[record["key"].split("|")[0]]
        found[runner].setdefault(group, Counter())[(kind, point_name(point))] += 1
    return found


RUNNERS = ("b200", "b300", "h100", "h200", "mi300x", "mi325x", "mi355x", "rtx6000pro")
MARKS = " or ".join(KINDS)
COLLECT = (sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider")


def kind_of(name: str) -> str:
    """A point's kind from its name: a SPEED-Bench cell is ``k<n>-thinking_<mode>``, a
    fixed-seq-len point names its lengths."""
    if re.fullmatch(r"k\d+-thinking_o(n|ff)", name):
        return "speedbench"
    return "fixed_seq_len" if "-isl" in name else "agentic"


@pytest.fixture(scope="module")
def collections() -> dict[str, dict[tuple[str, str], Counter[str]]]:
    """Runner -> (kind, key) -> point names that ``pytest --collect-only -m MARKS --gpu RUNNER``
    collects from the recipe tree; the runners are collected side by side."""
    reference()
    runs = {
        runner: subprocess.Popen(
            [*COLLECT, "-m", MARKS, "--gpu", runner, "recipes"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for runner in RUNNERS
    }
    found: dict[str, dict[tuple[str, str], Counter[str]]] = {}
    for runner, run in runs.items():
        out, _ = run.communicate(timeout=600)
        assert run.returncode == 0, out[-3000:]
        found[runner] = defaultdict(Counter)
        for line in out.splitlines():
            match = _NODE.match(line.strip())
            if match:
                found[runner][(kind_of(match["name"]), match["key"])][match["name"]] += 1
    return found


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_key_collects_the_points_of_sweep_json_on_its_runner(
    runner: str, collections: dict[str, dict[tuple[str, str], Counter[str]]]
) -> None:
    wanted = expected()[runner]
    got = collections[runner]
    for group, points in sorted(wanted.items(), key=lambda item: sorted(item[0])):
        have: Counter[tuple[str, str]] = Counter()
        for kind in KINDS:
            for key in group:
                have.update((kind, name) for name in got.get((kind, key), Counter()).elements())
        assert have == points, (
            f"{'|'.join(sorted(group))} on {runner}: only in sweep.json"
            f" {sorted((points - have).elements())}, only collected"
            f" {sorted((have - points).elements())}"
        )
    keys = {key for group in wanted for key in group}
    stray = {key for _, key in got if key not in keys}
    assert stray == LOCAL.get(runner, set()), f"keys InferenceX does not run on {runner}"


def test_the_matrix_covers_every_point_and_collector() -> None:
    reference()
    everything = expected()
    total: Counter[str] = Counter()
    for groups in everything.values():
        for points in groups.values():
            for kind, _ in points.elements():
                total[kind] += 1
    assert total["agentic"] + total["fixed_seq_len"] == len(sweep_points()) == 1172
    assert sum(1 for r in records() if r["scenario"] == "speedbench") == 11


def test_compare_configs_finds_no_key_that_differs(capsys: pytest.CaptureFixture[str]) -> None:
    data = reference() / "data"
    assert main(["compare-configs", str(data), "--recipes", str(RECIPES)]) == 0
    out = capsys.readouterr().out
    assert "1172 points on both sides, 0 keys differ" in out


def test_the_reference_folder_is_found_through_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("INFX_INFERENCEX_REFERENCE", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match=f"INFX_INFERENCEX_REFERENCE={tmp_path}"):
        reference()
