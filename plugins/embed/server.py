"""The sidecar's HTTP app: `POST /v1/embeddings` (float or base64) and `GET /health`.

`dimensions` is honoured by truncating and re-normalising (the Matryoshka convention); asking for
more dimensions than the model has is a 400, never silent padding. `input_type` ("query", "passage" or
"document", as OpenViking sends it for a prompted model) says which prompt
a text is read after (core/embed_prompts.py).
"""

from __future__ import annotations

import base64
import threading
from typing import Any, Literal

import numpy as np
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from muninn.core import factfile
from muninn.core.embed_prompts import Prompts, kind_of

MAX_INPUTS = 2048


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


def create_app(model: Any, native_dim: int, model_name: str, batch_size: int = 32,
               fact_text: bool = True, prompts: Prompts = Prompts()) -> FastAPI:
    app = FastAPI(title="muninn embedding sidecar")
    # torch on 2 cores: concurrent encodes only fight over the threads, so requests take turns.
    lock = threading.Lock()

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "model": model_name, "dimensions": native_dim}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "muninn"}]}

    @app.post("/v1/embeddings")
    def embeddings(req: EmbeddingRequest) -> dict[str, Any]:
        texts = [req.input] if isinstance(req.input, str) else list(req.input)
        if not texts:
            raise HTTPException(400, "input is empty")
        if len(texts) > MAX_INPUTS:
            raise HTTPException(400, f"at most {MAX_INPUTS} inputs per request")
        dim = req.dimensions or native_dim
        if dim > native_dim:
            raise HTTPException(400, f"dimensions={dim} exceeds the model's {native_dim}")
        before = [prompts.before(kind_of(t, req.input_type)) if prompts else "" for t in texts]
        if fact_text:
            # OpenViking sends a fact file whole; the vector should read the fact, not its front matter.
            texts = [factfile.embed_text(t) for t in texts]
        texts = [b + t for b, t in zip(before, texts, strict=True)]
        with lock:
            vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                   convert_to_numpy=True, show_progress_bar=False)
        if dim < native_dim:
            vectors = vectors[:, :dim]
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms == 0, 1, norms)
        tokens = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": encode_vector(v, req.encoding_format)}
                     for i, v in enumerate(vectors)],
            "model": req.model or model_name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    return app


def serve(settings, host: str | None = None, port: int | None = None) -> None:
    """Load the model and serve until interrupted."""
    import uvicorn

    from muninn.core import embed_prompts as prompts
    from muninn.plugins.embed.model import load

    model, native_dim = load(settings)
    app = create_app(model, native_dim, settings.model_name, settings.batch_size, settings.fact_text,
                     prompts.for_settings(settings))
    uvicorn.run(app, host=host or settings.host, port=port or settings.port, log_level="warning")
