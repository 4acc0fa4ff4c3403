#!/usr/bin/env python3
"""A stand-in for `vllm serve`, started by the plugin like the real engine, for faults on demand.

A real engine cannot be told to die at start, never become ready, drop the thinking switch, return
nothing, fail some requests or reset its counters in the middle of a pass; this program can, and
otherwise speaks the vLLM 0.33 surface the plugin relies on: connections are refused until it is
ready, `/health`, `/v1/models`, `/tokenize` + `/detokenize` of a ChatML prompt, streamed
`/v1/chat/completions` and `/v1/completions` in vLLM's SSE shapes, and Prometheus `/metrics`.

Acceptance is deterministic: step i of every request accepts `min(pattern[i % len], k)` draft
tokens (`--accept`, default 3,0) and every request runs whole cycles of the pattern, so the AL of
every request, the token-weighted per-request AL and the counter AL are all
`1 + mean(min(p, k) for p in pattern)`.

It accepts the argv the plugin builds (`--model`, `--served-model-name`, `--host`, `--port`,
`--tensor-parallel-size`, `--speculative-config JSON`, any other `--flag [value]`) plus its own:
`--record FILE` (one JSON line per start), `--accept P,Q,...`, `--step-delay S`,
`--start-delay S` and `--fault NAME[=N]` (repeatable, or comma-separated in the environment
variable INFX_FAKE_VLLM_FAULTS):

    die-at-start      log a fatal error and exit 1 before listening
    never-ready       never listen (the launcher times out)
    ignore-thinking   drop chat_template_kwargs: no <think> in the prompt, no reasoning
    empty-output[=N]  the first N chat requests (default all) generate nothing
    fail-requests=N   the first N chat requests get HTTP 500
    reset-counters[=N] counters start at a warm-up offset and drop to 0 at chat request N (2)
    crash-after=N     the process exits when chat request N+1 arrives
    ignore-eos-off    completions stop at half their max_tokens although ignore_eos is sent

The speculative counters are named ``vllm:spec_decode_*`` unless INFX_FAKE_SPEC_PREFIX gives
another prefix (an engine from another package that reads its own counters).

Standard library only, so it starts in milliseconds with any Python.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS_ENV = "INFX_FAKE_VLLM_FAULTS"
FAULT_NAMES = frozenset(
    {
        "die-at-start",
        "never-ready",
        "ignore-thinking",
        "empty-output",
        "fail-requests",
        "reset-counters",
        "crash-after",
        "ignore-eos-off",
    }
)
DEFAULT_PATTERN: tuple[int, ...] = (3, 0)
WARMUP_DRAFTS = 1000
THINK_OPEN = "<think>\n"
SPEC_PREFIX = os.environ.get("INFX_FAKE_SPEC_PREFIX", "vllm:spec_decode_")


class UsageError(ValueError):
    """An argv the stand-in cannot run with; printed as one line before exiting 2."""


@dataclass(frozen=True)
class Options:
    port: int
    host: str = "127.0.0.1"
    model: str = "model"
    served_name: str = "model"
    any_model: bool = False
    """Whether a request may name any model (an engine with no served-model name)."""
    k: int | None = None
    spec_method: str | None = None
    reasoning_parser: str | None = None
    per_request_metrics: str = "none"
    default_kwargs: Mapping[str, Any] = field(default_factory=dict)
    max_model_len: int = 2048
    pattern: tuple[int, ...] = DEFAULT_PATTERN
    step_delay_s: float = 0.0
    start_delay_s: float = 0.0
    record: str | None = None
    faults: Mapping[str, int | None] = field(default_factory=dict)

    def fault(self, name: str) -> bool:
        return name in self.faults

    def fault_n(self, name: str, default: int | None) -> int | None:
        value = self.faults.get(name)
        return default if value is None else value


def flag_pairs(argv: Sequence[str]) -> list[tuple[str, str | None]]:
    """`--name value` or a bare `--name`; a value never starts with `--`."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--"):
            raise UsageError(f"unexpected argument {token!r}; flags are --name [value]")
        name, eq, inline = token[2:].partition("=")
        if eq:
            out.append((name, inline))
            i += 1
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            out.append((name, argv[i + 1]))
            i += 2
        else:
            out.append((name, None))
            i += 1
    return out


