"""A recipe point's InferenceX identity, made before it runs from what its engine adapter
says of it (:class:`~pytest_infx.results.identity.ConfigIdentity`)."""

from __future__ import annotations

from pytest_infx.engines.base import speculation
from pytest_infx.engines.registry import EngineRegistry
from pytest_infx.hardware import gpu_type
from pytest_infx.images import version_of
from pytest_infx.recipes.points import Point
from pytest_infx.results.identity import ConfigIdentity


def identity_of(point: Point, *, runner: str | None, engines: EngineRegistry) -> ConfigIdentity:
    """The identity of a recipe point; ``runner`` names the machine (the CI runner's name
    from the run's environment), else the recipe's runner label names it.

    Parallelism other than TP, whether attention is data parallel and the framework name
    are the engine adapter's answers, read from the recipe's engine args as the engine
    takes them. TP is the point's, the GPU count, as InferenceX's ``tp`` is for its
    DP-attention arms.
    """
    recipe = point.recipe
    engine = recipe.engine
    adapter = engines.adapter_for(point)
    sizes = adapter.parallelism(point)
    spec, _ = speculation(point)
    place = runner or recipe.runner
    return ConfigIdentity(
        model_prefix=recipe.model.prefix,
        hardware=gpu_type(place),
        framework=adapter.inferencex_framework or engine.name,
        engine_version=engine.version or version_of(engine.image or ""),
        precision=recipe.model.precision,
        spec_method=spec.method if spec is not None else "none",
        tp=point.tp,
        ep=sizes.ep,
        pp=sizes.pp,
        dcp=sizes.dcp,
        pcp=sizes.pcp,
        dp_attention=adapter.dp_attention(point),
        runner=place,
        conc=point.concurrency,
        isl=point.isl,
        osl=point.osl,
        fingerprint=point.fingerprint,
        model=recipe.model.hub_id,
        image=engine.image,
    )
