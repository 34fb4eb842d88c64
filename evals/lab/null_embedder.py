"""A null embedding endpoint for floor measurements: OpenAI-compatible `POST /v1/embeddings` that answers
each text with a unit vector seeded by the text's hash, at almost no cost.

`python -m muninn.evals.lab.null_embedder --port P [--dim 384]` (also `GET /health`, `GET /v1/models`, and
`GET /stats`: requests and texts served so far). It stands in for an embedding endpoint on a fast remote
host, so a sync against it times OpenViking's own work plus muninn's with embedding taken out
(`bench_sync_split`). The vectors carry no meaning: search quality over them is nil, by design.

Standard library and numpy only, threaded: OpenViking sends one text per request, several at a time.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

MODEL = "null-embedder"
MAX_INPUTS = 2048


class BadRequest(ValueError):
    """A request the OpenAI embeddings API would refuse (answered 400 with the message)."""


def vector_for(text: str, dim: int) -> np.ndarray:
    """One text, one vector, whatever the batch: a standard normal draw seeded by sha256(text), normalised."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")
    vec = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vec / np.linalg.norm(vec)


def embeddings(body: Any, dim: int) -> dict[str, Any]:
    """The /v1/embeddings answer for a parsed request body, as OpenAI shapes it (float or base64)."""
    if not isinstance(body, dict) or "input" not in body:
        raise BadRequest("the body must be a JSON object with `input`")
    texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise BadRequest("`input` must be a string or a non-empty list of strings")
    if len(texts) > MAX_INPUTS:
        raise BadRequest(f"at most {MAX_INPUTS} inputs per request")
    size = dim if body.get("dimensions") is None else body["dimensions"]
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= dim:
        raise BadRequest(f"`dimensions` must be an integer from 1 to {dim}")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise BadRequest("`encoding_format` must be float or base64")
    data = []
    for i, text in enumerate(texts):
        vec = vector_for(text, dim)[:size]
        vec = vec / np.linalg.norm(vec)
        # OpenAI's base64 form is little-endian float32 bytes (what its SDK asks for by default).
        value = (base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii") if encoding == "base64"
                 else [float(x) for x in vec])
        data.append({"object": "embedding", "index": i, "embedding": value})
    tokens = sum(len(t.split()) for t in texts)
    return {"object": "list", "data": data, "model": body.get("model") or MODEL,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


class NullEmbedder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, port: int, dim: int) -> None:
        super().__init__((host, port), _Handler)
        self.dim = dim
        self.requests = 0
        self.texts = 0
        self.lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive: the OpenAI client reuses its connections
    # Headers and body leave in one write (flushed after each request), and no Nagle: written apart on a
    # kept-alive connection, they waited out the client's delayed ACK on every text
    # (evals/results/decisions.md#null-embedder).
    wbufsize = 1 << 16
    server: NullEmbedder

    def setup(self) -> None:
        super().setup()
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:   # one line per text would cost more than the vector
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._send(200, {"status": "ok", "model": MODEL, "dimensions": self.server.dim})
        elif self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "muninn"}]})
        elif self.path == "/stats":
            with self.server.lock:
                self._send(200, {"requests": self.server.requests, "texts": self.server.texts})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/v1/embeddings":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            answer = embeddings(json.loads(raw or b"null"), self.server.dim)
        except ValueError as exc:   # BadRequest, or a body that is not JSON
            self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
            return
        with self.server.lock:
            self.server.requests += 1
            self.server.texts += len(answer["data"])
        self._send(200, answer)


def main() -> None:
    parser = argparse.ArgumentParser(prog="null-embedder", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    with NullEmbedder(args.host, args.port, args.dim) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
