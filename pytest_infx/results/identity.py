"""What InferenceX calls a config, and the point of it a result is of: one identity per point,
built once when the point is measured and carried on its record.

The serving setup (model, hardware, framework and its version, precision, speculation,
parallelism) is what the results history keys its rows on, so a baseline is looked up by what
was served and not by the recipe's name, which a rename would change; it is the record's
``config`` field. The point's load and place (concurrency, lengths, the runner's name, the
recipe's fingerprint, the checkpoint and image) complete it into InferenceX's result file name
and the header of its processed files; they are not part of the stored field, which keeps the
shape it had before this identity carried them, so a record read back has them unset.

InferenceX's workflow names a single-node result
``<exp-name>_<precision>_<framework>_tp<TP>-pp<PP>-dcp<DCP>-pcp<PCP>-ep<EP>-dpa<DPA>_disagg-false
_spec-<SPEC>_conc<CONC>_<runner>[_recipe-<fingerprint>].json`` (``benchmark-tmpl.yml``), with
``exp-name = <model prefix>_tp<TP>_conc<CONC>_kvnone[_spec-<SPEC>]`` for an AgentX point
(``generate_sweep_configs.py``) and ``<model prefix>_<ISL><OSL>`` for a fixed-seq-len one, with
lengths in thousands of tokens where both are whole (``1k8k``), else ``<ISL>-<OSL>``. Its
aggregation and dashboards find a point by that name, so ours carries the same one.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Positive = Annotated[int, Field(ge=1)]


class ConfigIdentity(BaseModel):
    """One point's identity: the stored serving config and, unstored, its load and place."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, protected_namespaces=())

    model_prefix: str
    hardware: str
    framework: str
    engine_version: str
    precision: str
    spec_method: str
    tp: Positive
    ep: Positive = 1
    pp: Positive = 1
    dcp: Positive = 1
    pcp: Positive = 1
    dp_attention: bool = False
    disaggregated: str | None = None
    """A multinode (prefill/decode) config's worker sizes, ``p1-tp8-ep8-dpafalse_d2-...``:
    part of its identity, since two splits of one GPU count are different configs."""
    disaggregated_gpus: Positive | None = None
    """A multinode config's prefill and decode GPUs together."""
    runner: str = Field(default="", exclude=True)
    """The machine's name (InferenceX uses the CI runner's), of which ``hardware`` is the type."""
    conc: Positive | None = Field(default=None, exclude=True)
    isl: Positive | None = Field(default=None, exclude=True)
    osl: Positive | None = Field(default=None, exclude=True)
    fingerprint: str = Field(default="", exclude=True)
    """InferenceX's ``RECIPE_FINGERPRINT``: the recipe point's fingerprint."""
    model: str = Field(default="", exclude=True)
    """The checkpoint's hub id."""
    image: str | None = Field(default=None, exclude=True)

    @property
    def gpus(self) -> int:
        """InferenceX's per-GPU denominator: TP x PP x prefill context parallel size (a
        multinode config's prefill and decode GPUs)."""
        return self.disaggregated_gpus or self.tp * self.pp * self.pcp

    @property
    def topology(self) -> str:
        if self.disaggregated is not None:
            return self.disaggregated
        dpa = "true" if self.dp_attention else "false"
        return f"tp{self.tp}-pp{self.pp}-dcp{self.dcp}-pcp{self.pcp}-ep{self.ep}-dpa{dpa}"

    def history_key(self) -> dict[str, object]:
        """The columns the results history finds this config's row by."""
        return {
            "model_prefix": self.model_prefix,
            "hardware": self.hardware,
            "framework": self.framework,
            "engine_version": self.engine_version,
            "precision": self.precision,
            "spec_method": self.spec_method,
            "topology": self.topology,
            "tp": self.tp,
            "ep": self.ep,
            "dp_attention": self.dp_attention,
            "gpus": self.gpus,
        }

    def exp_name(self) -> str:
        """InferenceX's ``EXP_NAME`` of the point."""
        if self.isl is not None and self.osl is not None:
            return f"{self.model_prefix}_{_lengths(self.isl, self.osl)}"
        spec = f"_spec-{self.spec_method}" if self.spec_method != "none" else ""
        return f"{self.model_prefix}_tp{self.tp}_conc{self._conc()}_kvnone{spec}"

    def file_name(self) -> str:
        """The result file name without ``.json``, as InferenceX's ``RESULT_FILENAME``."""
        if not self.runner:
            raise ValueError(
                "this config identity has no runner (one read back from a record keeps only "
                "the config): its result file name is the one the record names"
            )
        dpa = "true" if self.dp_attention else "false"
        name = (
            f"{self.exp_name()}_{self.precision}_{self.framework}"
            f"_tp{self.tp}-pp{self.pp}-dcp{self.dcp}-pcp{self.pcp}-ep{self.ep}-dpa{dpa}"
            f"_disagg-false_spec-{self.spec_method}_conc{self._conc()}_{self.runner}"
        )
        if self.fingerprint:
            name += f"_recipe-{self.fingerprint[:16]}"
        return name

    def _conc(self) -> int:
        if self.conc is None:
            raise ValueError("this config identity has no concurrency: it names no point")
        return self.conc


def _lengths(isl: int, osl: int) -> str:
    """``1k8k`` for whole thousands of tokens (1024 each), else ``256-32``."""
    if isl % 1024 == 0 and osl % 1024 == 0:
        return f"{isl // 1024}k{osl // 1024}k"
    return f"{isl}-{osl}"
