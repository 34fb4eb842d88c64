"""A real HTTP server on 127.0.0.1 that speaks just enough of OpenViking's API for muninn's client
(mkdir, ls, read, batch-write, rm, find, wait, health), and answers with an injected fault on demand:
invalid JSON with 200, a JSON array, a null result, an HTML 500, a slow answer, a connection cut
mid-reply, or CONFLICT ("resource is busy"); outside FAULTS, also a 401 ("unauthenticated").
Faults are injected on the wire, so the whole SDK and httpx path runs for real."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

FAULTS = ("invalid-json", "empty-200", "json-array", "null-result", "html-500", "slow", "cut", "busy")


class State:
    def __init__(self) -> None:
        self.files: dict[str, str] = {}        # uri -> content
        self.fault: str | None = None          # applied to every API call while set
        self.fault_paths: tuple[str, ...] = ()  # ... or only to these paths (empty: all)
        self.fault_times: int | None = None    # ... at most this many times
        self.slow_seconds = 3.0
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def take_fault(self, path: str) -> str | None:
        with self.lock:
            if not self.fault or (self.fault_paths and path not in self.fault_paths):
                return None
            if self.fault_times is not None:
                if self.fault_times <= 0:
                    return None
                self.fault_times -= 1
            return self.fault


def _children(files: dict[str, str], uri: str) -> list[dict]:
    uri = uri.rstrip("/")
    seen: dict[str, bool] = {}
    for f in files:
        if f.startswith(uri + "/"):
            head, _, rest = f[len(uri) + 1:].partition("/")
            seen[f"{uri}/{head}"] = seen.get(f"{uri}/{head}", False) or bool(rest)
    return [{"uri": u, "isDir": d, "size": None if d else len(files[u])} for u, d in sorted(seen.items())]


def _handler(state: State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _ok(self, result: object) -> None:
            self._send(200, json.dumps({"status": "ok", "result": result}).encode())

        def _fault(self, fault: str) -> bool:
            if fault == "invalid-json":
                self._send(200, b"<html><body>upstream says hi</body></html>", "text/html")
            elif fault == "empty-200":
                self._send(200, b"")
            elif fault == "json-array":
                self._send(200, b"[1, 2, 3]")
            elif fault == "null-result":
                self._ok(None)
            elif fault == "html-500":
                self._send(500, b"<html>\n<h1>Internal Server Error</h1>\n<p>worker crashed:\n"
                                b"  boom</p>\n</html>", "text/html")
            elif fault == "busy":
                self._send(409, json.dumps({"status": "error", "error": {
                    "code": "CONFLICT", "message": "resource is busy"}}).encode())
            elif fault == "cut":
                # Headers promise a body that never comes: the client sees the peer hang up mid-reply.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4096")
                self.end_headers()
                self.wfile.write(b'{"status": "ok", "res')
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
            elif fault == "unauthenticated":
                self._send(401, json.dumps({"status": "error", "error": {
                    "code": "UNAUTHENTICATED", "message": "invalid API key"}}).encode())
            elif fault == "slow":
                time.sleep(state.slow_seconds)
                return False
            return True

        def _route(self, method: str) -> None:
            url = urlparse(self.path)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}") if length else {}
            state.calls.append(f"{method} {url.path}")
            fault = state.take_fault(url.path) if url.path != "/health" else None
            if fault and self._fault(fault):
                return
            if url.path == "/health":
                self._send(200, json.dumps({"status": "ok", "healthy": True}).encode())
            elif url.path == "/api/v1/fs/mkdir":
                self._ok({"uri": body.get("uri")})
            elif url.path == "/api/v1/fs/ls":
                uri = q.get("uri", "")
                if not any(f.startswith(uri.rstrip("/") + "/") for f in state.files) and uri.count("/") > 3:
                    self._send(404, json.dumps({"status": "error", "error": {
                        "code": "NOT_FOUND", "message": "not found", "details": {"resource": uri}}}).encode())
                    return
                self._ok(_children(state.files, uri))
            elif url.path == "/api/v1/content/read":
                uri = q.get("uri", "")
                if uri not in state.files:
                    self._send(404, json.dumps({"status": "error", "error": {
                        "code": "NOT_FOUND", "message": "not found", "details": {"resource": uri}}}).encode())
                    return
                self._ok(state.files[uri])
            elif url.path == "/api/v1/content/batch-write":
                created = []
                for op in body.get("operations") or body.get("ops") or body.get("files") or []:
                    state.files[op["uri"]] = op["content"]
                    created.append(op["uri"])
                self._ok({"created": created, "updated": [], "unchanged": []})
            elif url.path == "/api/v1/fs" and method == "DELETE":
                state.files.pop(q.get("uri", ""), None)
                self._ok({})
            elif url.path == "/api/v1/search/find":
                # A stand-in for vector search: files sharing a word with the query, by overlap.
                words = set(str(body.get("query", "")).lower().split())
                target = str(body.get("target_uri") or "").rstrip("/")
                scored = sorted(((len(words & set(text.lower().split())) / (len(words) or 1), uri)
                                 for uri, text in state.files.items() if uri.startswith(target + "/")), reverse=True)
                self._ok({"resources": [{"uri": u, "score": round(sc, 3), "level": 2}
                                        for sc, u in scored[: int(body.get("limit") or 10)] if sc > 0]})
            elif url.path == "/api/v1/system/wait":
                self._ok({})
            else:
                self._send(404, json.dumps({"status": "error", "error": {
                    "code": "NOT_FOUND", "message": f"no route {url.path}"}}).encode())

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_DELETE(self) -> None:
            self._route("DELETE")

    return Handler


@contextmanager
def serve() -> Iterator[tuple[str, State]]:
    state = State()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
