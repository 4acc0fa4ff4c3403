"""ATOM (ROCm/ATOM): ``python3 -m atom.entrypoints.openai_server`` on AMD GPUs.

The command is the one InferenceX's ATOM scripts run: ``--model``, ``--server-port`` and
``-tp``, then the recipe's own flags (ATOM's parser takes kebab and snake spellings alike), and
for speculation ``--method`` with ``--num-speculative-tokens`` (and ``--draft-model`` for a
separate draft). ATOM has no flag to bind a host or rename the served model: it listens on every
address and serves the model under its ``--model``, so an ATOM recipe's ``model.served-name`` is
what its requests name and nothing in argv.

ATOM counts speculation in Prometheus series (``atom/entrypoints/openai/metrics.py``): draft
tokens, accepted draft tokens, and decode steps labelled by how many drafts each accepted. A
step is a verify step, so AL = 1 + accepted / steps, which is the engine's own
``atom:mtp_average_tokens_per_forward``. Forced acceptance is a flag, the AL itself. No endpoint
shows a templated prompt, so the rendered-prompt check is skipped.

ATOM is not published on a package registry and its parser imports its model engine, so
``infx engine check`` checks its commands against the option set read from the pinned release's
source (:mod:`pytest_infx.engines.optionset`); a release whose source was not read is listed as
unchecked, saying how to read it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from pytest_infx.engines import optionset
from pytest_infx.engines.base import (
    MODEL,
    PORT,
    SPECULATIVE,
    TP,
    Builtin,
    ParallelFlags,
    PlanRequest,
    ServerArgs,
    flags,
    speculation,
)
from pytest_infx.engines.optionset import OptionSet
from pytest_infx.engines.spec import (
    Snapshot,
    SpecCounters,
    SyntheticSetting,
    number,
)
from pytest_infx.recipes.owned import OwnedFlags

IMAGE_COMMAND = ("python3", "-m", "atom.entrypoints.openai_server")
DRAFT_TOKENS = "atom:mtp_draft_tokens_total"
ACCEPTED = "atom:mtp_accepted_tokens_total"
STEPS = "atom:mtp_decode_steps_total"
STEP_LABEL = "accepted_tokens"
FORCED = "the synthetic acceptance the golden curve sets"
OWNED: Final[OwnedFlags] = {
    "model": MODEL,
    "server-port": PORT,
    "tp": TP,
    "tensor-parallel-size": TP,
    "method": SPECULATIVE,
    "num-speculative-tokens": SPECULATIVE,
    "draft-model": SPECULATIVE,
    "spec-decode-acceptance-length": FORCED,
    "spec-decode-acceptance-rate": FORCED,
}
"""The flags the plan sets, under both of ATOM's spellings (``-tp`` is
``--tensor-parallel-size``; snake case reads as kebab, see :func:`canonical`)."""
PARALLEL: Final = ParallelFlags(
    ep=("expert-parallel-size", "ep-size", "ep"),
    dp=("data-parallel-size", "dp-size", "dp"),
)


def synthetic(al: float, k: int) -> SyntheticSetting:
    """ATOM is forced to the acceptance length itself, bonus token included."""
    return SyntheticSetting(
        engine="atom", al=al, k=k, argv=("--spec-decode-acceptance-length", number(al))
    )


def speculative_flags(method: str, k: int, draft: str | None) -> list[str]:
    argv = ["--method", method, "--num-speculative-tokens", str(k)]
    return argv if draft is None else [*argv, "--draft-model", draft]


def step_counts(snapshot: Snapshot) -> dict[int, float]:
    """Decode steps by the number of drafts each accepted; a label that is not a count is left
    out, as it says nothing about a position."""
    out: dict[int, float] = {}
    for label, value in snapshot.by_label(STEPS, STEP_LABEL).items():
        if label.isdigit():
            out[int(label)] = out.get(int(label), 0.0) + value
    return out


def accepted_per_position(steps: Mapping[int, float]) -> tuple[float, ...]:
    """Position i's accepted drafts are the steps that accepted more than i of them."""
    if not steps:
        return ()
    return tuple(
        sum(count for accepted, count in steps.items() if accepted > i) for i in range(max(steps))
    )


