"""`muninn models fetch NAME`: a reranker or an embedder from the model hub, for machines with a network.

The hub is huggingface.co, or `HF_ENDPOINT` (a mirror, a proxy, a stand-in in the tests); huggingface_hub
does the transfer and draws its progress bars on stderr. Only the files muninn's loaders read are
downloaded (sentence-transformers' CrossEncoder and SentenceTransformer read a folder: config, weights,
tokenizer, pooling). The folder lands whole or not at all, under `$MUNINN_MODELS/hub/`, with the sha256 of
every file recorded (model_manifest.py) and checked on every use. A search never downloads: the reranker reads
a fetched folder, else the local Hugging Face cache, else the packaged ms-marco cross-encoder.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from muninn.core import extras, paths
from muninn.core import model_manifest as manifest
from muninn.core.errors import ExitCode, MuninnError

DEFAULT_ENDPOINT = "https://huggingface.co"


@dataclass(frozen=True)
class HubModel:
    repo: str
    kind: Literal["reranker", "embedder"]
    note: str


# The models muninn knows how to use, by the short name `models fetch` takes.
CATALOG: dict[str, HubModel] = {
    "bge-reranker-v2-m3": HubModel("BAAI/bge-reranker-v2-m3", "reranker",
                                   "the design card's cross-encoder (search.rerank.model's default), ~2.3 GB"),
    # embed.model's id reads the int8 copies of e5 (`models fetch`) and bge (packaged) and the packaged MiniLM;
    # their hub copies are read by naming the fetched folder in embed.model. mpnet is read by its id.
    "e5-small-v2": HubModel("intfloat/e5-small-v2", "embedder",
                            "fp32; the id reads the int8 copy `models fetch` gets; this one by its folder"),
    "bge-small": HubModel("BAAI/bge-small-en-v1.5", "embedder", "fp32; the id reads the packaged int8 copy"),
    "MiniLM-L6": HubModel("sentence-transformers/all-MiniLM-L6-v2", "embedder",
                          "fp32; the id reads the packaged copy"),
    "mpnet": HubModel("sentence-transformers/all-mpnet-base-v2", "embedder",
                      "768 wide, ~4x bge's compute a text; embed.model reads it by its id"),
}

# What CrossEncoder / SentenceTransformer read from a folder, when the repository has it. Weights: one
# format (safetensors when published), never both, never the ONNX/OpenVINO copies beside them.
READ = ("config.json", "modules.json", "config_sentence_transformers.json", "sentence_bert_config.json",
        "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
        "sentencepiece.bpe.model", "1_Pooling/config.json")
WEIGHTS = ("model.safetensors", "pytorch_model.bin")


class HubError(MuninnError):
    """The hub cannot be reached, lacks the files, or a fetched folder is not what was downloaded."""

    exit_code = ExitCode.STACK


def model(name: str) -> HubModel:
    if name not in CATALOG:
        raise HubError(f"{name} is not a model muninn fetches from the hub; known: {', '.join(CATALOG)}",
                       fix="run `muninn models list` and fetch one of those names")
    return CATALOG[name]


def name_of(repo: str) -> str | None:
    return next((n for n, m in CATALOG.items() if m.repo == repo), None)


def folder(name: str) -> Path:
    return paths.models_dir() / "hub" / model(name).repo.replace("/", "--")


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def damaged(name: str) -> HubError:
    return HubError(f"the fetched {name} is not what was downloaded: {manifest.problem(folder(name))}",
                    fix=f"run `muninn models fetch {name} --force`")


def fetched_folder(repo: str) -> Path | None:
    """The fetched folder of the hub id `repo`, checked file by file against its manifest; None when it
    was never fetched. HubError when it was and has changed since."""
    name = name_of(repo)
    if name is None or not folder(name).exists():
        return None
    if manifest.problem(folder(name)):
        raise damaged(name)
    return folder(name)


def choose(listing: list[str]) -> list[str]:
    """The files of a repository that muninn's loaders read."""
    weights = next((w for w in WEIGHTS if w in listing), None)
    return [f for f in READ if f in listing] + ([weights] if weights else [])


