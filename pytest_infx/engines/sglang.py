"""SGLang: ``python3 -m sglang.launch_server``.

SGLang answers 503 while starting. Its ``/health`` normally runs a one-token generation, which
would add to the speculative counters between our snapshots, so the server is started with that
generation turned off. Draft length k maps to ``--speculative-num-steps k`` and
``--speculative-num-draft-tokens k+1`` with top-k 1 (SGLang forces that relation); DFlash has a
single step and takes the block through num-draft-tokens. SGLang's ``/tokenize`` takes text, not
chat messages, so the server cannot show how it templates a request.

Flag spellings change between releases and SGLang's parser is a plain ``argparse`` parser, so
a spelling a release dropped is not ignored: it is an ambiguous prefix and the server exits
before it starts. :data:`RELEASES` says which spelling each release takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from pytest_infx.engines.base import (
    ADMISSION,
    HOST,
    MODEL,
    PORT,
    SERVED_NAME,
    SPECULATIVE,
    TP,
    Builtin,
    ParserEnv,
    PlanRequest,
    ServerArgs,
    admission_limit,
    flags,
    release_row,
    speculation,
    version_tuple,
)
from pytest_infx.engines.spec import (
    RequestSpecMetrics,
    Snapshot,
    SpecCounters,
    SyntheticSetting,
    json_hist,
    json_int,
    json_num,
    number,
)
from pytest_infx.recipes.owned import OwnedFlags
from pytest_infx.recipes.schema import Recipe, Speculative

if TYPE_CHECKING:
    from pytest_infx.envs.toolenv import ToolEnvSpec

IMAGE_COMMAND = ("python3", "-m", "sglang.launch_server")
OWNED: Final[OwnedFlags] = {
    "model": MODEL,
    "model-path": MODEL,
    "served-model-name": SERVED_NAME,
    "host": HOST,
    "port": PORT,
    "tensor-parallel-size": TP,
    "tp": TP,
    "tp-size": TP,
    "speculative-algorithm": SPECULATIVE,
    "speculative-draft-model-path": SPECULATIVE,
    "speculative-num-steps": SPECULATIVE,
    "speculative-eagle-topk": SPECULATIVE,
    "speculative-num-draft-tokens": SPECULATIVE,
    "enable-metrics": "the plugin (it reads the speculative counters)",
}
"""The flags the plan sets, under the aliases SGLang's parser takes (``--model`` for
``--model-path``, ``--tp-size`` for ``--tensor-parallel-size``)."""
OWNED_AGENTIC: Final[OwnedFlags] = {
    "max-running-requests": ADMISSION,
    "cuda-graph-max-bs": ADMISSION,
    "cuda-graph-max-bs-decode": ADMISSION,
}
"""An agentic server's admission, and the CUDA-graph batch size under each release's
spelling (:data:`RELEASES`)."""
QUIET_HEALTH = {"SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION": "false"}
SIMULATE_LEN = "SGLANG_SIMULATE_ACC_LEN"
SIMULATE_METHOD = "SGLANG_SIMULATE_ACC_METHOD"
SIMULATE_TOKEN_MODE = "SGLANG_SIMULATE_ACC_TOKEN_MODE"
VERIFY = "sglang:spec_verify_calls_total"
GENERATION = "sglang:generation_tokens_total"
DETAILS_FIELD = "return_spec_tokens_details"
PARSER_DEPS: Final = (
    "torch==2.13.0",
    "triton==3.9.0",
    "numpy==2.3.5",
    "orjson==3.13.0",
    "psutil==7.2.2",
    "pybase64==1.5.1",
    "requests==2.34.2",
    "packaging==26.4",
    "pillow==13.0.0",
    "starlette==1.10.0",
    "msgspec==0.23.0",
    "pydantic==2.14.4",
    "pyzmq==27.3.0",
    "tqdm==4.70.1",
    "ipython==9.18.1",
    "aiohttp==3.14.5",
)
"""What ``sglang.srt.server_args`` imports, installed next to ``sglang --no-deps``: SGLang's own
requirements are CUDA kernels that no CPU machine can install, and its parser needs none of
them. torchvision must stay out: the index's build is CUDA-only and fails to import."""


@dataclass(frozen=True)
class SglangRelease:
    """What one SGLang release (and every later one up to the next row) accepts.

    ``cuda_graph_bs`` is the flag that caps the decode CUDA-graph batch size;
    ``attn_dp_size`` whether DP attention is sized by ``--attn-dp-size`` (else by
    ``--enable-dp-attention`` with ``--dp-size``); ``source`` where the row was read.
    """

    since: tuple[int, ...]
    cuda_graph_bs: str
    attn_dp_size: bool
    source: str