def parse_faults(values: Sequence[str]) -> dict[str, int | None]:
    faults: dict[str, int | None] = {}
    for value in values:
        for part in value.split(","):
            name, eq, number = part.strip().partition("=")
            if not name:
                continue
            if name not in FAULT_NAMES:
                known = ", ".join(sorted(FAULT_NAMES))
                raise UsageError(f"unknown fault {name!r}; known faults: {known}")
            if eq and not number.isdigit():
                raise UsageError(f"fault {name}={number!r}: the count must be a whole number")
            faults[name] = int(number) if eq else None
    return faults


def parse_argv(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> Options:
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    faults: list[str] = [env[FAULTS_ENV]] if env.get(FAULTS_ENV) else []
    for name, value in flag_pairs(argv):
        if name == "fault":
            faults.append(value or "")
            continue
        if name in ("port", "max-model-len"):
            if value is None or not value.isdigit():
                raise UsageError(f"--{name} needs a whole number, got {value!r}")
            values[name] = int(value)
        elif name in ("step-delay", "start-delay"):
            values[name] = float(value or "0")
        else:
            values[name] = value
    if "port" not in values:
        raise UsageError("--port is required")
    k: int | None = None
    method: str | None = None
    if values.get("speculative-config"):
        try:
            spec = json.loads(values["speculative-config"])
        except ValueError as exc:
            raise UsageError(f"--speculative-config is not JSON: {exc}") from None
        k = int(spec["num_speculative_tokens"])
        method = str(spec.get("method"))
    kwargs: dict[str, Any] = {}
    if values.get("default-chat-template-kwargs"):
        kwargs = json.loads(values["default-chat-template-kwargs"])
    pattern = DEFAULT_PATTERN
    if values.get("accept"):
        pattern = tuple(int(p) for p in str(values["accept"]).split(","))
    model = values.get("model") or "model"
    return Options(
        port=values["port"],
        host=values.get("host") or "127.0.0.1",
        model=model,
        served_name=values.get("served-model-name") or model,
        k=k,
        spec_method=method,
        reasoning_parser=values.get("reasoning-parser"),
        per_request_metrics=values.get("per-request-spec-decode-metrics") or "none",
        default_kwargs=kwargs,
        max_model_len=values.get("max-model-len", 2048),
        pattern=pattern,
        step_delay_s=values.get("step-delay", 0.0),
        start_delay_s=values.get("start-delay", 0.0),
        record=values.get("record"),
        faults=parse_faults(faults),
    )


def steps_for(pattern: Sequence[int], k: int, max_tokens: int) -> list[int]:
    """Accepted tokens per step: whole cycles of the pattern, as many as fit in `max_tokens`."""
    cycle = [min(p, k) for p in pattern]
    per_cycle = sum(a + 1 for a in cycle)
    return cycle * max(1, max_tokens // per_cycle)


def expected_al(pattern: Sequence[int], k: int) -> float:
    """The AL every source reports for draft length `k`."""
    cycle = [min(p, k) for p in pattern]
    return 1.0 + sum(cycle) / len(cycle)


def render_chatml(messages: Sequence[Mapping[str, Any]], *, thinking: bool) -> str:
    out = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    out += "<|im_start|>assistant\n"
    return out + (THINK_OPEN if thinking else "")


class Engine:
    """Counters and fault state, shared by the request threads under one lock."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.lock = threading.Lock()
        self.chat_requests = 0
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.successes = 0
        self.running = 0
        k = options.k or 0
        offset = WARMUP_DRAFTS if options.fault("reset-counters") else 0
        self.drafts = offset
        self.draft_tokens = offset * k
        self.accepted = offset * k // 2
        self.per_pos = [offset // 2] * k

    def thinking(self, kwargs: Mapping[str, Any] | None) -> bool:
        if self.options.fault("ignore-thinking"):
            return False
        merged = {**self.options.default_kwargs, **(kwargs or {})}
        return bool(merged.get("enable_thinking"))

    def admit(self) -> int:
        """Number this chat request, applying the faults that act on arrival."""
        with self.lock:
            self.chat_requests += 1
            n = self.chat_requests
            crash = self.options.fault_n("crash-after", None)
            if crash is not None and n > crash:
                say(f"ERROR EngineDeadError: stand-in crash-after={crash} at request {n}")
                os._exit(1)
            if self.options.fault("reset-counters") and n == self.options.fault_n(
                "reset-counters", 2
            ):
                say("WARNING engine restarted: counters reset (stand-in reset-counters)")
                k = self.options.k or 0
                self.drafts = self.draft_tokens = self.accepted = self.generation_tokens = 0
                self.per_pos = [0] * k
            self.running += 1
        return n

    def step(self, accepted: int) -> None:
        k = self.options.k or 0
        with self.lock:
            self.drafts += 1
            self.draft_tokens += k
            self.accepted += accepted
            for i in range(accepted):
                self.per_pos[i] += 1
            self.generation_tokens += accepted + 1

    def done(self, prompt_tokens: int, *, ok: bool) -> None:
        with self.lock:
            self.running -= 1
            self.prompt_tokens += prompt_tokens
            self.successes += 1 if ok else 0

    def metrics(self) -> str:
        labels = f'engine="0",model_name="{self.options.served_name}"'
        lines: list[str] = []

        def counter(name: str, doc: str, samples: list[tuple[str, float]]) -> None:
            lines.extend([f"# HELP {name} {doc}", f"# TYPE {name} counter"])
            lines.extend(f"{name}{{{labels}{extra}}} {value!r}" for extra, value in samples)

        with self.lock:
            gauge = "vllm:num_requests_running"
            lines += [f"# TYPE {gauge} gauge", f"{gauge}{{{labels}}} {float(self.running)!r}"]
            counter("vllm:prompt_tokens_total", "Prompt tokens.", [("", float(self.prompt_tokens))])
            counter(
                "vllm:generation_tokens_total",
                "Generation tokens.",
                [("", float(self.generation_tokens))],
            )
            counter(
                "vllm:request_success_total",
                "Finished requests.",
                [(',finished_reason="length"', float(self.successes))],
            )
            if self.options.k is not None:
                for name, value, doc in (
                    ("num_drafts", self.drafts, "Number of spec decoding drafts."),
                    ("num_draft_tokens", self.draft_tokens, "Number of draft tokens."),
                    ("num_accepted_tokens", self.accepted, "Number of accepted tokens."),
                ):
                    counter(f"{SPEC_PREFIX}{name}_total", doc, [("", float(value))])
                    created = f"{SPEC_PREFIX}{name}_created"
                    lines += [f"# TYPE {created} gauge", f"{created}{{{labels}}} {STARTED!r}"]
                counter(
                    f"{SPEC_PREFIX}num_accepted_tokens_per_pos_total",
                    "Accepted tokens per draft position.",
                    [(f',position="{i}"', float(v)) for i, v in enumerate(self.per_pos)],
                )
        return "\n".join(lines) + "\n"


STARTED = time.time()


def say(message: str) -> None:
    sys.stdout.write(f"(fake-vllm pid={os.getpid()}) {message}\n")
    sys.stdout.flush()


def make_handler(engine: Engine) -> type[BaseHTTPRequestHandler]:
    options = engine.options

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # uvicorn sets TCP_NODELAY: each frame leaves at once

        def log_message(self, format: str, *args: Any) -> None:
            say("INFO " + format % args)

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj: Any) -> None:
            self._send(status, json.dumps(obj).encode())

        def _error(self, status: int, kind: str, message: str) -> None:
            self._json(status, {"error": {"message": message, "type": kind, "code": status}})

        def _body(self) -> dict[str, Any] | None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._error(400, "BadRequestError", "the body is not JSON")
                return None
            if not isinstance(body, dict):
                self._error(400, "BadRequestError", "the body must be a JSON object")
                return None
            model = body.get("model")
            if model is not None and model != options.served_name and not options.any_model:
                self._error(404, "NotFoundError", f"The model `{model}` does not exist.")
                return None
            return body

        def do_GET(self) -> None:
            if self.path == "/health":
                self._send(200, b"")
            elif self.path == "/v1/models":
                card = {
                    "id": options.served_name,
                    "object": "model",
                    "created": int(STARTED),
                    "owned_by": "vllm",
                    "root": options.model,
                    "parent": None,
                    "max_model_len": options.max_model_len,
                    "permission": [],
                }
                self._json(200, {"object": "list", "data": [card]})
            elif self.path == "/version":
                self._json(200, {"version": "0.33.0+fake"})
            elif self.path == "/metrics":
                self._send(
                    200, engine.metrics().encode(), "text/plain; version=1.0.0; charset=utf-8"
                )
            else:
                self._error(404, "NotFoundError", f"no route GET {self.path}")

        def do_POST(self) -> None:
            body = self._body()
            if body is None:
                return
            if self.path == "/tokenize":
                self._tokenize(body)
            elif self.path == "/detokenize":
                tokens = body.get("tokens") or []
                self._json(200, {"prompt": "".join(chr(int(t)) for t in tokens)})
            elif self.path == "/v1/chat/completions":
                self._chat(body)
            elif self.path == "/v1/completions":
                self._completion(body)
            else:
                self._error(404, "NotFoundError", f"no route POST {self.path}")

        def _tokenize(self, body: Mapping[str, Any]) -> None:
            if "messages" in body:
                thinking = engine.thinking(body.get("chat_template_kwargs"))
                text = render_chatml(body["messages"], thinking=thinking)
                if not body.get("add_generation_prompt", True):
                    text = text.rsplit("<|im_start|>assistant\n", 1)[0]
            else:
                text = str(body.get("prompt", ""))
            tokens = [ord(c) for c in text]
            out: dict[str, Any] = {
                "count": len(tokens),
                "max_model_len": options.max_model_len,
                "tokens": tokens,
            }
            if body.get("return_token_strs"):
                out["token_strs"] = list(text)
            self._json(200, out)

        def _chat(self, body: Mapping[str, Any]) -> None:
            n = engine.admit()
            ok = False
            prompt = render_chatml(body.get("messages") or [], thinking=False)
            try:
                failing = options.fault_n("fail-requests", 0) or 0
                if n <= failing:
                    say(f"ERROR request {n} failed (stand-in fail-requests={failing})")
                    self._error(500, "InternalServerError", f"stand-in failure of request {n}")
                    return
                self._stream(body, n)
                ok = True
            finally:
                engine.done(len(prompt), ok=ok)

        def _stream(self, body: Mapping[str, Any], n: int) -> None:
            thinking = engine.thinking(body.get("chat_template_kwargs"))
            max_tokens = int(body.get("max_tokens") or 16)
            k = options.k
            empty = options.fault("empty-output") and n <= (
                options.fault_n("empty-output", None) or n
            )
            if empty:
                plan: list[int] = []
            elif k is None:
                plan = [0] * max_tokens
            else:
                plan = steps_for(options.pattern, k, max_tokens)
            rid = f"chatcmpl-fake-{n}"
            created = int(time.time())
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

            def frame(choices: list[Any], **extra: Any) -> None:
                obj = {
                    "id": rid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": options.served_name,
                    "choices": choices,
                    **extra,
                }
                self._chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

            first = {"role": "assistant", "content": ""}
            frame([{"index": 0, "delta": first, "logprobs": None, "finish_reason": None}])
            produced = 0
            split = options.reasoning_parser is not None
            for i, accepted in enumerate(plan):
                if options.step_delay_s:
                    time.sleep(options.step_delay_s)
                if k is not None:
                    engine.step(accepted)
                words = "".join(f" w{produced + j}" for j in range(accepted + 1))
                produced += accepted + 1
                answer = i == len(plan) - 1 and len(plan) > 1
                if not thinking:
                    delta = {"content": words}
                elif split:
                    delta = {"content": words} if answer else {"reasoning": words}
                else:
                    delta = {"content": ("</think>" if i == len(plan) - 1 else "") + words}
                frame([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])
            finish = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "length"}
            frame([{**finish, "stop_reason": None}])
            if (body.get("stream_options") or {}).get("include_usage"):
                prompt_tokens = len(render_chatml(body.get("messages") or [], thinking=thinking))
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "total_tokens": prompt_tokens + produced,
                    "completion_tokens": produced,
                }
                extra: dict[str, Any] = {"usage": usage}
                if k is not None and options.per_request_metrics != "none":
                    extra["metrics"] = {"speculative_decoding": request_metrics(plan, k)}
                frame([], **extra)
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _completion(self, body: Mapping[str, Any]) -> None:
            """vLLM's streamed text completion: one frame a decode step whose last token
            carries the finish reason, then the usage frame and ``[DONE]``."""
            n = engine.admit()
            prompt = str(body.get("prompt", ""))
            ok = False
            try:
                failing = options.fault_n("fail-requests", 0) or 0
                if n <= failing:
                    self._error(500, "InternalServerError", f"stand-in failure of request {n}")
                    return
                max_tokens = int(body.get("max_tokens") or 16)
                stops = options.fault("ignore-eos-off") or not body.get("ignore_eos")
                produced = max(1, max_tokens // 2) if stops else max_tokens
                rid, created = f"cmpl-fake-{n}", int(time.time())
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()

                def frame(choices: list[Any], **extra: Any) -> None:
                    obj = {
                        "id": rid,
                        "object": "text_completion",
                        "created": created,
                        "model": options.served_name,
                        "choices": choices,
                        **extra,
                    }
                    self._chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

                for i in range(produced):
                    if options.step_delay_s:
                        time.sleep(options.step_delay_s)
                    last = i == produced - 1
                    finish = ("stop" if stops else "length") if last else None
                    choice = {"index": 0, "text": f" w{i}", "logprobs": None}
                    frame([{**choice, "finish_reason": finish, "stop_reason": None}])
                if (body.get("stream_options") or {}).get("include_usage"):
                    usage = {
                        "prompt_tokens": len(prompt),
                        "total_tokens": len(prompt) + produced,
                        "completion_tokens": produced,
                    }
                    frame([], usage=usage)
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")
                ok = True
            finally:
                engine.done(len(prompt), ok=ok)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def request_metrics(plan: Sequence[int], k: int) -> dict[str, Any]:
    """vLLM's `metrics.speculative_decoding` (summary level) for one request."""
    steps = len(plan)
    accepted = sum(plan)
    histogram = [0] * (k + 1)
    for a in plan:
        histogram[a] += 1
    return {
        "mean_acceptance_length": 1 + accepted / steps if steps else 0.0,
        "draft_acceptance_rate": accepted / (steps * k) if steps else 0.0,
        "acceptance_histogram": histogram,
        "num_spec_steps": steps,
        "num_accepted_draft_tokens": accepted,
        "num_draft_tokens": steps * k,
        "num_spec_tokens": k,
        "per_step_accepted": None,
        "per_step_drafted": None,
    }


def record_start(
    options: Options, argv: Sequence[str], extra: Mapping[str, Any] | None = None
) -> None:
    """One line per start, appended in one write so parallel starts never interleave; ``extra``
    holds what another engine's stand-in read at start."""
    if not options.record:
        return
    line = {
        **(extra or {}),
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        "ppid": os.getppid(),
        "port": options.port,
        "k": options.k,
        "faults": dict(options.faults),
        "argv": list(argv),
        "started": STARTED,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
    }
    fd = os.open(options.record, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (json.dumps(line) + "\n").encode())
    finally:
        os.close(fd)


def serve(engine: Engine) -> int:
    """Serve ``engine`` until SIGTERM or SIGINT ends the process, as the engines end."""

    def stop(signum: int, _frame: object) -> None:
        say(f"INFO {signal.Signals(signum).name}: shutting down")
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    options = engine.options
    server = ThreadingHTTPServer((options.host, options.port), make_handler(engine))
    server.daemon_threads = True
    say(f"INFO serving on {options.host}:{options.port}")
    server.serve_forever()
    return 0


def main(argv: Sequence[str]) -> int:
    try:
        options = parse_argv(argv)
    except UsageError as exc:
        sys.stderr.write(f"fake-vllm: error: {exc}\n")
        return 2
    record_start(options, argv)
    say(f"INFO vLLM API server version 0.33.0+fake, model {options.model!r}, k {options.k}")

    def stop(signum: int, _frame: object) -> None:
        say(f"INFO {signal.Signals(signum).name}: shutting down")
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    say("INFO loading weights")
    time.sleep(options.start_delay_s)
    if options.fault("die-at-start"):
        say("ERROR RuntimeError: CUDA out of memory while loading weights (stand-in die-at-start)")
        return 1
    if options.fault("never-ready"):
        say("INFO compiling graphs (stand-in never-ready: this never ends)")
        while True:
            time.sleep(3600)
    engine = Engine(options)
    try:
        server = ThreadingHTTPServer((options.host, options.port), make_handler(engine))
    except OSError as exc:
        say(f"ERROR [Errno {exc.errno}] error while attempting to bind on address: {exc}")
        return 1
    server.daemon_threads = True
    say(f"INFO Uvicorn running on http://{options.host}:{options.port}")
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
