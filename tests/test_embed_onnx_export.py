"""A plain sentence-transformers folder is served as ONNX, exported once with torch's own exporter and kept
only when its vectors are torch's: the packaged MiniLM for real, and folders that must stay on torch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from muninn.core import model_manifest as manifest
from muninn.core.config import EmbedSettings
from muninn.plugins.embed import onnx_export
from muninn.plugins.embed.model import PACKAGED, load, model_path

MINILM = EmbedSettings(model="sentence-transformers/all-MiniLM-L6-v2")
TEXTS = ["how do I restart the backup job", "The nightly backup on db-2 stalled at 03:10 and was restarted.",
         "ünïcödé and emoji 🚀 in a note", " ".join(["long"] * 700)]


@pytest.fixture
def models(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    return tmp_path / "models"


@pytest.fixture(scope="module")
def torch_minilm():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_path(MINILM)), device="cpu")


def test_minilm_is_served_as_onnx_with_torchs_vectors(models, torch_minilm) -> None:
    model, dim = load(MINILM)
    assert type(model).__name__ == "OnnxEncoder" and dim == 384
    want = torch_minilm.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    got = model.encode(TEXTS)
    assert np.sum(want * got, axis=1) == pytest.approx([1.0] * len(TEXTS), abs=1e-5)
    kept = onnx_export.kept_folder(model_path(MINILM), MINILM.model)
    assert kept is not None and kept.parent == models / "onnx" and manifest.problem(kept) is None
    # Private, as everything under a muninn home is (`muninn doctor` fails a file others may read).
    assert [oct(p.stat().st_mode & 0o777) for p in (kept, *kept.iterdir())] == ["0o700"] + ["0o600"] * 3


def test_the_export_is_kept_and_a_damaged_one_made_again(models) -> None:
    load(MINILM)
    kept = onnx_export.kept_folder(model_path(MINILM), MINILM.model)
    assert kept is not None
    made = (kept / "model.onnx").stat().st_mtime_ns
    load(MINILM)
    assert (kept / "model.onnx").stat().st_mtime_ns == made     # kept: not exported again
    with (kept / "model.onnx").open("r+b") as fh:
        fh.seek(4096)
        fh.write(b"\0" * 64)
    assert manifest.problem(kept) is not None
    model, _ = load(MINILM)
    assert type(model).__name__ == "OnnxEncoder" and manifest.problem(kept) is None
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # no temporary folder left


def test_an_export_that_disagrees_with_torch_is_not_kept_nor_tried_again(models, monkeypatch) -> None:
    monkeypatch.setattr(onnx_export, "AGREE", 1.5)   # no cosine reaches it: every export disagrees
    model, _ = load(MINILM)
    assert type(model).__name__ == "SentenceTransformer"
    kept = onnx_export.kept_folder(model_path(MINILM), MINILM.model)
    assert kept is not None and not kept.exists()
    assert [p.name for p in (models / "onnx").iterdir()] == [onnx_export.failed_note(kept).name]
    assert "differ from torch" in onnx_export.failed_note(kept).read_text()

    def never(*_: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_export, "export", never)    # the next sidecar start goes straight to torch
    assert type(load(MINILM)[0]).__name__ == "SentenceTransformer"


def test_the_sidecar_exports_the_second_model_before_it_listens(models) -> None:
    from muninn.plugins.embed import server

    kept = onnx_export.kept_folder(model_path(MINILM), MINILM.model)
    assert kept is not None and not kept.exists()
    first = server.preload(MINILM)
    assert manifest.problem(kept) is None
    served = first()
    assert type(served.model).__name__ == "OnnxEncoder" and first() is served    # loaded once, kept for requests


def test_the_second_model_stays_unloaded_when_searches_do_not_ask_for_it(models, monkeypatch) -> None:
    from muninn.plugins.embed import model as model_module
    from muninn.plugins.embed import server

    loads: list[str] = []
    real = model_module.load
    monkeypatch.setattr(model_module, "load", lambda cfg: (loads.append(cfg.model), real(cfg))[1])
    later = server.preload(MINILM, now=False)
    assert loads == []
    assert later().dim == 384 and loads == [MINILM.model]


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "local-minilm"
    shutil.copytree(model_path(MINILM), folder)
    return folder


@pytest.mark.parametrize("change", ["dense layer", "max pooling", "two poolings", "no modules.json"])
def test_a_folder_that_is_not_plain_stays_on_torch(tmp_path, change) -> None:
    folder = _copy(tmp_path)
    modules = json.loads((folder / "modules.json").read_text())
    pool = json.loads((folder / "1_Pooling" / "config.json").read_text())
    if change == "dense layer":
        modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    elif change == "max pooling":
        pool.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    elif change == "two poolings":
        pool.update(pooling_mode_cls_token=True)
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pool))
    if change == "no modules.json":
        (folder / "modules.json").unlink()
    assert onnx_export.pooling(folder) is None
    assert onnx_export.encoder(folder, str(folder), 256, 1) is None


def test_the_token_limit_is_the_models_own_capped_by_the_setting(tmp_path) -> None:
    folder = _copy(tmp_path)
    assert onnx_export.max_tokens(folder, 512) == 256 and onnx_export.max_tokens(folder, 128) == 128
    assert onnx_export.pooling(folder) == "mean" and PACKAGED[MINILM.model][2] == "mean"
