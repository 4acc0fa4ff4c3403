from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STARTED_WALL = time.time()


def _say(msg: str) -> None:
    sys.stdout.write(f"standin[{os.getpid()}]: {msg}\n")
    sys.stdout.flush()


def _exit_on_sigterm(*_: object) -> None:
    _say("SIGTERM, exiting")
    os._exit(0)


def _append(path: str | None, record: dict[str, Any]) -> None:
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


class State:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.ready = False
        self.requests = 0
        self.tokens = 0
        self.lock = threading.Lock()


def make_handler(state: State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            _say("http " + format % args)

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _count(self) -> None:
            with state.lock:
                state.requests += 1
                n = state.requests
            limit = state.args.crash_after_requests
            if limit is not None and n > limit:
                _say(f"simulated crash after {limit} requests")
                os._exit(7)

        def do_GET(self) -> None:
            if self.path == "/health":
                ok = state.ready and not state.args.never_ready
                self._send(200 if ok else 503, b"")
                return
            self._count()
            if self.path == "/v1/models":
                model = {"id": state.args.model, "object": "model", "owned_by": "standin"}
                self._send(200, json.dumps({"object": "list", "data": [model]}).encode())
            elif self.path == "/metrics":
                lines = [
                    "# TYPE standin_requests_total counter",
                    f"standin_requests_total {state.requests}.0",
                    "# TYPE vllm:generation_tokens_total counter",
                    f'vllm:generation_tokens_total{{model_name="{state.args.model}"}} '
                    f"{state.tokens}.0",
                ]
                self._send(200, ("\n".join(lines) + "\n").encode(), "text/plain; version=0.0.4")
            else:
                self._send(404, b'{"error": "not found"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            self._count()
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": "not found"}')
                return
            try:
                req = json.loads(raw)
            except ValueError:
                self._send(400, b'{"error": "body is not JSON"}')
                return
            words = ["stand", "in", "reply"][: max(1, int(req.get("max_tokens", 3)))]
            with state.lock:
                state.tokens += len(words)
            base = {
                "id": "chatcmpl-standin",
                "created": int(time.time()),
                "model": state.args.model,
            }
            if not req.get("stream"):
                message = {"role": "assistant", "content": " ".join(words)}
                body = dict(base, object="chat.completion")
                body["choices"] = [{"index": 0, "message": message, "finish_reason": "stop"}]
                body["usage"] = {"prompt_tokens": 1, "completion_tokens": len(words)}
                self._send(200, json.dumps(body).encode())
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = dict(base, object="chat.completion.chunk")
            for i, word in enumerate(words):
                delta = {"content": word} if i else {"role": "assistant", "content": word}
                chunk["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            chunk["choices"] = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            if (req.get("stream_options") or {}).get("include_usage"):
                usage = {"prompt_tokens": 1, "completion_tokens": len(words)}
                usage["total_tokens"] = usage["completion_tokens"] + 1
                last = dict(base, object="chat.completion.chunk", choices=[], usage=usage)
                self.wfile.write(b"data: " + json.dumps(last).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

    return Handler


def _spawn_grandchild(args: argparse.Namespace) -> int:
    pid = os.fork()
    if pid == 0:
        if args.ignore_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(3600)
    return pid


def _bound(
    server: ThreadingHTTPServer, args: argparse.Namespace, *, listen: bool, bind: bool = True
) -> bool:
    try:
        if bind:
            server.server_bind()
        if listen:
            server.server_activate()
    except OSError as exc:
        _say(f"cannot bind {args.host}:{args.port}: {exc}")
        server.server_close()
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description="Stand-in OpenAI-shaped server for fault tests.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--model", default="standin-model")
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--die-during-startup", action="store_true")
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--crash-after-requests", type=int, default=None)
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--spawn-child", action="store_true")
    parser.add_argument("--health-503-while-starting", action="store_true")
    parser.add_argument(
        "--start-gate", default=None, help="start listening only once this file exists"
    )
    parser.add_argument(
        "--bind-early",
        action="store_true",
        help="bind the port (SO_REUSEADDR) before the start delay and listen after it, as vLLM",
    )
    parser.add_argument("--record", default=None, help="append one JSON line per start here")
    parser.add_argument(
        "--record-env", action="append", default=[], help="a variable the start line holds"
    )
    args = parser.parse_args()

    child = _spawn_grandchild(args) if args.spawn_child else None
    _append(
        args.record,
        {
            "pid": os.getpid(),
            "pgid": os.getpgid(0),
            "child": child,
            "port": args.port,
            "started": STARTED_WALL,
            "argv": sys.argv[1:],
            "env": {name: os.environ.get(name) for name in args.record_env},
        },
    )
    _say(f"starting on port {args.port} (child {child})")
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)

    state = State(args)
    server = ThreadingHTTPServer(
        (args.host, args.port), make_handler(state), bind_and_activate=False
    )
    if args.bind_early and not _bound(server, args, listen=False):
        return 1
    while args.start_gate and not os.path.exists(args.start_gate):
        time.sleep(0.05)
    if not args.health_503_while_starting:
        time.sleep(args.start_delay)
        if args.die_during_startup:
            _say("fatal: simulated start-up failure (CUDA out of memory)")
            return 3
    if not _bound(server, args, listen=True, bind=not args.bind_early):
        return 1
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _say(f"listening at {time.time():.6f}")
    if args.health_503_while_starting:
        time.sleep(args.start_delay)
        if args.die_during_startup:
            _say("fatal: simulated start-up failure (CUDA out of memory)")
            return 3
    state.ready = True
    _say("ready")
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