def fetch(name: str, force: bool = False, say: Callable[[str], None] = lambda _: None) -> Path:
    """The model's folder, downloaded first unless it is there with every file as recorded."""
    spec = model(name)
    target = folder(name)
    if not force and target.exists() and manifest.problem(target) is None:
        say(f"{name}: already fetched and verified at {target}")
        return target
    try:
        from huggingface_hub import HfApi, constants, hf_hub_download
    except ModuleNotFoundError:
        raise extras.MissingExtra("huggingface_hub", "ml", what="`muninn models fetch`") from None
    if constants.HF_HUB_OFFLINE:
        # huggingface_hub reads either variable once, at import; its own message names only the first.
        raise HubError("HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set, so huggingface_hub will not download",
                       fix=f"run `env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE muninn models fetch {name}`")
    url = endpoint()
    try:
        info = HfApi(endpoint=url).model_info(spec.repo, files_metadata=True)
    except OSError as exc:      # requests' and huggingface_hub's errors are all OSErrors
        raise _unreachable(spec, url, exc) from None
    sizes = {s.rfilename: s.size for s in info.siblings or []}
    files = choose(list(sizes))
    if "config.json" not in files or not any(w in files for w in WEIGHTS):
        raise HubError(f"{url}/{spec.repo} has no config.json and weights ({', '.join(WEIGHTS)}) to download",
                       fix="check HF_ENDPOINT: it must serve the model's repository as huggingface.co does")
    # Kept across a failed or killed run: huggingface_hub skips the files it finished at this commit and
    # resumes the one it was writing, so a 2.3 GB download is not started over.
    partial = target.with_name(target.name + ".partial")
    for i, file in enumerate(files, 1):
        say(f"{name}: {file} ({i} of {len(files)}{_size(sizes[file])}) from {url}")
        try:
            # The commit model_info named: every file comes from one revision, even if main moves meanwhile.
            hf_hub_download(spec.repo, file, revision=info.sha, local_dir=partial, endpoint=url)
        except OSError as exc:
            raise _unreachable(spec, url, exc, file) from None
    shutil.rmtree(partial / ".cache", ignore_errors=True)     # huggingface_hub's resume bookkeeping
    manifest.record(partial, f"{url}/{spec.repo}", info.sha or "")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)      # a folder that exists is whole
    say(f"{name}: {target} (sha256 of {len(files)} files recorded in {manifest.NAME})")
    return target


def human(size: int) -> str:
    if size >= 2**30:
        return f"{size / 2**30:.1f} GiB"
    return f"{size / 2**20:.0f} MiB" if size >= 2**20 else f"{size // 1024} KiB"


def _size(size: int | None) -> str:
    return "" if size is None else f", {human(size)}"


def _unreachable(spec: HubModel, url: str, exc: OSError, file: str = "") -> HubError:
    what = f"{spec.repo}/{file}" if file else spec.repo
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return HubError(f"could not download {what} from {url}: {reason}",
                    fix="check the network or HF_ENDPOINT (a hub mirror) and run it again (files already "
                        "downloaded are kept); without a hub, search reranks with the packaged ms-marco "
                        "cross-encoder")


@dataclass(frozen=True)
class Status:
    name: str
    repo: str
    kind: str
    fetched: bool
    verified: bool
    size: int
    folder: str
    problem: str | None
    note: str

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def status(name: str) -> Status:
    spec = model(name)
    where = folder(name)
    problem = manifest.problem(where) if where.exists() else None
    size = sum(f.stat().st_size for f in where.rglob("*") if f.is_file()) if where.exists() else 0
    return Status(name, spec.repo, spec.kind, where.exists(), where.exists() and problem is None, size,
                  str(where), problem, spec.note)
