"""The plan: what each item would launch and send, without launching anything.

It uses the same adapters as the real run, with symbolic model paths, so what the plan shows is
what the server fixture will start once checkpoints are resolved.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_infx.engines.base import FILES, ModelPaths, PlanError, ServerPlan
from pytest_infx.engines.registry import EngineRegistry, installed, symbolic_paths
from pytest_infx.engines.spec import SyntheticSetting
from pytest_infx.golden.lookup import golden_al
from pytest_infx.golden.store import GoldenStore
from pytest_infx.kinds import KINDS
from pytest_infx.launch.spec import server_name
from pytest_infx.recipes.points import Cell, Point
from pytest_infx.results.kind import Kinds
from pytest_infx.secrets import shown_argv, shown_value


def synthetic_for(
    point: Point, golden_root: Path, engines: EngineRegistry | None = None
) -> SyntheticSetting | None:
    """The forced-acceptance setting of a speculative AgentX or fixed-seq-len point, from its
    golden curve.

    Both measure throughput at the acceptance the model really achieves, which their prompts
    (replayed traces, random tokens) would not give by themselves; the AL comes from the
    committed curve, never from a number typed into a recipe.
    """
    block = point.agentic or point.fixed_seq_len
    if block is None or block.speculative is None:
        return None
    spec = block.speculative
    al = golden_al(
        GoldenStore(golden_root), spec.golden, spec.draft_length, spec.thinking == "thinking_on"
    )
    return (engines or installed()).synthetic_setting(
        point.recipe.engine.name, al, spec.draft_length
    )


def launch_plan(
    point: Point,
    paths: ModelPaths,
    golden_root: Path,
    *,
    embedded_python: str | None = None,
    engines: EngineRegistry | None = None,
) -> ServerPlan:
    """The server plan with the synthetic setting the launch adds: what ``--infx-plan`` shows
    and what the server fixture starts are this one call."""
    engines = engines or installed()
    synthetic = synthetic_for(point, golden_root, engines)
    return engines.adapter_for(point).plan(
        point, paths, synthetic=synthetic, embedded_python=embedded_python
    )


def server_plan(
    point: Point, golden_root: Path | None = None, engines: EngineRegistry | None = None
) -> ServerPlan:
    """The plan with symbolic model paths; without ``golden_root``, without the synthetic
    setting (enough to tell which points share a server)."""
    engines = engines or installed()
    if golden_root is None:
        return engines.adapter_for(point).plan(point, symbolic_paths(point))
    return launch_plan(
        point,
        symbolic_paths(point),
        golden_root,
        embedded_python=_embedded(point),
        engines=engines,
    )


def _embedded(point: Point) -> str | None:
    """The embedded engine's python when it is installed, as the launch will use it."""
    if not point.recipe.engine.embedded:
        return None
    # the environment machinery loads only for a plan that shows an embedded recipe
    from pytest_infx.engines import embedded

    engine = embedded.installed()
    return str(engine.python) if engine is not None else None


def server_key(point: Point, engines: EngineRegistry | None = None) -> str:
    try:
        return server_plan(point, engines=engines).key
    except PlanError:
        return f"unplannable:{point.id}"


def client_settings(point: Point, kinds: Kinds = KINDS) -> dict[str, Any]:
    """What the point's client sends, as its kind (one of ``kinds``: a run's include the kinds
    other packages provide) says."""
    return kinds[point.kind].client_settings(point)


def golden_of(point: Point) -> str | None:
    block = point.block
    if isinstance(block, Cell):
        return block.bench.golden
    if isinstance(block, dict):
        return None
    return block.speculative.golden if block.speculative is not None else None


