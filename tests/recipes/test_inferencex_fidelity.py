"""Every point's planned command against what InferenceX ran for it (its ``commands.jsonl``, in
the reference data beside the repository; skipped without it): the server's flags, environment
and files and the client's settings, compared as engines/fidelity.py reads them. The points
InferenceX's recording could not capture are listed by name as unverified."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from inferencex_reference import RECIPES, ROOT, records, reference, sweep_points

from pytest_infx.cli.importer import point_name
from pytest_infx.engines.base import ADMISSION
from pytest_infx.engines.fidelity import (
    Difference,
    client_differences,
    server_differences,
    stated_in,
    unstated,
)
from pytest_infx.engines.registry import installed
from pytest_infx.prepare.plan import client_settings, server_plan
from pytest_infx.recipes.loader import load_tree
from pytest_infx.recipes.points import Point, expand_all

UNCAPTURED_AGENTIC = {
    "glm5.2_fp4_b200_sglang_mtp",
    "kimik3_fp4_mi355x_mtp",
    "minimaxm3_fp4_b200_mtp",
    "minimaxm3_fp4_mi355x_mtp",
    "minimaxm3_fp8_h200_mtp",
    "qwen3.5_fp8_h100",
    "qwen3.5_fp8_h100_mtp",
    "qwen3.5_fp8_h200_mtp",
}
"""The agentic scripts that stop inside the recording's stand-in container (the reference
data's README names them, with why)."""


@dataclass(frozen=True)
class Compared:
    point: Point
    left: tuple[Difference, ...]
    stated: Counter[str]


@functools.cache
def comparison() -> tuple[tuple[Compared, ...], tuple[str, ...]]:
    """Each point with a record, compared; and the names of the records without one side."""
    points = {p.id: p for p in expand_all(load_tree(RECIPES))}
    sweep = sweep_points()
    rules = installed().engine_rules()
    found: list[Compared] = []
    unverified: list[str] = []
    for record in records():
        server: dict[str, Any] = record.get("server") or {}
        client: dict[str, Any] = record.get("client") or {}
        if record["scenario"] == "speedbench" or not server.get("argv") or not client.get("argv"):
            unverified.append(f"{record['key']} ({record['script']})")
            continue
        name = point_name(sweep[record["index"]])
        ids = [f"{key}[{name}]" for key in record["key"].split("|")]
        point = next(points[i] for i in ids if i in points)
        plan = server_plan(point, ROOT / "golden")
        differences = server_differences(plan.engine, plan.argv, plan.env, plan.files, server)
        differences += client_differences(client_settings(point), client)
        owners = rules.agentic.get(plan.engine, {}) if point.kind == "agentic" else {}
        admission = [flag for flag, owner in owners.items() if owner == ADMISSION]
        left, counts = unstated(differences, stated_in(point.recipe), admission)
        found.append(Compared(point, tuple(left), Counter(counts)))
    return tuple(found), tuple(unverified)


def test_every_point_with_a_record_is_compared_and_the_rest_are_listed_unverified(
    record_property: Any,
) -> None:
    reference()
    compared, unverified = comparison()
    record_property("unverified", "; ".join(unverified))
    assert len(compared) == 1091
    scripts = Counter(name.rsplit("/", 1)[-1].removesuffix(".sh)") for name in unverified)
    agentic = {s for s in scripts if s in UNCAPTURED_AGENTIC}
    assert agentic == UNCAPTURED_AGENTIC
    assert sum(scripts[s] for s in agentic) == 74
    assert sum(1 for name in unverified if name.startswith("speedbench:")) == 11
    assert len(unverified) == 74 + 7 + 11


def test_the_differences_the_plugin_owns_are_stated_and_counted() -> None:
    reference()
    compared, _ = comparison()
    total: Counter[str] = Counter()
    for entry in compared:
        total.update(entry.stated)
    assert total["owned"] > 0
    hosts = [d for e in compared for d in e.left if d.name in ("--host", "--port", "PORT")]
    assert hosts == []


