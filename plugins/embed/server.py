"""The sidecar's HTTP app: `POST /v1/embeddings` (float or base64) and `GET /health`.

It is the one door every embedding call of muninn and of OpenViking goes through: behind it is the local
model, or a Forwarder (forward.py) to a TEI, OpenAI-compatible or Voyage-style endpoint, metered against
embed.max_billed_tokens (muninn.core.billing; a refusal is HTTP 402). The prompts and the fact rule are
applied here either way, so a text reads the same whatever embeds it.

`dimensions` is honoured by truncating and re-normalising (the Matryoshka convention); asking for
more dimensions than the model has is a 400, never silent padding. `input_type` ("query", "passage" or
"document", as OpenViking sends it for a prompted model) says which prompt
a text is read after (core/embed_prompts.py). A request whose `model` names embed.second_model gets that
model's vectors; any other name gets embed.model's.
"""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from muninn.core import factfile
from muninn.core.billing import CapReached
from muninn.core.embed_prompts import Kind, Prompts, kind_of
from muninn.plugins.embed.forward import ForwardError

MAX_INPUTS = 2048
RECENT = 1024     # vectors kept: 1.5 MB at 384 dimensions


class EmbeddingRequest(BaseModel):
    input: str | list[str]
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(None, gt=0)
    user: str | None = None
    input_type: Literal["query", "passage", "document"] | None = None


def encode_vector(vec: np.ndarray, encoding: str) -> list[float] | str:
    if encoding == "base64":
        # OpenAI's base64 form: little-endian float32 bytes.
        return base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
    return [float(x) for x in vec]


class Recent:
    """The vectors of the last texts encoded, by model and text as read (prompt included). A question is
    asked twice within milliseconds: by OpenViking's `find` and by muninn's linear fusion
    (plugins/search/stages/query_vectors.py). Requests take turns, so the second finds the first's vector."""

    def __init__(self, size: int | None = None) -> None:
        self.size = RECENT if size is None else size
        self._vecs: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def encode(self, name: str, use: Served, texts: list[str], batch_size: int, **extra: Any) -> np.ndarray:
        keys = [(name, t) for t in texts]
        todo = list(dict.fromkeys(k for k in keys if k not in self._vecs))
        if todo:
            fresh = use.model.encode([t for _, t in todo], batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False, **extra)
            # Copies: a kept row must not hold its whole request's array in memory.
            self._vecs.update(zip(todo, [row.copy() for row in np.asarray(fresh, dtype=np.float32)], strict=True))
        out = np.stack([self._vecs[k] for k in keys])
        for k in keys:
            self._vecs.move_to_end(k)
        while len(self._vecs) > self.size:
            self._vecs.popitem(last=False)
        return out


@dataclass
class Served:
    """One model the sidecar answers for."""

    model: Any
    dim: int
    prompts: Prompts = field(default_factory=Prompts)


def _encode(recent: Recent, name: str, use: Served, texts: list[str], kinds: list[Kind],
            batch_size: int) -> np.ndarray:
    """A local model reads the prompted texts in one pass; a forwarded call is made per side, since a
    Voyage-style provider takes the side as `input_type`, and the side is part of the cached vector's key."""
    if not getattr(use.model, "forwards", False):
        return recent.encode(name, use, texts, batch_size)
    out: np.ndarray | None = None
    for kind in dict.fromkeys(kinds):
        at = [i for i, k in enumerate(kinds) if k == kind]
        got = recent.encode(f"{name}\0{kind}", use, [texts[i] for i in at], batch_size, input_kind=kind)
        if out is None:
            out = np.zeros((len(texts), got.shape[1]), dtype=np.float32)
        out[at] = got
    assert out is not None      # texts is never empty here
    return out


