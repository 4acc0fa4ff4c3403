"""How InferenceX identifies one AgentX point: the topology its aggregate carries, the GPU
count its per-GPU figures divide by, and the name of its result file.

InferenceX's workflow names a single-node AgentX result
``<exp-name>_<precision>_<framework>_tp<TP>-pp<PP>-dcp<DCP>-pcp<PCP>-ep<EP>-dpa<DPA>_disagg-false
_spec-<SPEC>_conc<CONC>_<runner>[_recipe-<fingerprint>].json`` (``benchmark-tmpl.yml``), with
``exp-name = <model prefix>_tp<TP>_conc<CONC>_kvnone[_spec-<SPEC>]``
(``generate_sweep_configs.py``). Its aggregation and dashboards find a point by that name, so
ours carries the same one. A fixed-seq-len point's name has the same shape, its exp-name being
``<model prefix>_<ISL><OSL>`` with lengths in thousands of tokens where both are whole (``1k8k``),
else ``<ISL>-<OSL>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_infx.engines.base import speculation
from pytest_infx.engines.registry import EngineRegistry, installed
from pytest_infx.recipes.points import Point
from pytest_infx.settings import environment


@dataclass(frozen=True, kw_only=True)
class PointShape:
    model_prefix: str
    precision: str
    framework: str
    tp: int
    conc: int
    runner: str
    pp: int = 1
    dcp: int = 1
    pcp: int = 1
    ep: int = 1
    dp_attention: bool = False
    spec_decoding: str = "none"
    fingerprint: str = ""
    isl: int | None = None
    osl: int | None = None

    def __post_init__(self) -> None:
        for name in ("tp", "conc", "pp", "dcp", "pcp", "ep"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")

    @property
    def num_gpus(self) -> int:
        """InferenceX's per-GPU denominator: TP x PP x prefill context parallel size."""
        return self.tp * self.pp * self.pcp

    @property
    def exp_name(self) -> str:
        if self.isl is not None and self.osl is not None:
            return f"{self.model_prefix}_{_lengths(self.isl, self.osl)}"
        spec = f"_spec-{self.spec_decoding}" if self.spec_decoding != "none" else ""
        return f"{self.model_prefix}_tp{self.tp}_conc{self.conc}_kvnone{spec}"

    @property
    def result_filename(self) -> str:
        """The file name without ``.json``, as InferenceX's ``RESULT_FILENAME``."""
        dpa = "true" if self.dp_attention else "false"
        name = (
            f"{self.exp_name}_{self.precision}_{self.framework}"
            f"_tp{self.tp}-pp{self.pp}-dcp{self.dcp}-pcp{self.pcp}-ep{self.ep}-dpa{dpa}"
            f"_disagg-false_spec-{self.spec_decoding}_conc{self.conc}_{self.runner}"
        )
        if self.fingerprint:
            name += f"_recipe-{self.fingerprint[:16]}"
        return name


def _lengths(isl: int, osl: int) -> str:
    """``1k8k`` for whole thousands of tokens (1024 each), else ``256-32``."""
    if isl % 1024 == 0 and osl % 1024 == 0:
        return f"{isl // 1024}k{osl // 1024}k"
    return f"{isl}-{osl}"


def shape_of(
    point: Point, *, runner: str | None = None, engines: EngineRegistry | None = None
) -> PointShape:
    """The shape of an agentic point; ``runner`` names the machine (InferenceX uses the CI
    runner's name), else ``$RUNNER_NAME``, else the recipe's runner label.

    Parallelism other than TP, whether attention is data parallel and the framework name are
    the engine adapter's answers, read from the recipe's engine args as the engine takes them.
    TP is the point's, the GPU count, as InferenceX's ``tp`` is for its DP-attention arms.
    """
    recipe = point.recipe
    adapter = (engines or installed()).adapter_for(point)
    sizes = adapter.parallelism(point)
    spec, _ = speculation(point)
    return PointShape(
        model_prefix=recipe.model.prefix,
        precision=recipe.model.precision,
        framework=adapter.inferencex_framework or recipe.engine.name,
        tp=point.tp,
        conc=point.concurrency,
        runner=runner or environment().runner_name or recipe.runner,
        pp=sizes.pp,
        dcp=sizes.dcp,
        pcp=sizes.pcp,
        ep=sizes.ep,
        dp_attention=adapter.dp_attention(point),
        spec_decoding=spec.method if spec is not None else "none",
        fingerprint=point.fingerprint,
        isl=point.isl,
        osl=point.osl,
    )