def release_names(version: str | None) -> list[str]:
    """The option-set names a pinned ATOM version may go by, most specific first.

    InferenceX pins ATOM by image tag, and a tag carries the release at its end after the base
    stack (``..._atom0.1.3``, ``..._atom0.1.2.post``, ``..._glm52_agentic_0813``,
    ``nightly_202607231538``), so a recipe may state the whole tag or just the release; each
    ``_``-joined tail of the tag is tried, with the ``atom`` prefix and a ``.post`` suffix off
    (``-`` read as ``_``: no release name has one, and a recipe may write ``nightly-2026...``).
    """
    if not version:
        return []
    tag = version.rsplit(":", 1)[-1].split("@", 1)[0].lstrip("v").replace("-", "_")
    parts = tag.split("_")
    names: list[str] = []
    for start in range(len(parts)):
        tail = "_".join(parts[start:])
        for name in (tail, tail.removeprefix("atom")):
            for candidate in (name, re.sub(r"\.post\d*$", "", name)):
                if candidate and candidate not in names:
                    names.append(candidate)
    return names


class AtomAdapter(Builtin):
    name = "atom"
    inferencex_framework: str | None = "atom"
    image_command = IMAGE_COMMAND
    owned = OWNED
    parallel_flags = PARALLEL

    def arguments(self, asked: PlanRequest) -> ServerArgs:
        point, paths = asked.point, asked.paths
        recipe = point.recipe
        argv = ["--model", paths.target, "--server-port", "{port}", "-tp", str(point.tp)]
        argv += flags(recipe.engine.args, key=recipe.key, owned=OWNED)
        spec, k = speculation(point)
        if spec is not None and k is not None:
            argv += speculative_flags(spec.method, k, paths.draft)
            argv += flags(spec.settings, key=recipe.key, owned=OWNED)
            if asked.synthetic is not None:
                argv += asked.synthetic.argv
        return ServerArgs(argv, dict(recipe.engine.env), k)

    def speculative_block(
        self, prefix: str, found: Mapping[str, str | None], curves: Mapping[str, str]
    ) -> str | None:
        """``--method mtp`` with its token count, the model's own head, where it has a curve."""
        steps = found.get("--num-speculative-tokens")
        if found.get("--method") != "mtp" or "--draft-model" in found or prefix not in curves:
            return None
        if steps is None or not steps.isdigit():
            return None
        return f"{{method: mtp, draft-length: {steps}, golden: {curves[prefix]}}}"

    def option_set(self, version: str | None) -> OptionSet | None:
        for release in release_names(version):
            found = optionset.load(self.name, release)
            if found is not None:
                return found
        return None

    def synthetic(self, al: float, k: int) -> SyntheticSetting:
        return synthetic(al, k)

    def spec_counters(self, snapshot: Snapshot) -> SpecCounters:
        """Steps are summed over the ``accepted_tokens`` label; accepted and draft tokens are
        ATOM's own counters, which exclude the bonus token, so AL = 1 + accepted / steps."""
        if not snapshot.series:
            return SpecCounters(engine=None, empty=True)
        steps = snapshot.total(STEPS)
        return SpecCounters(
            engine=self.name if steps is not None else None,
            drafts=steps,
            draft_tokens=snapshot.total(DRAFT_TOKENS),
            accepted=snapshot.total(ACCEPTED),
            accepted_per_pos=accepted_per_position(step_counts(snapshot)),
            non_finite=snapshot.non_finite((STEPS, DRAFT_TOKENS, ACCEPTED)),
            series={
                "drafts": STEPS,
                "draft_tokens": DRAFT_TOKENS,
                "accepted": ACCEPTED,
                "accepted_per_pos": f"{STEPS}{{{STEP_LABEL}}}",
            },
        )