def test_a_fixed_seq_len_request_names_the_model_as_inferencex_s_client_does() -> None:
    reference()
    points = {p.id: p for p in expand_all(load_tree(RECIPES))}
    sweep = sweep_points()
    checked = 0
    for record in records():
        argv = (record.get("client") or {}).get("argv") or []
        if record["scenario"] != "fixed_seq_len" or "--model" not in argv:
            continue
        sent = argv[argv.index("--model") + 1]
        if sent.startswith("/"):
            continue
        name = point_name(sweep[record["index"]])
        ids = [f"{key}[{name}]" for key in record["key"].split("|")]
        point = next(points[i] for i in ids if i in points)
        assert (point.id, client_settings(point)["model"]) == (point.id, sent)
        checked += 1
    assert checked == 627


COMPARED = (
    "dsr1-fp4-b200-sglang",
    "dsr1-fp4-b200-sglang-mtp",
    "dsr1-fp4-b200-trt",
    "dsr1-fp4-b200-trt-mtp",
    "dsr1-fp4-b300-sglang",
    "dsr1-fp4-mi355x-atom",
    "dsr1-fp4-mi355x-atom-mtp",
    "dsr1-fp4-mi355x-sglang",
    "dsr1-fp4-mi355x-sglang-mtp",
    "dsr1-fp8-b200-sglang",
    "dsr1-fp8-b200-sglang-mtp",
    "dsr1-fp8-b200-trt",
    "dsr1-fp8-b200-trt-mtp",
    "dsr1-fp8-b300-sglang",
    "dsr1-fp8-b300-sglang-mtp",
    "dsr1-fp8-h200-sglang",
    "dsr1-fp8-h200-sglang-mtp",
    "dsr1-fp8-h200-trt",
    "dsr1-fp8-h200-trt-mtp",
    "dsr1-fp8-mi300x-sglang",
    "dsr1-fp8-mi325x-sglang",
    "dsr1-fp8-mi325x-sglang-mtp",
    "dsr1-fp8-mi355x-atom",
    "dsr1-fp8-mi355x-atom-mtp",
    "dsr1-fp8-mi355x-sglang",
    "dsr1-fp8-mi355x-sglang-mtp",
    "dsv4-fp4-b200-sglang",
    "dsv4-fp4-b200-sglang-agentic-hicache-mtp",
    "dsv4-fp4-b200-trt",
    "dsv4-fp4-b200-trt-mtp",
    "dsv4-fp4-b200-vllm",
    "dsv4-fp4-b200-vllm-agentic-mtp",
    "dsv4-fp4-b200-vllm-mtp",
    "dsv4-fp4-b300-sglang",
    "dsv4-fp4-b300-sglang-agentic-hicache-mtp",
    "dsv4-fp4-b300-sglang-mtp",
    "dsv4-fp4-b300-trt",
    "dsv4-fp4-b300-trt-mtp",
    "dsv4-fp4-b300-vllm",
    "dsv4-fp4-b300-vllm-agentic-mtp",
    "dsv4-fp4-b300-vllm-mtp",
    "dsv4-fp4-mi355x-atom",
    "dsv4-fp4-mi355x-atom-agentic-mtp",
    "dsv4-fp4-mi355x-atom-mtp",
    "dsv4-fp4-mi355x-sglang",
    "dsv4-fp4-mi355x-sglang-agentic-mtp",
    "dsv4-fp4-mi355x-sglang-mtp",
    "dsv4-fp4-mi355x-vllm",
    "dsv4-fp4-mi355x-vllm-agentic-mtp",
    "dsv4-fp4-mi355x-vllm-mtp",
    "dsv4-fp8-h200-sglang",
    "dsv4-fp8-h200-sglang-mtp",
    "dsv4-fp8-h200-vllm",
    "dsv4-fp8-h200-vllm-mtp",
    "dsv4-fp8-mi300x-vllm",
    "dsv4-fp8-mi300x-vllm-mtp",
    "dsv4-fp8-mi325x-vllm",
    "dsv4-fp8-mi325x-vllm-mtp",
    "glm5.2-fp4-b300-sglang-agentic-mtp",
    "glm5.2-fp4-mi355x-atom-agentic-mtp",
    "glm5.2-fp4-mi355x-sglang-agentic-mtp",
    "glm5.2-fp8-mi325x-sglang-agentic-mtp",
    "kimik3-fp4-b300-vllm-agentic-dspark",
    "kimik3-fp4-mi355x-atom-agentic-mtp",
    "minimaxm3-fp4-b200-trtllm-agentic-mtp",
    "minimaxm3-fp4-b300-trtllm-agentic-mtp",
    "minimaxm3-fp4-b300-vllm-agentic-mtp",
    "minimaxm3-fp4-mi355x-vllm-agentic-mtp",
    "minimaxm3-fp8-h100-vllm-agentic-mtp",
    "minimaxm3-fp8-mi300x-vllm-agentic-mtp",
    "minimaxm3-fp8-mi325x-vllm-agentic-mtp",
    "qwen3.5-fp4-b200-sglang",
    "qwen3.5-fp4-b200-sglang-agentic-mtp",
    "qwen3.5-fp4-b200-sglang-mtp",
    "qwen3.5-fp4-b200-trt",
    "qwen3.5-fp4-b200-trt-mtp",
    "qwen3.5-fp4-b300-sglang",
    "qwen3.5-fp4-b300-sglang-agentic-mtp",
    "qwen3.5-fp4-b300-sglang-agentic-power-ab",
    "qwen3.5-fp4-b300-sglang-mtp",
    "qwen3.5-fp4-mi355x-atom",
    "qwen3.5-fp4-mi355x-sglang",
    "qwen3.5-fp4-mi355x-sglang-agentic-mtp",
    "qwen3.5-fp4-mi355x-sglang-mtp",
    "qwen3.5-fp4-rtx6000pro-sglang",
    "qwen3.5-fp4-rtx6000pro-sglang-mtp",
    "qwen3.5-fp8-b200-sglang",
    "qwen3.5-fp8-b200-sglang-agentic-mtp",
    "qwen3.5-fp8-b200-sglang-mtp",
    "qwen3.5-fp8-b300-sglang",
    "qwen3.5-fp8-b300-sglang-agentic-mtp",
    "qwen3.5-fp8-b300-sglang-agentic-power-ab",
    "qwen3.5-fp8-b300-sglang-mtp",
    "qwen3.5-fp8-h100-sglang",
    "qwen3.5-fp8-h100-sglang-mtp",
    "qwen3.5-fp8-h200-sglang",
    "qwen3.5-fp8-h200-sglang-mtp",
    "qwen3.5-fp8-mi300x-sglang",
    "qwen3.5-fp8-mi300x-sglang-agentic-mtp",
    "qwen3.5-fp8-mi325x-sglang",
    "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
    "qwen3.5-fp8-mi355x-atom",
    "qwen3.5-fp8-mi355x-atom-mtp",
    "qwen3.5-fp8-mi355x-sglang",
    "qwen3.5-fp8-mi355x-sglang-mtp",
)
"""Every key with a recorded point: each plans every recorded command, or states the
difference with its reason (server flags, environment and files, client settings)."""


def test_every_key_with_a_recorded_point_is_checked() -> None:
    reference()
    compared, _ = comparison()
    assert sorted({entry.point.recipe_key for entry in compared}) == list(COMPARED)


def test_no_recorded_point_has_an_unstated_difference() -> None:
    reference()
    compared, _ = comparison()
    left = Counter(f"{d.where} {d.name}" for entry in compared for d in entry.left)
    assert sum(left.values()) == 0, left.most_common(10)


@pytest.mark.parametrize("key", COMPARED)
def test_a_key_plans_every_recorded_command_or_states_the_difference(key: str) -> None:
    reference()
    compared, _ = comparison()
    mine = [entry for entry in compared if entry.point.recipe_key == key]
    assert mine
    left = [f"{e.point.id}: {d.render()}" for e in mine for d in e.left]
    assert left == []
