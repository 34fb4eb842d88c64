"""An embedding model exported to ONNX (int8 or not), run by onnxruntime with the fast tokenizer.

It answers `encode()` like a SentenceTransformer, so the sidecar serves either.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


class OnnxEncoder:
    def __init__(self, path: Path, pooling: str = "cls", max_tokens: int = 256, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            opts.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(path / "model.onnx"), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()   # one text per pass: see encode()
        self.pooling = pooling
        self.dimension = int(self.session.get_outputs()[0].shape[-1])

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts: Sequence[str], normalize_embeddings: bool = True, **_: object) -> np.ndarray:
        """One text per forward pass. An int8 model quantises activations per batch, so a text's vector
        would depend on its batch neighbours; one at a time, the same text always gets the same vector,
        at a little less throughput (evals/results/decisions.md#int8-batch)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, enc in enumerate(self.tokenizer.encode_batch(list(texts))):
            ids = np.asarray([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.asarray([enc.type_ids], dtype=np.int64)}
            hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0][0]
            out[i] = hidden[0] if self.pooling == "cls" else hidden.mean(0)
        if normalize_embeddings:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out