def create_app(model: Any, native_dim: int, model_name: str, batch_size: int = 32,
               fact_text: bool = True, prompts: Prompts = Prompts(),
               others: Mapping[str, Callable[[], Served]] | None = None, recent: int | None = None) -> FastAPI:
    """`others`: a second model by the name a request gives in `model`, loaded at its first request (a
    sidecar whose readers never ask for it never loads it). Any other name gets the configured model, as
    OpenViking, which names the model its config gives, expects. `recent`: vectors kept (RECENT; 0 keeps none,
    as a batch larger than the cache would)."""
    app = FastAPI(title="muninn embedding sidecar")
    recent = Recent(size=recent)
    # torch on 2 cores: concurrent encodes only fight over the threads, so requests take turns.
    lock = threading.Lock()
    first = Served(model, native_dim, prompts)
    loaded: dict[str, Served] = {}
    failed: dict[str, str] = {}

    def served(name: str | None) -> tuple[str, Served]:
        if not others or name not in others:
            return model_name, first
        if name in failed:
            raise HTTPException(503, f"the model {name} does not load here: {failed[name]}")
        if name not in loaded:
            try:
                loaded[name] = others[name]()
            except Exception as exc:    # a missing package or folder: said once per request, never a crash
                failed[name] = " ".join(str(exc).split())[:300]
                raise HTTPException(503, f"the model {name} does not load here: {failed[name]}") from None
        return name, loaded[name]

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "model": model_name, "dimensions": native_dim}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "muninn"}
                                           for name in [model_name, *(others or {})]]}

    @app.post("/v1/embeddings")
    def embeddings(req: EmbeddingRequest) -> dict[str, Any]:
        texts = [req.input] if isinstance(req.input, str) else list(req.input)
        if not texts:
            raise HTTPException(400, "input is empty")
        if len(texts) > MAX_INPUTS:
            raise HTTPException(400, f"at most {MAX_INPUTS} inputs per request")
        with lock:
            name, use = served(req.model)
        native_dim, prompts = use.dim, use.prompts
        dim = req.dimensions or native_dim
        if dim > native_dim:
            raise HTTPException(400, f"dimensions={dim} exceeds the model's {native_dim}")
        kinds = [kind_of(t, req.input_type) for t in texts]
        before = [prompts.before(k) if prompts else "" for k in kinds]
        if fact_text:
            # OpenViking sends a fact file whole; the vector should read the fact, not its front matter.
            texts = [factfile.embed_text(t) for t in texts]
        texts = [b + t for b, t in zip(before, texts, strict=True)]
        try:
            with lock:
                vectors = _encode(recent, name, use, texts, kinds, batch_size)
        except CapReached as exc:
            raise HTTPException(402, exc.message) from None
        except ForwardError as exc:
            raise HTTPException(502, str(exc)) from None
        if dim < native_dim:
            vectors = vectors[:, :dim]
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms == 0, 1, norms)
        tokens = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": encode_vector(v, req.encoding_format)}
                     for i, v in enumerate(vectors)],
            "model": name if name != model_name else (req.model or model_name),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    return app


def preload(settings, now: bool = True) -> Callable[[], Served]:
    """The second model loaded before the sidecar answers /health: its ONNX export (once per machine, seconds;
    plugins/embed/onnx_export.py) must never run inside a request, which would hold every other request
    (OpenViking's included) behind it. What loads here is kept for the first request; a model that does not
    load (not installed, say) is tried again then, and that request says why. With `now` off, nothing loads
    before a request names it."""
    from muninn.core import embed_prompts as prompts
    from muninn.plugins.embed.model import load

    def load_now(cfg=settings) -> Served:
        encoder, dim = load(cfg)
        return Served(encoder, dim, prompts.for_settings(cfg))

    if not now:
        return load_now
    try:
        served = load_now()
    except Exception:
        return load_now
    return lambda: served


def serve(settings, host: str | None = None, port: int | None = None, warm_second: bool = True,
          billed: Path | None = None) -> None:
    """Load the model (and the second, unless `warm_second` is off), or with embed.provider set, forward to
    embed.upstream (metered in `billed`), and serve until interrupted."""
    import uvicorn

    from muninn.core import embed_prompts as prompts

    if settings.forwards:
        from muninn.core.billing import Meter
        from muninn.plugins.embed.forward import Forwarder

        meter = Meter(billed, settings.max_billed_tokens) if billed is not None else None
        model: Any = Forwarder(settings.provider, settings.upstream, settings.upstream_model or settings.model,
                               settings.dimensions, meter)
        native_dim, others = settings.dimensions, {}
    else:
        from muninn.plugins.embed.model import load

        model, native_dim = load(settings)
        others = {}
        if (second := settings.second) is not None:
            others[second.model_name] = preload(second, warm_second)
    app = create_app(model, native_dim, settings.model_name, settings.batch_size, settings.fact_text,
                     prompts.for_settings(settings), others)
    uvicorn.run(app, host=host or settings.host, port=port or settings.port, log_level="warning")
