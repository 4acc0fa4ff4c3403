"""From a point to a running server: model paths, the launch spec, and the shared pool.

This is the seam between the engine adapters (what to run) and the launcher (how to run it
safely). Checkpoints are resolved here, because the embedded CPU engine ships its own models while
GPU recipes stage or download theirs, and the adapter should not care which.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from pytest_infx.engines.base import ModelPaths, ServerPlan, is_embedded, speculation
from pytest_infx.engines.embedded import EmbeddedEngine
from pytest_infx.launch import DockerRuntime, LocalRuntime, ServerSpec
from pytest_infx.launch.staging import Checkpoint, resolve_model
from pytest_infx.recipes.points import Point
from pytest_infx.settings import Roots


def embedded_paths(point: Point, engine: EmbeddedEngine) -> ModelPaths:
    named = {"embedded:target": str(engine.model_dir), "embedded:draft": str(engine.draft_dir)}
    target = named.get(point.recipe.model.path or "embedded:target")
    if target is None:
        raise ValueError(
            f"{point.id}: model.path {point.recipe.model.path!r} is not an embedded model; "
            "use 'embedded:target'"
        )
    spec, _ = speculation(point)
    draft = None
    if spec is not None and spec.draft is not None:
        draft = named.get(spec.draft, spec.draft)
    return ModelPaths(target, draft)


def staged_paths(point: Point, roots: Roots) -> ModelPaths:
    model = point.recipe.model
    spec, _ = speculation(point)
    subfolders = (spec.draft_subfolder,) if spec is not None and spec.draft_subfolder else ()
    if model.path and not is_embedded(model.path):
        target = Path(model.path)
    else:
        checkpoint = Checkpoint(model.hub_id, subfolders=subfolders)
        target = resolve_model(checkpoint, staged_root=roots.staged, download_root=roots.download)
    draft: str | None = None
    if spec is not None and spec.draft_subfolder:
        draft = str(target / spec.draft_subfolder)
    elif spec is not None and spec.draft:
        if spec.draft.startswith("/"):
            draft = spec.draft
        else:
            draft = str(
                resolve_model(
                    Checkpoint(spec.draft), staged_root=roots.staged, download_root=roots.download
                )
            )
    return ModelPaths(str(target), draft)


def to_spec(
    plan: ServerPlan, paths: ModelPaths, *, key: str | None = None, label: str | None = None
) -> ServerSpec:
    """``key`` and ``label`` are the server's as collection gave them (see
    :func:`pytest_infx.prepare.catalog.server_labels`), so that the pool's logs and messages
    carry the name the plan shows."""
    env = dict(plan.env)
    if plan.image is not None:
        mounts = {posixpath.dirname(paths.target.rstrip("/")) or "/"}
        if paths.draft and not paths.draft.startswith(paths.target):
            mounts.add(posixpath.dirname(paths.draft.rstrip("/")))
        runtime: DockerRuntime | LocalRuntime = DockerRuntime(
            plan.image,
            mounts=tuple((m, m) for m in sorted(mounts)),
            unpinned=plan.image_unpinned,
        )
    else:
        runtime = LocalRuntime()
    return ServerSpec(
        key=key or plan.key,
        argv=plan.argv,
        label=label or plan.label,
        env=env,
        preferred_port=plan.preferred_port,
        health_path=plan.health_path,
        ready_timeout_s=plan.ready_timeout_s,
        gpus=plan.gpus,
        runtime=runtime,
        gpu_vendor=plan.gpu_vendor,
        files=plan.files,
    )
