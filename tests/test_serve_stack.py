"""`muninn search` through a warm `muninn serve` against the real stack: the same hits as in-process
for every kind of query, one process reused across searches, and `muninn serve --stop`."""

from __future__ import annotations

import json
import os
import time

import pytest
import yaml
from test_search import CORPUS, ROOT

from muninn.core import config, credentials
from muninn.plugins.search import keyword, serve

pytestmark = pytest.mark.integration

QUERIES = [
    ["INC-10963"],
    ["db01.prod.example.com"],
    ["how did we fix the certificate rotation"],
    ["which certificate expired on 3 February 2025"],
    ["postgres upgrade", "-k", "2"],
    ["postgres upgrade rollback", "--no-rerank"],
    ["kafka consumer lag", "--since", "7d"],
    ["certificate", "--target", f"{ROOT}/notes"],
    ["who hikes the ridge trail", "--no-hybrid"],
    ["nightly backup job", "--no-recency"],
]


@pytest.fixture(scope="module")
def reader(stack, tmp_path_factory):
    account, client = stack.new_account("srv")
    files = {f"{ROOT}/{path}": text for path, text in CORPUS.items()}
    for folder in sorted({uri.rsplit("/", 1)[0] for uri in files}):
        client.ensure_dir(folder)
        client.batch_write(folder, {u: t for u, t in files.items() if u.startswith(folder + "/")}, wait=True)
    client.wait()
    folder = tmp_path_factory.mktemp("serve")
    db = folder / "index.sqlite"
    keyword.build_from_openviking(client, ROOT, db)
    credentials.for_server(stack.settings).set(credentials.user_key_name(account, "owner"),
                                               client._api_key)
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg["openviking"] = {"account": account, "user": "owner"}
    cfg["search"] = {"index": str(db), "serve_idle": 300}   # the packaged cross-encoder reranks
    conf = folder / "muninn.yaml"
    conf.write_text(yaml.safe_dump(cfg))
    env = {k: v for k, v in stack.env.items() if k != "MUNINN_SEARCH__SERVE_IDLE"}
    yield conf, env
    stack_cli(stack, env, "-c", str(conf), "serve", "--stop")
    client.close()


def stack_cli(stack, env, *args):
    saved = stack.env
    stack.env = env
    try:
        return stack.cli(*args)
    finally:
        stack.env = saved


def _search(stack, env, conf, args):
    t0 = time.perf_counter()
    out = stack_cli(stack, env, "-c", str(conf), "search", *args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr, time.perf_counter() - t0


@pytest.mark.parametrize("args", QUERIES, ids=[" ".join(q) for q in QUERIES])
def test_served_search_finds_what_in_process_search_finds(stack, reader, args) -> None:
    conf, env = reader
    inproc, _, t_in = _search(stack, {**env, "MUNINN_SEARCH__SERVE_IDLE": "0"}, conf, args)
    served, err, t_served = _search(stack, env, conf, args)
    assert "searching in this process" not in err
    assert [h["uri"] for h in served["hits"]] == [h["uri"] for h in inproc["hits"]]
    assert served["hits"], args
    for key in ("route", "reranker", "dates", "query"):
        assert served.get(key) == inproc.get(key), key
    assert [round(h["score"], 4) for h in served["hits"]] == [round(h["score"], 4) for h in inproc["hits"]]
    print(f"{args}: in-process {t_in:.2f} s, served {t_served:.2f} s")


def test_one_warm_process_answers_every_search(stack, reader) -> None:
    conf, env = reader
    _search(stack, env, conf, ["INC-10963"])
    settings = config.load(conf, environ=env)
    path = serve.socket_path(settings, serve.identity(settings))
    first = serve._ask(path, {"op": "ping"})
    _search(stack, env, conf, ["postgres upgrade"])
    assert first is not None and serve._ask(path, {"op": "ping"}) == first and first["pid"] != os.getpid()
    bad = stack_cli(stack, env, "-c", str(conf), "search", "x", "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr
    stopped = stack_cli(stack, env, "-c", str(conf), "serve", "--stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stderr
    deadline = time.monotonic() + 10
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not path.exists()
