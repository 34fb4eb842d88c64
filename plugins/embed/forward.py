"""The door's far side: forward texts to an embedding endpoint on another host or a paid provider.

The door (server.py) has already applied the prompts and `embed.fact_text`, so what is sent here is what a
local model would read; the forwarder only speaks the provider's request shape, carries its key (from the
environment `muninn up` hands the sidecar, never from a file), meters billed tokens (muninn.core.billing)
and checks what comes back. It stands where a local model stands: `encode(texts) -> unit rows`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from muninn.core.billing import Meter, bound
from muninn.core.errors import MuninnError

KEY_ENV = "MUNINN_EMBED_API_KEY"
KEY_NAME = "embed:provider"      # its keyring name (for_home scope): `muninn embed key`
VOYAGE_TYPES = {"query": "query", "passage": "document"}


class ForwardError(MuninnError):
    """The endpoint behind the door did not give the vectors: unreachable, a refusal, a wrong shape."""


class Forwarder:
    forwards = True       # the door tells each call which side its texts are on (Voyage's input_type)

    def __init__(self, provider: str, upstream: str, model: str, dim: int, meter: Meter | None = None,
                 api_key: str | None = None, timeout: float = 60.0) -> None:
        self.provider, self.upstream, self.model, self.dim = provider, upstream.rstrip("/"), model, dim
        self.meter = meter
        self.api_key = api_key if api_key is not None else os.environ.get(KEY_ENV) or None
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = httpx.Client(timeout=timeout, headers=headers)

    def encode(self, texts: Sequence[str], batch_size: int = 32, input_kind: str | None = None,
               **_: Any) -> np.ndarray:
        """Unit rows for `texts`, one provider call per `batch_size` texts, each metered and settled on its
        own (a later refusal keeps what earlier calls embedded)."""
        rows: list[np.ndarray] = []
        for i in range(0, len(texts), batch_size):
            rows.append(self._call(list(texts[i:i + batch_size]), input_kind))
        out = np.concatenate(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1, norms)).astype(np.float32)

    def _request(self, texts: list[str], input_kind: str | None) -> tuple[str, dict[str, Any]]:
        if self.provider == "tei":
            return f"{self.upstream}/embed", {"inputs": texts, "normalize": True, "truncate": True}
        body: dict[str, Any] = {"input": texts, "model": self.model, "encoding_format": "float"}
        if self.provider == "voyage":
            body.pop("encoding_format")
            if input_kind is not None:
                body["input_type"] = VOYAGE_TYPES[input_kind]
        return f"{self.upstream}/embeddings", body

    def _call(self, texts: list[str], input_kind: str | None) -> np.ndarray:
        url, body = self._request(texts, input_kind)
        call = self.meter.reserve(self.provider, bound(texts)) if self.meter else None
        try:
            resp = self._http.post(url, json=body)
        except httpx.HTTPError as exc:
            # Sent or not, it may have been billed: the reservation stays counted at its bound.
            raise ForwardError(f"the embedding provider at {url} did not answer: {type(exc).__name__}",
                               fix="check embed.upstream, that it runs, and that this host reaches it") from None
        if resp.status_code != 200:
            if call is not None and 400 <= resp.status_code < 500:
                self.meter.release(call)     # type: ignore[union-attr]  # refused: nothing billed
            said = " ".join(resp.text.split())[:200]
            fix = ("store the provider's key with `muninn embed key`, then `muninn down && muninn up`"
                   if resp.status_code in (401, 403) else "check embed.upstream and embed.upstream_model")
            raise ForwardError(f"the embedding provider at {url} answered HTTP {resp.status_code}: {said}", fix=fix)
        try:
            reply = resp.json()
            vectors = reply if self.provider == "tei" else [d["embedding"] for d in
                                                            sorted(reply["data"], key=lambda d: d["index"])]
            out = np.asarray(vectors, dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise ForwardError(f"the embedding provider at {url} answered a malformed reply ({exc})") from None
        if call is not None:
            usage = reply.get("usage") if isinstance(reply, dict) else None
            billed = usage.get("total_tokens", usage.get("prompt_tokens")) if isinstance(usage, dict) else None
            self.meter.settle(call, int(billed) if billed is not None else None)  # type: ignore[union-attr]
        if out.shape != (len(texts), self.dim):
            raise ForwardError(f"the embedding provider at {url} returned vectors of shape {out.shape}, not "
                               f"{len(texts)} x embed.dimensions {self.dim}",
                               fix="set embed.dimensions to the width the provider's model serves")
        return out

    def close(self) -> None:
        self._http.close()