RELEASES: Final[tuple[SglangRelease, ...]] = (
    SglangRelease((0,), "--cuda-graph-max-bs", False, "0.5.12, 0.5.13 server_args.py: no split"),
    SglangRelease(
        (0, 5, 14),
        "--cuda-graph-max-bs-decode",
        False,
        "0.5.14-0.5.16 server_args.py: --cuda-graph-max-bs is a deprecated alias of the decode"
        " flag (0.5.13 has only --cuda-graph-max-bs)",
    ),
    SglangRelease(
        (0, 5, 21),
        "--cuda-graph-max-bs-decode",
        False,
        "0.5.20, 0.5.21 arg_groups: only --cuda-graph-max-bs-decode/-prefill; the old name is"
        " an ambiguous prefix",
    ),
    SglangRelease(
        (0, 5, 23),
        "--cuda-graph-max-bs-decode",
        True,
        "0.5.23 arg_groups: --attn-dp-size; --enable-dp-attention deprecated",
    ),
)


def release(version: str | None) -> SglangRelease:
    return release_row(RELEASES, version)


def speculative_flags(spec: Speculative, k: int, draft: str | None) -> list[str]:
    method = spec.method.upper()
    argv = ["--speculative-algorithm", method]
    if draft is not None:
        argv += ["--speculative-draft-model-path", draft]
    if method == "DFLASH":
        argv += ["--speculative-num-draft-tokens", str(k + 1)]
    else:
        argv += ["--speculative-num-steps", str(k), "--speculative-eagle-topk", "1"]
        argv += ["--speculative-num-draft-tokens", str(k + 1)]
    for name, value in spec.settings.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv


def synthetic(al: float, k: int) -> SyntheticSetting:
    """SGLang forces acceptance through environment variables read at import.

    ``SGLANG_SIMULATE_ACC_LEN`` counts the bonus token (it is sampled in [1, k+1]);
    the token mode's default ``fixed`` writes token id 100 into every accepted and bonus slot
    (``generate_simulated_accept_index`` in ``speculative/spec_utils.py``), so the output would
    be one repeated token: ``real-draft-token`` keeps the draft's and the target's tokens.
    """
    return SyntheticSetting(
        engine="sglang",
        al=al,
        k=k,
        env={
            SIMULATE_LEN: number(al),
            SIMULATE_METHOD: "match-expected",
            SIMULATE_TOKEN_MODE: "real-draft-token",
        },
    )


PARSER_FALLBACK = "0.5.21"
"""The release whose parser stands in for one that does not import on a CPU machine: SGLang
0.5.16 and 0.5.17 import ``torchvision`` from ``server_args``, whose package-index build is a
CUDA one that fails to import here; 0.5.21's parser has every flag those releases' recipes use
that the table above does not rewrite."""


def parser_spec(version: str) -> ToolEnvSpec:
    """The cached environment that holds SGLang ``version``'s argument parser."""
    # the tool-environment machinery loads only when a parser check runs, never for a plan
    from pytest_infx.envs.toolenv import ToolEnvSpec

    return ToolEnvSpec(
        name="sglang-parser",
        version=version,
        requirements=PARSER_DEPS,
        no_deps=(f"sglang=={version}",),
        uninstall=("torchvision",),
        check=("python", "-c", "import sglang.srt.server_args"),
    )


