"""`muninn models fetch NAME`: weights from the model hub, through huggingface_hub, against a stand-in hub
(a local HTTP server that answers the API listing and the resolve URLs as huggingface.co does) named by
HF_ENDPOINT. Each file's sha256 is recorded at download and checked on every use."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from muninn.core import hub_models as hub
from muninn.core import model_manifest as manifest
from muninn.core.config import EmbedSettings, RerankSettings, Settings
from muninn.core.errors import ExitCode
from muninn.plugins.embed import model as embed_model
from muninn.plugins.search import doctor_check, rerank
from muninn.plugins.stack import doctor

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "BAAI/bge-reranker-v2-m3"
FILES = {
    "config.json": b'{"architectures": ["XLMRobertaForSequenceClassification"]}',
    "model.safetensors": b"weights " * 4096,
    "tokenizer.json": b"{}",
    "sentencepiece.bpe.model": b"spm",
    "pytorch_model.bin": b"the other weights format: never downloaded beside safetensors",
    "onnx/model.onnx": b"an export the loader does not read",
    "README.md": b"# card",
}


class StandIn(BaseHTTPRequestHandler):
    repos: ClassVar[dict[str, dict[str, bytes]]] = {}
    asked: ClassVar[list[str]] = []
    gets: ClassVar[list[str]] = []
    missing_once: ClassVar[set[str]] = set()     # files answered 404 once: a transfer that broke

    def log_message(self, *_args) -> None:
        pass

    def _file(self) -> bytes | None:
        for repo, files in self.repos.items():
            for rev in ("main", COMMIT):
                prefix = f"/{repo}/resolve/{rev}/"
                if self.path.startswith(prefix):
                    return files.get(self.path[len(prefix):])
        return None

    def _send(self, status: int, body: bytes, headers: dict[str, str], write: bool) -> None:
        self.send_response(status)
        for k, v in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        if write:
            self.wfile.write(body)

    def _answer(self, write: bool) -> None:
        self.asked.append(self.path)
        for repo, files in self.repos.items():
            if self.path.split("?")[0] in (f"/api/models/{repo}", f"/api/models/{repo}/revision/main"):
                siblings = [{"rfilename": f, "size": len(b)} for f, b in files.items()]
                listing = {"id": repo, "sha": COMMIT, "siblings": siblings}
                return self._send(200, json.dumps(listing).encode(), {"Content-Type": "application/json"}, write)
        body = self._file()
        file = self.path.rsplit("/", 1)[-1]
        if file in self.missing_once:
            self.missing_once.discard(file)
            body = None
        if write:
            self.gets.append(self.path)
        if body is None:
            return self._send(404, b"not found", {"X-Error-Code": "EntryNotFound"}, write)
        self._send(200, body, {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(body).hexdigest()}"'}, write)

    def do_HEAD(self) -> None:
        self._answer(write=False)

    def do_GET(self) -> None:
        self._answer(write=True)


@pytest.fixture
def standin(tmp_path, monkeypatch) -> Iterator[str]:
    """The stand-in hub with a tiny bge-reranker-v2-m3, HF_ENDPOINT at it, fetched models under tmp_path."""
    StandIn.repos = {REPO: dict(FILES)}
    StandIn.asked = []
    StandIn.gets = []
    StandIn.missing_once = set()
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))     # nothing lands in (or is read from) a real cache
    # The suite runs offline (conftest); this process asks the stand-in, as `models fetch` would.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)     # huggingface_hub reads either
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_fetch_keeps_only_what_the_loader_reads_and_records_each_sha256(standin) -> None:
    where = hub.fetch("bge-reranker-v2-m3")
    kept = sorted(p.relative_to(where).as_posix() for p in where.rglob("*") if p.is_file())
    assert kept == sorted(["config.json", "model.safetensors", "tokenizer.json", "sentencepiece.bpe.model",
                           manifest.NAME])
    body = manifest.read(where)
    assert body["revision"] == COMMIT and body["source"] == f"{standin}/{REPO}"
    assert body["files"] == {n: hashlib.sha256(FILES[n]).hexdigest() for n in kept if n != manifest.NAME}
    assert not where.with_name(where.name + ".partial").exists()
    # Every file came from the commit the listing named, not from a moving branch.
    assert all(f"/resolve/{COMMIT}/" in p for p in StandIn.asked if "/resolve/" in p)


def test_the_reranker_and_doctor_use_the_fetched_folder(standin) -> None:
    where = hub.fetch("bge-reranker-v2-m3")
    assert rerank.resolve(REPO) == str(where)
    (check,) = doctor_check.reranker_weights(Settings())
    assert check.level == "ok" and str(where) in check.detail


def test_a_second_fetch_downloads_nothing_and_force_downloads_again(standin) -> None:
    hub.fetch("bge-reranker-v2-m3")
    first = len(StandIn.asked)
    said: list[str] = []
    hub.fetch("bge-reranker-v2-m3", say=said.append)
    assert len(StandIn.asked) == first and "already fetched and verified" in said[0]
    hub.fetch("bge-reranker-v2-m3", force=True)
    assert len(StandIn.asked) > first


@pytest.mark.parametrize("damage", ["changed", "truncated", "removed"])
def test_a_file_changed_after_the_fetch_is_named_on_next_use_with_the_fix(standin, damage) -> None:
    where = hub.fetch("bge-reranker-v2-m3")
    weights = where / "model.safetensors"
    if damage == "changed":
        weights.write_bytes(b"x" * len(FILES["model.safetensors"]))
    elif damage == "truncated":
        weights.write_bytes(FILES["model.safetensors"][:100])
    else:
        weights.unlink()
    with pytest.raises(rerank.RerankUnavailable) as err:
        rerank.resolve(REPO)
    assert "model.safetensors" in err.value.message
    assert err.value.fix == "run `muninn models fetch bge-reranker-v2-m3 --force`"
    # doctor says it too, and the packaged cross-encoder still reranks (the result names it).
    (check,) = doctor_check.reranker_weights(Settings())
    assert check.level == "warn" and "model.safetensors" in check.detail and "--force" in check.fix
    loaded = rerank.load(RerankSettings(model=REPO, fallbacks=["cross-encoder/ms-marco-MiniLM-L-12-v2"]))
    assert loaded.model == "cross-encoder/ms-marco-MiniLM-L-12-v2"
    hub.fetch("bge-reranker-v2-m3", force=True)
    assert rerank.resolve(REPO) == str(where)


def test_a_fetched_embedder_is_checked_on_every_load(standin) -> None:
    repo = hub.CATALOG["mpnet"].repo
    StandIn.repos[repo] = {"config.json": b"{}", "modules.json": b"[]", "model.safetensors": b"w",
                           "tokenizer.json": b"{}", "1_Pooling/config.json": b"{}"}
    where = hub.fetch("mpnet")
    assert (where / "1_Pooling" / "config.json").is_file()
    assert embed_model.model_path(EmbedSettings(model=repo)) == where
    (where / "tokenizer.json").write_text('{"swapped": true}')
    with pytest.raises(hub.HubError, match="tokenizer.json") as err:
        embed_model.model_path(EmbedSettings(model=repo))
    assert err.value.exit_code == ExitCode.STACK and "models fetch mpnet --force" in (err.value.fix or "")
    (check,) = doctor.embedding_model(Settings(embed={"model": repo}))
    assert check.level == "fail" and "tokenizer.json" in check.detail and "--force" in check.fix


def test_the_cli_shows_progress_on_stderr_and_lists_the_model_verified(standin) -> None:
    done = _cli("models", "fetch", "bge-reranker-v2-m3")
    assert done.returncode == 0, done.stderr
    # One line a file with its size (huggingface_hub adds a bar per file on a terminal), then the record.
    lines = done.stderr.splitlines()
    assert [ln.split(": ")[1].split(" (")[0] for ln in lines[:4]] == \
        ["config.json", "tokenizer.json", "sentencepiece.bpe.model", "model.safetensors"]
    assert f"model.safetensors (4 of 4, {len(FILES['model.safetensors']) // 1024} KiB) from {standin}" in lines[3]
    assert "sha256 of 4 files recorded" in lines[4]
    assert done.stdout == ""
    table = _cli("models", "list").stdout.splitlines()      # a pipe: tab-separated, header first
    assert table[0].split("\t")[:6] == ["name", "kind", "repository", "fetched", "size", "verified"]
    assert table[1].split("\t")[:6] == ["bge-reranker-v2-m3", "reranker", REPO, "yes", "32 KiB", "yes"]
    listed = json.loads(_cli("models", "list", "--json").stdout)
    assert [m["name"] for m in listed] == list(hub.CATALOG)
    row = next(m for m in listed if m["name"] == "bge-reranker-v2-m3")
    assert row["fetched"] and row["verified"] and row["size"] > len(FILES["model.safetensors"])
    assert not next(m for m in listed if m["name"] == "mpnet")["fetched"]
    (Path(row["folder"]) / "config.json").write_text("{}")
    row = next(m for m in json.loads(_cli("models", "list", "--json").stdout) if m["name"] == "bge-reranker-v2-m3")
    assert row["fetched"] and not row["verified"] and "config.json" in row["problem"]


def test_a_hub_that_cannot_be_reached_is_one_sentence_and_exit_6(standin, tmp_path) -> None:
    done = _cli("models", "fetch", "bge-reranker-v2-m3", env={"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert done.returncode == ExitCode.STACK, done.stderr
    assert "could not download BAAI/bge-reranker-v2-m3 from http://127.0.0.1:9" in done.stderr
    assert "packaged ms-marco" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "models" / "hub" / "BAAI--bge-reranker-v2-m3").exists()


def test_an_unknown_name_lists_the_known_ones() -> None:
    done = _cli("models", "fetch", "bge-large")
    assert done.returncode == ExitCode.STACK and "Traceback" not in done.stderr
    assert f"known: {', '.join(hub.CATALOG)}" in done.stderr


def test_a_repository_without_weights_is_refused(standin) -> None:
    StandIn.repos[REPO] = {"config.json": b"{}", "README.md": b"#"}
    with pytest.raises(hub.HubError, match="no config.json and weights"):
        hub.fetch("bge-reranker-v2-m3")


def test_an_offline_switch_in_the_environment_is_named_before_any_request(standin, monkeypatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(hub.HubError, match="HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set") as err:
        hub.fetch("bge-reranker-v2-m3")
    assert "env -u HF_HUB_OFFLINE -u TRANSFORMERS_OFFLINE muninn models fetch bge-reranker-v2-m3" in err.value.fix
    assert StandIn.asked == []


def test_a_broken_fetch_leaves_no_model_and_the_next_run_gets_only_what_is_left(standin) -> None:
    StandIn.missing_once = {"model.safetensors"}
    with pytest.raises(hub.HubError, match="could not download BAAI/bge-reranker-v2-m3/model.safetensors") as err:
        hub.fetch("bge-reranker-v2-m3")
    assert "run it again" in (err.value.fix or "")
    assert not hub.folder("bge-reranker-v2-m3").exists()           # nothing half-made is ever read
    with pytest.raises(rerank.RerankUnavailable, match="not in the local Hugging Face cache"):
        rerank.resolve(REPO)
    before = [p for p in StandIn.gets if "/resolve/" in p]
    where = hub.fetch("bge-reranker-v2-m3")
    again = [p for p in StandIn.gets if "/resolve/" in p][len(before):]
    assert [p.rsplit("/", 1)[-1] for p in again] == ["model.safetensors"]
    assert manifest.problem(where) is None and not where.with_name(where.name + ".partial").exists()
