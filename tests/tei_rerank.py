"""A stand-in for a remote rerank host: text-embeddings-inference's POST /rerank and GET /health,
served by its own process on a port of its own, scoring with the packaged cross-encoder.

    python tests/tei_rerank.py PORT
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from muninn.plugins.search import rerank

MODEL = rerank.OnnxBackend(str(rerank.packaged_path("cross-encoder/ms-marco-MiniLM-L-12-v2")), 256, 8)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"status": "ok"})

    def do_POST(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        scores = MODEL.rerank(req["query"], req["texts"])
        # TEI answers best first; muninn must put each score back with its text by index.
        self._send(sorted(({"index": i, "score": s} for i, s in enumerate(scores)), key=lambda r: -r["score"]))


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
