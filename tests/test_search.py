"""The search pipeline against the real server: routing, narrative questions, per-file cap,
recency near-ties, briefing, --since, and the CLI (search, --batch, read)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from muninn.core import credentials
from muninn.plugins.search import keyword
from muninn.plugins.search.pipeline import Searcher

pytestmark = pytest.mark.integration

ROOT = "viking://resources"
NOW = dt.datetime.now(dt.UTC)


def fact(source: str, title: str, body: str, date: str, crumb: list[str] | None = None,
         source_path: str | None = None) -> str:
    meta = {"id": title.lower().replace(" ", "-")[:40], "source": source, "kind": "note", "date": date,
            "breadcrumb": crumb or [title]}
    if source_path:   # a section of a longer note: id `path#anchor`, like the notes exporter writes
        meta["id"] = f"{source}/{source_path}#{meta['id']}"
        meta["source_path"] = source_path
    return f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\nA {source} entry.\n# {title}\n{body}\n"


def days_ago(n: int) -> str:
    return (NOW - dt.timedelta(days=n)).date().isoformat()


CORPUS = {
    "incidents/inc-10963.md": fact("incidents", "INC-10963 ingress certificate expired",
                                   "The wildcard certificate on the ingress expired at 02:00 and every "
                                   "API call failed with a TLS error.", "2025-02-03"),
    "incidents/inc-10964.md": fact("incidents", "INC-10964 disk full on db01",
                                   "db01.prod.example.com ran out of disk because WAL archiving stalled.",
                                   "2025-02-10"),
    "incidents/inc-11020.md": fact("incidents", "INC-11020 queue backlog",
                                   "Consumers lagged after a deploy; related to INC-10963 only by timing.",
                                   "2025-03-01"),
    "notes/cert-rotation.md": fact("notes", "Certificate rotation", "We fixed the certificate rotation by "
                                   "moving renewal to cert-manager with a 30 day renewBefore and an alert "
                                   "on expiry under 14 days.", "2025-02-20",
                                   ["Runbooks", "TLS", "Certificate rotation"]),
    "notes/pg-1.md": fact("notes", "Postgres upgrade plan", "Postgres major upgrade: pg_upgrade with "
                          "hard links, test on staging first.", "2025-05-01",
                          ["Database upgrade 2025", "Plan"], "notes/db-upgrade.md"),
    "notes/pg-2.md": fact("notes", "Postgres upgrade rollback", "Rollback of the postgres upgrade: restore "
                          "the snapshot and repoint the app.", "2025-05-01",
                          ["Database upgrade 2025", "Rollback"], "notes/db-upgrade.md"),
    "notes/pg-3.md": fact("notes", "Postgres upgrade checks", "After the postgres upgrade run ANALYZE and "
                          "check replication lag.", "2025-05-01",
                          ["Database upgrade 2025", "Checks"], "notes/db-upgrade.md"),
    "notes/pg-4.md": fact("notes", "Postgres upgrade timeline", "The postgres upgrade window was Sunday "
                          "night; the upgrade took 40 minutes.", "2025-05-01",
                          ["Database upgrade 2025", "Timeline"], "notes/db-upgrade.md"),
    "tasks/pg-task.md": fact("tasks", "Schedule postgres upgrade", "Task: schedule the postgres upgrade "
                             "with the app team.", "2025-04-20"),
    "observations/old.md": fact("observations", "Kafka consumer lag observed", "Kafka consumer group "
                                "billing lagged by 2 million messages.", days_ago(30)),
    "observations/new.md": fact("observations", "Kafka consumer lag observed again", "Kafka consumer "
                                "group billing lagged by 2 million messages.", days_ago(2)),
    "misc/plain.md": "# Office wifi\nThe office wifi password rotates monthly; ask IT.\n",
    "inventory/db01.md": "---\nid: inventory/db01\nsource: inventory\nkind: host\nbreadcrumb: Inventory › host › "
                         "db01\nsource_path: inventory.yaml\n---\nHow to reach db01 (host, prod).\n\n# db01\n"
                         "Steps:\n1. connect the VPN\n2. ssh ops@db01.prod.example.com\n",
}
# Who said it is in the header; the other file names Ana only in passing.
CORPUS["people/ana.md"] = fact("notes", "Ana said", "We hike the ridge trail every spring, it is steep.",
                               "2025-06-01", ["People", "Ana said"])
CORPUS["people/ben.md"] = fact("notes", "Ben said", "Ana hikes the ridge trail, she says it is steep and the "
                               "trail views are the best.", "2025-06-01", ["People", "Ben said"])
# Two identical facts that differ only in their date: recency must order them.
for name, age in (("old", 1500), ("new", 3)):
    CORPUS[f"dup/backup-{name}.md"] = fact("notes", "Nightly backup job", "The nightly backup job "
                                           "copies the volumes to object storage at 01:00.", days_ago(age))


@pytest.fixture(scope="module")
def corpus(stack, tmp_path_factory):
    account, client = stack.new_account("srch")
    files = {f"{ROOT}/{path}": text for path, text in CORPUS.items()}
    for folder in sorted({uri.rsplit("/", 1)[0] for uri in files}):
        client.ensure_dir(folder)
        client.batch_write(folder, {u: t for u, t in files.items() if u.startswith(folder + "/")}, wait=True)
    client.wait()
    db = tmp_path_factory.mktemp("kw") / "index.sqlite"
    stats = keyword.build_from_openviking(client, ROOT, db)
    assert stats.indexed == len(CORPUS)
    yield account, client, db
    client.close()


@pytest.fixture
def searcher(stack, corpus):
    _, client, db = corpus
    settings = stack.settings.model_copy(update={"search": stack.settings.search.model_copy(
        update={"rerank": stack.settings.search.rerank.model_copy(update={"enabled": False})})})
    with Searcher(settings, client=client, index=db) as s:
        yield s


def test_identifier_query_is_keyword_only_and_exact(searcher) -> None:
    res = searcher.search("INC-10963")
    assert res.route == "keyword"
    assert res.hits[0].uri == f"{ROOT}/incidents/inc-10963.md"
    assert searcher.vector.calls == 0
    hit = res.hits[0]
    assert (hit.title, hit.source, hit.date[:10]) == ("INC-10963 ingress certificate expired", "incidents",
                                                      "2025-02-03")
    assert set(hit.stage_scores) >= {"keyword", "fusion"} and "vector" not in hit.stage_scores


def test_hostname_routes_to_keyword_with_access_block_pinned(searcher) -> None:
    res = searcher.search("db01.prod.example.com")
    assert res.route == "keyword" and searcher.vector.calls == 0
    assert [h.uri.rsplit("/", 1)[-1] for h in res.hits[:2]] == ["db01.md", "inc-10964.md"]
    assert res.hits[0].stage_scores["pinned"] == 1.0 and res.hits[0].source == "inventory"


def test_inventory_entry_named_in_a_question_is_pinned(searcher) -> None:
    named = searcher.search("why was the disk full on db01", k=4, rerank=False)
    assert named.hits[0].uri.endswith("inventory/db01.md") and named.hits[0].stage_scores["pinned"] == 1.0
    brief = searcher.search("why was the disk full on db01", briefing=True, tokens=400)
    assert brief.briefing.startswith("[access] db01")
    unnamed = searcher.search("disk full", k=4)
    assert all("pinned" not in h.stage_scores for h in unnamed.hits)


def test_narrative_question_finds_its_section(searcher) -> None:
    res = searcher.search("how did we fix the certificate rotation", k=4)
    assert res.route == "hybrid" and searcher.vector.calls == 1
    assert res.hits[0].uri == f"{ROOT}/notes/cert-rotation.md"
    assert res.hits[0].breadcrumb == "Runbooks > TLS > Certificate rotation"
    assert res.warnings == []


def test_header_naming_the_asked_about_person_is_a_fusion_feature(searcher) -> None:
    people, q = f"{ROOT}/people", "which trail does Ana hike"
    base = searcher.ranking
    searcher.ranking = base.model_copy(update={"header_min_share": 0.01})     # "ana" heads 1 of the 2 files there
    res = searcher.search(q, k=2, target=people)
    by = {h.uri.rsplit("/", 1)[-1]: h for h in res.hits}
    assert by["ana.md"].stage_scores["header"] > 0 and by["ben.md"].stage_scores["header"] == 0
    assert res.hits[0].uri.endswith("ana.md")
    on_margin = by["ana.md"].stage_scores["linear"] - by["ben.md"].stage_scores["linear"]
    # Without the feature, or when "ana" heads too few files to be a facet, Ana's file wins by less.
    for update in ({"header_weight": 0.0}, {"header_min_share": 0.6}):
        searcher.ranking = base.model_copy(update=update)
        off = {h.uri.rsplit("/", 1)[-1]: h.stage_scores for h in searcher.search(q, k=2, target=people).hits}
        assert off["ana.md"]["header"] == 0
        assert on_margin > off["ana.md"]["linear"] - off["ben.md"]["linear"]


def test_vector_only_switch(searcher) -> None:
    res = searcher.search("certificate rotation", hybrid=False, k=3)
    assert res.route == "vector"
    assert all("keyword" not in h.stage_scores for h in res.hits)


def test_per_file_cap_holds(searcher) -> None:
    res = searcher.search("postgres upgrade", k=10, target=f"{ROOT}/notes")
    page = res.hits[:searcher.cfg.k]       # the cap holds on the page a reader sees (search.k places)
    assert len([h for h in page if h.uri.rsplit("/", 1)[-1].startswith("pg-")]) == 2
    assert searcher.cfg.per_file == 2 and searcher.cfg.k == 4
    assert len({h.uri for h in res.hits}) == len(res.hits)


def test_recency_orders_near_ties(searcher) -> None:
    res = searcher.search("nightly backup job object storage", k=3, target=f"{ROOT}/dup")
    assert [h.uri.rsplit("/", 1)[-1] for h in res.hits] == ["backup-new.md", "backup-old.md"]
    assert res.hits[0].stage_scores["recency"] > res.hits[1].stage_scores["recency"]


def test_since_filters_by_date(searcher) -> None:
    obs = f"{ROOT}/observations"
    res = searcher.search("kafka consumer lag", since="7d", k=5, target=obs)
    assert [h.uri.rsplit("/", 1)[-1] for h in res.hits] == ["new.md"]
    assert len(searcher.search("kafka consumer lag", since="60d", k=5, target=obs).hits) == 2


def test_briefing_budget_round_robin(searcher) -> None:
    res = searcher.search("postgres upgrade", briefing=True, tokens=220)
    assert res.briefing and len(res.briefing) / 4 <= 220
    sources = [h.source for h in res.hits]
    assert len(set(sources[:2])) == 2, sources        # notes and tasks alternate, neither drowns the other
    big = searcher.search("postgres upgrade", briefing=True, tokens=5000)
    assert len(big.hits) > len(res.hits)


def test_plain_file_degrades_gracefully(searcher) -> None:
    res = searcher.search("office wifi password", k=2)
    hit = next(h for h in res.hits if h.uri.endswith("plain.md"))
    assert (hit.title, hit.breadcrumb, hit.date, hit.source) == ("Office wifi", "", None, "misc")


def test_no_strong_match_on_nonsense_and_not_on_an_exact_identifier(stack, corpus) -> None:
    """Through the real cross-encoder (the packaged one when the configured model is not on disk) and the
    relevance curve fitted for it: keyboard noise is called weak, an exact incident id is not."""
    _, client, db = corpus
    with Searcher(stack.settings, client=client, index=db) as s:
        exact = s.search("INC-10963")
        noise = s.search("blorp fnord quux")
    assert exact.reranker and exact.hits[0].uri == f"{ROOT}/incidents/inc-10963.md"
    assert all(h.relevance is not None and 0 <= h.relevance <= 1 for h in exact.hits + noise.hits)
    assert not any(w.startswith("no strong match") for w in exact.warnings), exact.warnings
    assert any(w.startswith("no strong match") for w in noise.warnings), [h.relevance for h in noise.hits]


def test_missing_index_is_a_visible_warning(stack, corpus, tmp_path) -> None:
    _, client, _ = corpus
    with Searcher(stack.settings, client=client, index=tmp_path / "none.sqlite") as s:
        res = s.search("INC-10963", rerank=False)
    assert res.route == "vector" and any("keyword stage skipped" in w for w in res.warnings)


def test_cli_search_batch_and_read(stack, corpus, tmp_path) -> None:
    account, client, db = corpus
    credentials.for_server(stack.settings).set(credentials.user_key_name(account, "owner"),
                                                            client._api_key)
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg["openviking"] = {"account": account, "user": "owner"}
    cfg["search"] = {"index": str(db), "rerank": {"model": str(tmp_path / "no-weights"),
                                                   "fallbacks": []}}
    conf = tmp_path / "muninn.yaml"
    conf.write_text(yaml.safe_dump(cfg))

    one = stack.cli("-c", str(conf), "search", "INC-10963", "--json")
    assert one.returncode == 0, one.stderr
    doc = json.loads(one.stdout)
    assert doc["route"] == "keyword" and doc["hits"][0]["uri"].endswith("inc-10963.md")
    assert any("rerank skipped" in w for w in doc["warnings"]) and "rerank skipped" in one.stderr

    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "a", "query": "INC-10964"}\n'
                     f'{{"id": "b", "query": "certificate rotation", "target": "{ROOT}/notes"}}\n'
                     '{"id": "c", "query": "which certificate expired on 3 February 2025"}\n')
    out = stack.cli("-c", str(conf), "search", "--batch", str(batch), "--json", "--no-rerank")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", "b", "c"]
    assert lines[0]["route"] == "keyword" and "dates" not in lines[0]
    assert lines[2]["dates"]["searched"] == "which certificate expired"      # as one search's --json says
    assert lines[0]["hits"][0]["uri"].endswith("inc-10964.md")
    assert all(h["uri"].startswith(f"{ROOT}/notes/") for h in lines[1]["hits"])

    read = stack.cli("-c", str(conf), "read", f"{ROOT}/notes/cert-rotation.md", "--json")
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["breadcrumb"] == "Runbooks > TLS > Certificate rotation"

    q = "which certificate expired on 3 February 2025"
    dated = stack.cli("-c", str(conf), "search", q, "--json", "--no-rerank")
    assert dated.returncode == 0, dated.stderr
    doc = json.loads(dated.stdout)
    assert doc["dates"] == {"from": "2025-02-03", "to": "2025-02-03", "slack_days": 1,
                           "searched": "which certificate expired"}
    assert doc["hits"][0]["uri"].endswith("inc-10963.md") and doc["hits"][0]["stage_scores"]["date"] == 1.0
    table = stack.cli("-c", str(conf), "search", q, "--no-rerank")
    assert table.returncode == 0, table.stderr
    assert "dated 2025-02-03 ±1d" in table.stdout and "searched as 'which certificate expired'" in table.stdout
    undated = stack.cli("-c", str(conf), "search", q, "--json", "--no-rerank", "--no-dates")
    assert undated.returncode == 0 and "dates" not in json.loads(undated.stdout)

    bad = stack.cli("-c", str(conf), "search", "x", "--since", "last tuesday")
    assert bad.returncode == 2 and "--since" in bad.stderr


def test_index_facts_updates_changed_files(tmp_path: Path) -> None:
    db = tmp_path / "kw.sqlite"
    uri = f"{ROOT}/n/a.md"
    keyword.index_facts(db, {uri: fact("notes", "Alpha", "first text", "2025-01-01")})
    stats = keyword.index_facts(db, {uri: fact("notes", "Alpha", "second text", "2025-01-01")})
    assert stats.indexed == 1
    idx = keyword.KeywordIndex(db)
    assert [c.uri for c in idx.candidates('"second"', ROOT, 5)] == [uri]
    assert idx.candidates('"first"', ROOT, 5) == []
    idx.close()
