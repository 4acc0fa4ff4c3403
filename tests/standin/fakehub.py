from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class Fault:
    """Break downloads of one file: cut the body after `cut_at` bytes `cuts` times, then answer
    `status` (e.g. 500), after `delay_s`, while `status_times` lasts."""

    path: str
    cut_at: int = 0
    cuts: int = 0
    status: int = 500
    status_times: int = 0
    delay_s: float = 0.0


@dataclass
class FakeHub:
    """The few Hub routes snapshot_download uses, for one repo, served on 127.0.0.1."""

    repo_id: str
    files: dict[str, bytes]
    faults: list[Fault] = field(default_factory=list)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)

    def start(self) -> str:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def gets(self, path: str) -> list[str | None]:
        """The Range header of every GET of a file (None for a full request)."""
        suffix = f"/resolve/{COMMIT}/{path}"
        return [rng for method, p, rng in self.requests if method == "GET" and p.endswith(suffix)]

    def _tree(self) -> list[dict[str, Any]]:
        entries = []
        for path, data in sorted(self.files.items()):
            entry: dict[str, Any] = {"type": "file", "path": path, "size": len(data)}
            entry["oid"] = hashlib.sha1(data).hexdigest()
            if path.endswith(".safetensors"):
                sha = hashlib.sha256(data).hexdigest()
                entry["lfs"] = {"oid": sha, "size": len(data), "pointerSize": 134}
            entries.append(entry)
        return entries

    def etag(self, path: str) -> str:
        data = self.files[path]
        if path.endswith(".safetensors"):
            return hashlib.sha256(data).hexdigest()
        return hashlib.sha1(data).hexdigest()


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    info_prefix = f"/api/models/{hub.repo_id}/revision/"
    tree_prefix = f"/api/models/{hub.repo_id}/tree/"
    file_prefix = f"/{hub.repo_id}/resolve/"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, body: Any) -> None:
            raw = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _missing(self) -> None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _file(self, head: bool) -> None:
            rest = self.path.split("?")[0][len(file_prefix) :]
            _revision, _, path = rest.partition("/")
            hub.requests.append((self.command, self.path, self.headers.get("Range")))
            data = hub.files.get(path)
            if data is None:
                self._missing()
                return
            fault = next((f for f in hub.faults if f.path == path), None)
            if not head and fault is not None and fault.cuts <= 0 and fault.status_times > 0:
                fault.status_times -= 1
                time.sleep(fault.delay_s)
                self.send_response(fault.status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = 0
            rng = self.headers.get("Range")
            if rng and not head:
                start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206 if start else 200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hub.etag(path)}"')
            if path.endswith(".safetensors"):
                self.send_header("X-Linked-Etag", f'"{hub.etag(path)}"')
                self.send_header("X-Linked-Size", str(len(data)))
            body = data[start:]
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            if head:
                return
            if fault is not None and fault.cuts > 0 and start < fault.cut_at:
                fault.cuts -= 1
                self.wfile.write(data[start : fault.cut_at])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def do_HEAD(self) -> None:
            if self.path.startswith(file_prefix):
                self._file(head=True)
            else:
                self._missing()

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path.startswith(info_prefix):
                siblings = [{"rfilename": p} for p in sorted(hub.files)]
                self._json({"id": hub.repo_id, "sha": COMMIT, "siblings": siblings})
            elif path.startswith(tree_prefix):
                self._json(hub._tree())
            elif path.startswith(file_prefix):
                self._file(head=False)
            else:
                self._missing()

    return Handler