class SglangAdapter(Builtin):
    name = "sglang"
    inferencex_framework: str | None = "sglang"
    image_command = IMAGE_COMMAND
    owned = OWNED
    owned_agentic = OWNED_AGENTIC

    def arguments(self, asked: PlanRequest) -> ServerArgs:
        point, paths, synthetic = asked.point, asked.paths, asked.synthetic
        recipe = point.recipe
        engine = recipe.engine
        argv = ["--model-path", paths.target, "--served-model-name", recipe.model.served_name]
        argv += ["--host", "127.0.0.1", "--port", "{port}", "--tp-size", str(point.tp)]
        argv += ["--enable-metrics"]
        argv += flags(engine.args, key=recipe.key, owned=OWNED)
        env = {**QUIET_HEALTH, **engine.env}
        spec, k = speculation(point)
        if spec is not None and k is not None:
            argv += speculative_flags(spec, k, paths.draft)
            if synthetic is not None:
                env.update(synthetic.env)
        limit = admission_limit(point)
        if limit is not None:
            argv += self.admission_argv(limit, engine.version)
        return ServerArgs(argv, env, k)

    def speculative_block(
        self, prefix: str, found: Mapping[str, str | None], curves: Mapping[str, str]
    ) -> str | None:
        """EAGLE/NEXTN MTP flags as :func:`speculative_flags` writes them back (top-k 1,
        steps + 1 draft tokens, no separate draft) where the model's head has a curve."""
        method = found.get("--speculative-algorithm")
        steps = found.get("--speculative-num-steps")
        if prefix not in curves or method not in ("EAGLE", "NEXTN"):
            return None
        if "--speculative-draft-model-path" in found:
            return None
        if steps is None or not steps.isdigit() or found.get("--speculative-eagle-topk") != "1":
            return None
        if found.get("--speculative-num-draft-tokens") != str(int(steps) + 1):
            return None
        return f"{{method: {method.lower()}, draft-length: {steps}, golden: {curves[prefix]}}}"

    def admission_argv(self, limit: int, version: str | None) -> list[str]:
        """An AgentX server admits ``limit`` requests at once; its CUDA graphs cover that
        batch size, under the flag the pinned release spells."""
        row = release(version)
        return ["--max-running-requests", str(limit), row.cuda_graph_bs, str(limit)]

    def synthetic(self, al: float, k: int) -> SyntheticSetting:
        return synthetic(al, k)

    def spec_counters(self, snapshot: Snapshot) -> SpecCounters:
        """SGLang counts verify calls and generated tokens, both when a request finishes
        (``observe_one_finished_request``), and has no accepted-token counter: accepted is
        generated - verify calls, which holds each request's first token (from prefill, not
        from a verify step). AL = generated / verify calls, as SGLang's own per-request
        ``spec_accept_length`` = completion tokens / verify calls."""
        if not snapshot.series:
            return SpecCounters(engine=None, empty=True)
        verify = snapshot.total(VERIFY)
        return SpecCounters(
            engine=self.name if verify is not None else None,
            drafts=verify,
            generation_tokens=snapshot.total(GENERATION),
            non_finite=snapshot.non_finite((VERIFY, GENERATION)),
            series={"drafts": VERIFY, "generation_tokens": GENERATION, "accepted": GENERATION},
            prefill_in_accepted=True,
        )

    def request_fields(self) -> Mapping[str, object]:
        """``sglext.spec_tokens_details`` is sent only when the request asks for it
        (``ChatCompletionRequest.return_spec_tokens_details``, default false)."""
        return {DETAILS_FIELD: True}

    def request_spec(self, frame: Mapping[str, object]) -> RequestSpecMetrics | None:
        """``sglext.spec_tokens_details``; accepted is counted as the counters count it,
        completion tokens - verify calls (``spec_accept_length`` x ``spec_verify_ct`` is the
        completion), so the per-request and the counter AL answer the same question."""
        sglext = frame.get("sglext")
        details = sglext.get("spec_tokens_details") if type(sglext) is dict else None
        if type(details) is not dict:
            return None
        steps = json_int(details.get("spec_verify_ct"))
        correct = json_int(details.get("spec_num_correct_drafts"))
        length = json_num(details.get("spec_accept_length"))
        if steps is None or correct is None:
            return None
        accepted = correct + 1 if not length else round(length * steps) - steps
        return RequestSpecMetrics(
            source=self.name,
            num_steps=steps,
            num_accepted=accepted,
            num_drafted=json_int(details.get("spec_num_proposed_drafts")),
            mean_acceptance_length=length,
            histogram=json_hist(details.get("spec_correct_drafts_histogram")),
        )

    def attention_tp(self, recipe: Recipe, tp: int) -> int | None:
        """SGLang shards attention over TP / attention-DP: ``--attn-dp-size`` from 0.5.23,
        else ``--dp-size`` with ``--enable-dp-attention``."""
        return max(tp // attention_dp(recipe), 1)

    def parser_env(self, version: str | None) -> ParserEnv | None:
        numbers = version_tuple(version)
        if numbers is None:
            return None
        exact = ".".join(str(n) for n in numbers)
        closest = ParserEnv(
            parser_spec(PARSER_FALLBACK), "sglang_parse.py.txt", f"SGLang {PARSER_FALLBACK}"
        )
        return ParserEnv(
            parser_spec(exact),
            "sglang_parse.py.txt",
            f"SGLang {exact}",
            fallback=None if exact == PARSER_FALLBACK else closest,
        )


_DP_ATTENTION = ("enable-dp-attention", "enable_dp_attention")
_DP_SIZE = ("dp", "dp-size", "dp_size", "data-parallel-size")
_ATTN_DP_SIZE = ("attn-dp-size", "attn_dp_size")


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def attention_dp(recipe: Recipe) -> int:
    """The attention data-parallel size a recipe's args give its SGLang server."""
    args = recipe.engine.args
    if release(recipe.engine.version).attn_dp_size:
        for name in _ATTN_DP_SIZE:
            found = _positive(args.get(name))
            if found is not None:
                return found
    if not any(args.get(name) is True for name in _DP_ATTENTION):
        return 1
    for name in _DP_SIZE:
        found = _positive(args.get(name))
        if found is not None:
            return found
    return 1
