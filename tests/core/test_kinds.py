"""A kind of benchmark lives in its package: the modules outside the kind packages reach a kind
only through the value its package exports (``<package>/kind.py``), which ``pytest_infx/kinds.py``
lists. What still names a kind from outside is listed below with why, so the lists can only
shrink on purpose and never grow unseen; ``plugin/`` is the pytest side of every kind and may
name them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from recipes.conftest import repository_points
from results.samples import cell, fixed, point

from core.test_imports import NAME, PACKAGE, module_graph
from pytest_infx.kinds import KINDS
from pytest_infx.recipes.points import Point
from pytest_infx.results.records import AGENTIC, FIXED_SEQ_LEN, SPEEDBENCH

KIND_PACKAGES = ("speedbench", "agentic", "fixedseq")
ADAPTER = (
    "SPEED-Bench's pytest adapter: its golden gate takes syrupy's snapshot, which no kind package"
    " may import, so it does not measure through the generic one"
)
RECIPES = "a recipe's blocks are the kinds' settings: the recipe schema is not yet per kind"
RECORDS = "the record types are one discriminated union here, not yet in their kind packages"
SECTIONS = "its per-kind sections are not yet the kinds' (report section, sweep tables)"
INTERNALS: dict[str, str] = {
    "plugin.run.kinds.speedbench": ADAPTER,
    "prepare.preflight": "loads the SPEED-Bench datasets before the run: not yet the kind's",
}
NAMING = re.compile(
    r"CellRecord|PointRecord|FixedRecord|pytest_infx\.(speedbench|agentic|fixedseq)\b"
    r"|\"(speedbench|agentic|fixed_seq_len)\""
)
NAMES: dict[str, str] = {
    "kinds.py": "the one list of the kinds",
    "cli/importer.py": "InferenceX's scenarios become the recipe blocks of each kind",
    "cli/compare.py": "compare-configs maps InferenceX's scenario names to kinds",
    "cli/scripts.py": "the importer's matching and admission rules differ by kind",
    "engines/base.py": "a server label's suffix differs by kind",
    "engines/vllm.py": "per-request counters are asked for SPEED-Bench cells",
    "history/ingest.py": "InferenceX's AgentX rows are stored under their benchmark",
    "lint/golden.py": "golden curves sit under a recipe's speedbench block",
    "lint/recipes.py": RECIPES,
    "prepare/catalog.py": "the catalog's concurrency column is an AgentX point's",
    "prepare/preflight.py": INTERNALS["prepare.preflight"],
    "recipes/checks.py": RECIPES,
    "recipes/points.py": RECIPES,
    "recipes/rules.py": RECIPES,
    "report/html.py": SECTIONS,
    "results/layout.py": "the results folder's layout names each kind's folder",
    "results/records.py": RECORDS,
    "results/sweep.py": SECTIONS,
}


def _kind_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in KIND_PACKAGES else None


def test_no_module_outside_a_kind_package_imports_its_internals() -> None:
    """Only ``<package>/kind.py``, the kind's exported value, is imported from outside."""
    reaching: set[str] = set()
    for module, targets in module_graph(PACKAGE).items():
        own = _kind_package(module)
        for target in targets:
            package = _kind_package(target)
            if package is None or package == own:
                continue
            if target != f"{NAME}.{package}.kind":
                reaching.add(module.removeprefix(f"{NAME}."))
    assert sorted(reaching - set(INTERNALS)) == [], "new imports of a kind package's internals"
    assert sorted(set(INTERNALS) - reaching) == [], "listed modules that no longer need to be"


def test_only_the_listed_modules_outside_the_kinds_and_plugin_name_a_kind() -> None:
    naming = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] not in (*KIND_PACKAGES, "plugin")
        and NAMING.search(path.read_text(encoding="utf-8"))
    }
    assert sorted(naming - set(NAMES)) == [], "new modules that name a kind"
    assert sorted(set(NAMES) - naming) == [], "listed modules that no longer name a kind"


def test_every_record_kind_has_its_benchmark_kind() -> None:
    assert KINDS.names() == (SPEEDBENCH, AGENTIC, FIXED_SEQ_LEN)
    for record in (cell(), point(), fixed()):
        assert KINDS.of(record).name == record.kind


def test_the_kind_packages_are_the_kinds_listed() -> None:
    listed = (PACKAGE / "kinds.py").read_text(encoding="utf-8")
    imported = set(re.findall(r"from pytest_infx\.(\w+)\.kind import KIND", listed))
    assert imported == set(KIND_PACKAGES)
    assert all((PACKAGE / package / "kind.py").is_file() for package in KIND_PACKAGES)
    assert Path(__file__).name == "test_kinds.py"


def test_each_kind_describes_the_client_of_its_own_points_only() -> None:
    """The plan asks a point's kind what its client sends; a kind handed another kind's point
    says so rather than reading a block it does not have."""
    by_kind: dict[str, Point] = {}
    for found in repository_points().values():
        by_kind.setdefault(found.kind, found)
    assert sorted(by_kind) == sorted(KINDS.names())
    for kind in KINDS:
        for name, sample in by_kind.items():
            if name == kind.name:
                assert kind.client_settings(sample)["stream"] is True
            else:
                refused = re.escape(f"{sample.id} is a {name} point, not")
                with pytest.raises(TypeError, match=refused):
                    kind.client_settings(sample)