def render(
    point: Point,
    root: Path | None = None,
    golden_root: Path | None = None,
    *,
    server: str | None = None,
    engines: EngineRegistry | None = None,
    kinds: Kinds = KINDS,
) -> list[str]:
    """The point's plan as ``--infx-plan`` prints it; with ``golden_root``, the argv and env
    hold the synthetic setting the launch adds. ``server`` is the server's one name as
    collection gives it (made from the collected key: the synthetic setting and the installed
    engine's python do not split a server); without it, the name of this plan's own key."""
    where = point.path
    if root is not None and point.path.is_relative_to(root):
        where = point.path.relative_to(root)
    lines = [f"{point.id}  (fingerprint {point.fingerprint}, {where}:{point.line})"]
    try:
        plan = server_plan(point, golden_root, engines)
    except PlanError as exc:
        return [*lines, f"  server: cannot plan: {exc}"]
    except (LookupError, OSError, ValueError) as exc:
        return [*lines, f"  server: cannot plan its synthetic acceptance: {exc}"]
    runtime = f"image {plan.image}" if plan.image else "local process"
    if plan.image_unpinned:
        runtime += f" by its tag: {plan.image_unpinned}"
    lines.append(
        f"  server {server or server_name(plan.label, plan.key)} ({plan.engine}, "
        f"{runtime}, {plan.gpus} GPU(s), "
        f"port {plan.preferred_port} preferred)"
    )
    lines.append(f"    argv: {shlex.join(shown_argv(plan.argv))}")
    if plan.env:
        shown = (f"{k}={shlex.quote(shown_value(k, v))}" for k, v in sorted(plan.env.items()))
        lines.append("    env: " + " ".join(shown))
    for name, text in sorted(plan.files.items()):
        lines.append(f"    file {FILES}/{name}:")
        lines += [f"      {line}" for line in text.splitlines()]
    lines.append("  client: " + json.dumps(client_settings(point, kinds), sort_keys=True))
    for stated in point.recipe.differences:
        lines.append(
            f"  differs from InferenceX: {stated.name} InferenceX {stated.inferencex!r},"
            f" ours {stated.ours!r} ({stated.reason}"
            + (f": {stated.evidence})" if stated.evidence else ")")
        )
    curve = golden_of(point)
    if curve:
        lines.append(f"  golden: {curve}")
        if (
            golden_root is not None
            and isinstance(point.block, Cell)
            and uncommitted(curve, golden_root)
        ):
            lines.append(
                f"  warning: golden curve {curve} is not committed ({_shown(golden_root, root)}): "
                "this cell fails before its server starts unless the run records the curve "
                "with --snapshot-update"
            )
    return lines


def uncommitted(curve: str, golden_root: Path) -> bool:
    """A curve a recipe names that has no file: shipped recipes of a model InferenceX never
    measured name the curve their first run records, and a plan reader should see which."""
    return not (golden_root / f"{curve}.yaml").is_file()


def _shown(folder: Path, root: Path | None) -> str:
    if root is not None and folder.is_relative_to(root):
        return f"{folder.relative_to(root)}/"
    return f"{folder}/"


def missing_curves(points: Iterable[Point], golden_root: Path) -> list[str]:
    """The plan's closing line for the SPEED-Bench cells whose golden curve is not committed
    (an agentic point's missing curve already stops its plan: it has no AL to force)."""
    counts: dict[str, int] = {}
    for point in points:
        if isinstance(point.block, Cell) and uncommitted(point.block.bench.golden, golden_root):
            counts[point.block.bench.golden] = counts.get(point.block.bench.golden, 0) + 1
    if not counts:
        return []
    named = ", ".join(f"{curve} ({n})" for curve, n in sorted(counts.items()))
    return [
        f"golden curves not committed, for {sum(counts.values())} cell(s): {named}; record "
        "them with --snapshot-update on the hardware (each needs its SPEED-Bench dataset)"
    ]


def sharing(servers: Iterable[tuple[str, str]]) -> list[str]:
    """Which points one server serves, from (server name, point id) pairs: a reader of the plan
    should not have to compare keys."""
    users: dict[str, list[str]] = {}
    for name, point_id in servers:
        users.setdefault(name, []).append(point_id)
    total = sum(len(ids) for ids in users.values())
    lines = [f"servers: {len(users)} for {total} point(s)"]
    for name, ids in users.items():
        if len(ids) > 1:
            lines.append(f"  server {name} shared by {len(ids)}: {', '.join(ids)}")
    return lines
