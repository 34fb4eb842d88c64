"""A stand-in for a paid embedding provider, in a process of its own: it bills.

    STANDIN_KEY=sk-... python tests/billing_provider.py PORT DIM

- POST /v1/embeddings (OpenAI- and Voyage-style: `input`, `model`, `input_type` query/document) answers
  `data` and a `usage` of what it billed (one token per 4 UTF-8 bytes, rounded up, and one per input);
- POST /embed (text-embeddings-inference: `inputs`) answers the bare vectors, no usage;
- a request without `Authorization: Bearer $STANDIN_KEY` is a 401;
- GET /calls: how many embedding calls it answered, the tokens it billed and the input_types it saw.
Vectors are fixed per text (from its sha256), so the same text always gets the same one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

DIM = int(sys.argv[2]) if len(sys.argv) > 2 else 384
KEY = os.environ.get("STANDIN_KEY", "")
SEEN: dict = {"calls": 0, "billed": 0, "input_types": [], "keys": 0}


def vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    row = np.random.default_rng(seed).normal(size=DIM)
    return [float(x) for x in row / np.linalg.norm(row)]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: object, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(SEEN if self.path == "/calls" else {"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if KEY and self.headers.get("Authorization") != f"Bearer {KEY}":
            self._send({"error": {"message": "Incorrect API key provided"}}, 401)
            return
        SEEN["keys"] += bool(KEY)
        if self.path == "/embed":
            texts = body["inputs"] if isinstance(body["inputs"], list) else [body["inputs"]]
            SEEN["calls"] += 1
            self._send([vector(t) for t in texts])
            return
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if body.get("input_type") not in (None, "query", "document"):
            self._send({"detail": f"input_type {body['input_type']!r} is not query or document"}, 400)
            return
        billed = sum(-(-len(t.encode()) // 4) + 1 for t in texts)
        SEEN["calls"] += 1
        SEEN["billed"] += billed
        SEEN["input_types"].append(body.get("input_type"))
        self._send({"object": "list", "model": body.get("model"),
                    "data": [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)],
                    "usage": {"prompt_tokens": billed, "total_tokens": billed}})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
