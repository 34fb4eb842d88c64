"""A sentence-transformers model folder, run as ONNX: the same vectors in a third of the time for a question.

The sidecar embeds a question under every model a search fuses (stages/linear.py). Under torch, MiniLM-L6
took about three times as long for one question as under onnxruntime, with the same weights
(evals/results/decisions.md#second-model-onnx). So a folder whose modules are only a Transformer, a mean or
CLS Pooling and a Normalize is exported once to ONNX with torch's own exporter, kept under the models folder
by the sha256 of its weights, and loaded from there after. An export is kept only if it gives the same
vectors as the torch model on probe texts (short, long, and past the token limit); any other folder, or an
export that disagrees, stays on torch. The kept files carry their sha256 (muninn/core/model_manifest.py),
checked on every load.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path

from muninn.core import model_manifest as manifest
from muninn.core import paths
from muninn.plugins.embed.onnx import OnnxEncoder

log = logging.getLogger(__name__)

WEIGHTS = ("model.safetensors", "pytorch_model.bin")
PLAIN = ("sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
         "sentence_transformers.models.Normalize")
# How close an export's vectors must be to torch's: float32 rounding, nothing more.
AGREE = 0.9999
PROBES = ("how do I rotate the nginx logs", "Disk usage on db-2 crossed 90% at 03:10; the backup job stalled.",
          " ".join(f"word{i}" for i in range(600)))


def pooling(path: Path) -> str | None:
    """'mean' or 'cls' when the folder is a plain Transformer → Pooling (→ Normalize) model, else None."""
    try:
        modules = json.loads((path / "modules.json").read_text())
        pool = json.loads((path / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError):
        return None
    kinds = tuple(m.get("type") for m in modules) if isinstance(modules, list) else ()
    if kinds not in (PLAIN, PLAIN[:2]) or modules[0].get("path", "") != "":
        return None
    modes = [k for k, v in pool.items() if k.startswith("pooling_mode_") and v is True]
    if len(modes) != 1:
        return None
    return {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}.get(modes[0])


def max_tokens(path: Path, configured: int) -> int:
    """The token limit the torch model reads at: its own max_seq_length, capped by embed.max_tokens."""
    try:
        own = int(json.loads((path / "sentence_bert_config.json").read_text()).get("max_seq_length") or configured)
    except (OSError, ValueError, TypeError):
        own = configured
    return min(own, configured)


def weights(path: Path) -> Path | None:
    return next((path / w for w in WEIGHTS if (path / w).is_file()), None)


def kept_folder(path: Path, name: str) -> Path | None:
    """Where this folder's export is kept: named by the sha256 of its weights and tokenizer, so new files get
    a new export."""
    if (w := weights(path)) is None or not (path / "tokenizer.json").is_file():
        return None
    digest = hashlib.sha256(f"{manifest.sha256(w)}\0{manifest.sha256(path / 'tokenizer.json')}".encode())
    return paths.models_dir() / "onnx" / f"{Path(name).name}-{digest.hexdigest()[:16]}"


def failed_note(kept: Path) -> Path:
    """Written when an export failed or disagreed: a sidecar start does not spend the export's seconds again."""
    return kept.with_name(kept.name + ".failed")


def encoder(path: Path, name: str, tokens: int, threads: int | None) -> OnnxEncoder | None:
    """The folder's model (embed.model `name`) under onnxruntime, exported on first use; None where it must
    stay on torch."""
    if (pool := pooling(path)) is None or (kept := kept_folder(path, name)) is None:
        return None
    tokens = max_tokens(path, tokens)
    # Hashing the kept files is most of a warm start's cost here: once, and again only after an export.
    if manifest.problem(kept) is not None:
        if failed_note(kept).exists():
            return None
        try:
            export(path, kept, pool, tokens)
        except Exception as exc:    # an exporter that fails on this architecture: torch still serves it
            log.warning("embedding model %s stays on torch: its ONNX export failed (%s)", path, exc)
            with contextlib.suppress(OSError):
                failed_note(kept).write_text(f"{type(exc).__name__}: {exc}\n")
            return None
        if manifest.problem(kept) is not None:
            return None
    try:
        return OnnxEncoder(kept, pool, tokens, threads)
    except Exception as exc:    # removed or damaged between the check and the load: torch serves it
        log.warning("embedding model %s stays on torch: its ONNX export did not load (%s)", path, exc)
        return None


def export(path: Path, kept: Path, pool: str, tokens: int) -> None:
    """Export into a temporary folder beside `kept`, check it against torch, and rename it into place: a
    kill leaves no half-written folder, and of two sidecars exporting at once the first rename wins. A
    damaged export is removed before the new one is made, never after, so no one removes a whole one."""
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    if kept.exists():
        shutil.rmtree(kept, ignore_errors=True)
    st = SentenceTransformer(str(path), device="cpu")
    st.max_seq_length = tokens
    bert = st[0].auto_model.eval()
    kept.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{kept.name}-", dir=kept.parent))
    try:
        names = ["input_ids", "attention_mask", "token_type_ids"]
        sample = st.tokenizer(["a probe"], return_tensors="pt")
        given = tuple(sample[n] for n in names if n in sample)
        axes = {n: {0: "batch", 1: "tokens"} for n in names[:len(given)]}
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the tracer's notes on masks: the probes below are the check
            torch.onnx.export(bert, given, str(work / "model.onnx"), input_names=names[:len(given)],
                              output_names=["last_hidden_state"],
                              dynamic_axes={**axes, "last_hidden_state": {0: "batch", 1: "tokens"}},
                              opset_version=17, dynamo=False)
        shutil.copyfile(path / "tokenizer.json", work / "tokenizer.json")   # not the package's mode
        want = st.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        got = OnnxEncoder(work, pool, tokens, 1).encode(list(PROBES))
        if (agree := float(np.min(np.sum(want * got, axis=1)))) < AGREE:
            raise ValueError(f"its vectors differ from torch's (cosine {agree:.6f})")
        manifest.record(work, source=str(path), revision=kept.name.rsplit("-", 1)[-1])
        for file in work.iterdir():     # the home is private (plugins/stack/home_modes.py), whatever the umask
            file.chmod(0o600)
        with contextlib.suppress(OSError):     # another sidecar's rename came first: its export stands
            work.rename(kept)
    finally:
        shutil.rmtree(work, ignore_errors=True)
