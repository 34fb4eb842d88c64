"""The search stages on their own: query routing, FTS5 index, fusion, validators, front matter,
recency, cap, briefing. Real SQLite; no server."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from muninn.plugins.search import briefing, doc, keyword, query, ranking, request
from muninn.plugins.search.types import Candidate, Hit, StageError, check_candidates, check_scores


@pytest.mark.parametrize("text, is_identifier", [
    ("INC-10963", True),
    ("OPS-123", True),
    ("what happened in INC-10963", True),
    ("db01.prod.example.com", True),
    ("ssh to 10.20.30.40", False),          # "ssh" is a content word outside the identifier
    ("10.20.30.40", True),
    ("3f2504e0-4f89-11d3-9a0c-0305e82c3301", True),
    ("/etc/nginx/nginx.conf", True),
    ("deploy/payments-api", True),
    ("payments-api-7d9c8b6f5d-x2k4q", True),
    ("web-03", True),
    ("how did we fix the certificate rotation", False),
    ("postgres upgrade rollback", False),
    ("When did Caroline go to the support group in 2023?", False),
])
def test_identifier_routing(text: str, is_identifier: bool) -> None:
    assert query.analyse(text).is_identifier is is_identifier


def test_fts_query_keeps_identifiers_as_phrases() -> None:
    expr = query.fts_query(query.analyse("INC-10963 certificate"))
    assert expr == '"INC 10963" OR "certificate"'


def _fact(title: str, body: str, **meta: str) -> str:
    head = "".join(f"{k}: {v}\n" for k, v in meta.items())
    return f"---\n{head}---\ncontext line\n# {title}\n{body}\n"


def test_keyword_index_ranks_exact_identifier_and_skips_unchanged(tmp_path) -> None:
    db = tmp_path / "kw.sqlite"
    files = {
        "viking://resources/n/a.md": _fact("INC-10963 cert expired", "The ingress certificate expired."),
        "viking://resources/n/b.md": _fact("Runbook", "See INC 4 and 10963 for details; inc is short."),
        "viking://resources/n/c.md": _fact("Unrelated", "Nothing here about tickets."),
    }
    assert keyword.index_facts(db, files).indexed == 3
    assert keyword.index_facts(db, files).unchanged == 3
    idx = keyword.KeywordIndex(db)
    got = idx.candidates(query.fts_query(query.analyse("INC-10963")), "viking://resources", 10)
    assert [c.uri for c in got] == ["viking://resources/n/a.md"]
    assert idx.candidates('"nothing"', "viking://resources/other", 10) == []   # target scoping
    assert keyword.remove_facts(db, ["viking://resources/n/a.md"]) == 1
    assert idx.count() == 2
    idx.close()


def test_missing_index_is_a_domain_error(tmp_path) -> None:
    with pytest.raises(keyword.KeywordIndexError, match="search-index"):
        keyword.KeywordIndex(tmp_path / "absent.sqlite")


def test_rrf_rewards_agreement_and_keeps_stage_scores() -> None:
    vec = [Candidate("u1", 0.9, {"vector": 0.9}), Candidate("u2", 0.8, {"vector": 0.8})]
    kw = [Candidate("u2", 5.0, {"keyword": 5.0}), Candidate("u3", 4.0, {"keyword": 4.0})]
    out = ranking.rrf({"vector": vec, "keyword": kw}, k=60)
    assert [c.uri for c in out] == ["u2", "u1", "u3"]
    assert out[0].stage_scores.keys() >= {"vector", "keyword", "fusion"}
    assert out[0].ranks == {"vector": 2, "keyword": 1}


@pytest.mark.parametrize("scores, n", [([1.0, 2.0], 3), ([1.0, math.nan], 2), ([math.inf], 1), (["x"], 1)])
def test_score_validator_fails_loudly(scores, n) -> None:
    with pytest.raises(StageError):
        check_scores("rerank", scores, n)


def test_candidate_validator_rejects_uris_outside_target() -> None:
    with pytest.raises(StageError, match="outside the target"):
        check_candidates("vector", [Candidate("viking://resources/b/x.md")], "viking://resources/a", 5)
    with pytest.raises(StageError, match="limit"):
        check_candidates("vector", [Candidate("viking://resources/a/x.md")] * 3, "viking://resources/a", 2)


def test_front_matter_and_plain_files() -> None:
    d = doc.parse("viking://resources/notes/db.md", "---\nid: notes/db.md#rollback\nsource: notes\ndate: 2025-03-01\n"
                  "breadcrumb: [Database upgrade 2025, Rollback]\nsource_path: notes/db.md\n---\n"
                  "About the database upgrade.\nRestore the snapshot, then repoint the app.\n")
    assert (d.title, d.breadcrumb, d.source, d.file_key) == (
        "Rollback", "Database upgrade 2025 > Rollback", "notes", "notes:notes/db.md")
    assert d.date == dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    record = doc.parse("viking://resources/inventory/db01.md", "---\nid: inventory/db01\nsource: inventory\n"
                       "breadcrumb: Inventory › host › db01\nsource_path: inventory.yaml\n---\nbody\n")
    assert (record.file_key, record.title) == (record.uri, "db01")   # records are not capped together
    plain = doc.parse("viking://resources/misc/readme.md", "# Readme\nplain text, no front matter\n")
    assert (plain.title, plain.breadcrumb, plain.date, plain.source) == ("Readme", "", None, "misc")
    broken = doc.parse("viking://resources/misc/x.md", "---\n: : not yaml [\n---\nbody\n")
    assert broken.meta == {} and broken.body.startswith("---")


@pytest.mark.parametrize("value, days", [("7d", 7), ("24h", 1), ("2w", 14), ("2026-01-01", None)])
def test_since(value: str, days: int | None) -> None:
    now = dt.datetime(2026, 1, 31, tzinfo=dt.UTC)
    got = request.parse_since(value, now)
    assert got == (now - dt.timedelta(days=days) if days else dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    assert request.parse_since("last tuesday", now) is None


def test_recency_breaks_near_ties_only() -> None:
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    cands = [Candidate("old", 1.00), Candidate("new", 0.99), Candidate("weak-new", 0.2)]
    dates = {"old": now - dt.timedelta(days=900), "new": now - dt.timedelta(days=1),
             "weak-new": now - dt.timedelta(days=1)}
    out = ranking.with_recency(cands, dates, half_life_days=180, weight=0.05, now=now)
    assert [c.uri for c in out] == ["new", "old", "weak-new"]


def test_per_file_cap() -> None:
    cands = [Candidate(f"u{i}") for i in range(5)]
    files = {"u0": "a", "u1": "a", "u2": "a", "u3": "b", "u4": "a"}
    assert [c.uri for c in ranking.per_file(cands, files, 2)] == ["u0", "u1", "u3"]


@pytest.mark.parametrize("files, limit, window, want", [
    ("aaabbc", 2, 4, ["u0", "u1", "u3", "u4", "u2", "u5"]),   # the page: 2 of a, 2 of b; the rest in order
    ("aaaab", 2, 2, ["u0", "u1", "u2", "u3", "u4"]),    # a page of 2 holds 2 of a: nothing moves
    ("aaaab", 2, 4, ["u0", "u1", "u4"]),                # too few other files to fill the page: capped, short
    ("aaaab", 1, 3, ["u0", "u4"]),
    ("abcde", 1, 4, ["u0", "u1", "u2", "u3", "u4"]),    # every hit its own file: order untouched
    ("aabba", 2, 4, ["u0", "u1", "u2", "u3", "u4"]),
    ("abaaaa", 2, 3, ["u0", "u1", "u2", "u3", "u4", "u5"]),
])
def test_per_file_cap_on_the_page_keeps_the_rest_in_order(files: str, limit: int, window: int,
                                                          want: list[str]) -> None:
    cands = [Candidate(f"u{i}") for i in range(len(files))]
    got = ranking.per_file(cands, {f"u{i}": f for i, f in enumerate(files)}, limit, window=window)
    assert [c.uri for c in got] == want
    page = [files[int(c.uri[1:])] for c in got[:window]]
    assert all(page.count(f) <= limit for f in set(page))            # the rule, whatever the order


def _hit(uri: str, source: str, chars: int = 200) -> Hit:
    return Hit(uri, uri, "", 1.0, {}, None, "x" * chars, source)


def test_briefing_budget_and_round_robin() -> None:
    hits = [_hit(f"n{i}", "notes") for i in range(6)] + [_hit("t0", "tasks"), _hit("o0", "observations")]
    text, used = briefing.build(hits, budget=250)
    assert briefing.tokens(text) <= 250
    assert [h.source for h in used[:3]] == ["notes", "tasks", "observations"]
    assert len(used) < len(hits)


def test_linear_fusion_standardises_each_feature() -> None:
    cands = [Candidate(uri=u) for u in "abc"]
    # BM25 on an open scale, cosines near each other: z-scoring makes each weigh what its weight says.
    feats = {"keyword": {"a": 30.0, "b": 10.0}, "fact": {"a": 0.20, "b": 0.30, "c": 0.40}}
    out = ranking.linear(cands, feats, {"keyword": 2.0, "fact": 1.0})
    assert [c.uri for c in out] == ["a", "b", "c"]
    kw_mean, kw_std = 40 / 3, math.sqrt(((30 - 40 / 3) ** 2 + (10 - 40 / 3) ** 2 + (40 / 3) ** 2) / 3)
    fact_z = (0.20 - 0.30) / math.sqrt(0.02 / 3)
    assert out[0].score == pytest.approx(2 * (30 - kw_mean) / kw_std + fact_z)   # c has no BM25 match: 0
    heavy = ranking.linear([Candidate(uri=u) for u in "abc"], feats, {"keyword": 0.1, "fact": 1.0})
    assert heavy[0].uri == "c"      # with BM25 turned down, the best cosine wins
    flat = ranking.linear([Candidate(uri="x"), Candidate(uri="y")], {"fact": {"x": 0.5, "y": 0.5}}, {})
    assert [c.score for c in flat] == [0.0, 0.0]       # a constant feature says nothing, and no NaN


CONTEXT_FILE = _fact("turn", "Caroline said, on 8 May 2023:\nI went to the support group yesterday.") + (
    "\n<!-- context: the conversation around this turn -->\nMelanie: how was the pottery class?\n")


def test_fact_and_context_split_at_the_marker() -> None:
    d = doc.parse("viking://resources/c/t.md", CONTEXT_FILE)
    assert "support group" in d.fact and "pottery" not in d.fact
    assert d.context == "Melanie: how was the pottery class?"
    plain = doc.parse("viking://resources/c/p.md", _fact("p", "no marker here <!-- context --> inline"))
    assert plain.context == "" and "inline" in plain.fact     # only a marker on its own line counts


def test_keyword_index_weighs_context_below_the_fact(tmp_path) -> None:
    db = tmp_path / "kw.sqlite"
    other = _fact("turn", "Melanie said:\nThe pottery class was lovely.")
    keyword.index_facts(db, {"viking://resources/c/t.md": CONTEXT_FILE, "viking://resources/c/o.md": other})
    idx = keyword.KeywordIndex(db)
    hits = idx.candidates(query.fts_query(query.analyse("pottery class")), "viking://resources", 5)
    assert [h.uri for h in hits] == ["viking://resources/c/o.md", "viking://resources/c/t.md"]
    scores = idx.scores(query.fts_query(query.analyse("pottery")), [h.uri for h in hits] + ["viking://x/none.md"])
    assert set(scores) == {h.uri for h in hits} and scores["viking://resources/c/o.md"] > scores[hits[1].uri]
    idx.close()


def test_old_index_without_context_column_is_rebuilt_from_its_rows(tmp_path) -> None:
    import sqlite3

    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript("CREATE TABLE docs (uri TEXT PRIMARY KEY, content_hash TEXT NOT NULL, date TEXT, "
                       "source TEXT, text TEXT NOT NULL);"
                       "CREATE VIRTUAL TABLE fts USING fts5(uri UNINDEXED, title, breadcrumb, body, "
                       "tokenize = 'porter unicode61');")
    conn.execute("INSERT INTO docs VALUES (?, ?, ?, ?, ?)",
                 ("viking://resources/c/t.md", "h", None, None, CONTEXT_FILE))
    conn.commit()
    conn.close()
    idx = keyword.KeywordIndex(db)
    hits = idx.candidates(query.fts_query(query.analyse("pottery")), "viking://resources", 5)
    assert [h.uri for h in hits] == ["viking://resources/c/t.md"]     # found through its context column
    idx.close()


def test_rerank_text_puts_the_fact_first_and_its_context_after() -> None:
    from muninn.plugins.search.pipeline import rerank_text

    d = doc.parse("viking://resources/c/t.md", CONTEXT_FILE)
    text = rerank_text(d, 1500)
    assert text.index("support group") < text.index("(context: Melanie: how was the pottery class?)")
    assert "<!--" not in text
    short = rerank_text(d, 40)
    assert len(short) == 40 and "pottery" not in short      # the fact keeps the budget it needs


def test_header_words_are_what_the_header_adds_to_the_fact() -> None:
    turn = doc.parse("viking://resources/c/t.md", "Caroline said, in session 1 on 8 May 2023:\n"
                     "I went to a support group.\n\n<!-- context -->\nMelanie: how was it, Caroline?\n")
    assert {"caroline", "said", "session", "may", "2023"} <= turn.header_words
    assert "support" not in turn.header_words              # a fact line, not the header
    # A title that restates the fact adds nothing; a breadcrumb the fact never says does.
    task = doc.parse("viking://resources/t.md", "---\nbreadcrumb: [backups, Restore drill]\n---\n"
                     "# Restore drill\nRun a restore drill every month.\n")
    assert task.header_words == {"backups"}
    terms = query.analyse("what did Caroline say about the support group?").terms
    assert turn.header_match(terms, facets={"caroline"}) == pytest.approx(1 / len(set(terms)))
    assert turn.header_match(terms, facets=set()) == 0.0             # not a facet: BM25's business
    assert turn.header_match([], facets={"caroline"}) == 0.0


def test_header_share_counts_files_whose_header_names_a_word(tmp_path) -> None:
    db = tmp_path / "kw.sqlite"
    uri = "viking://resources/c/{}.md".format
    keyword.index_facts(db, {
        uri("a"): _fact("John said", "I love surfing and hiking."),
        uri("b"): _fact("John said", "Runbooks are dull."),
        uri("c"): _fact("Maria said", "John loves surfing, he told me."),        # John in the body only
        uri("d"): "---\nbreadcrumb: [Runbooks, db01]\n---\nRestart the replica.\n",
    })
    idx = keyword.KeywordIndex(db)
    shares = idx.header_share(["john", "runbook", '"said"', "OR", "nope", "john"])
    assert shares == {"john": 0.5, "runbook": 0.25, "said": 0.75, "OR": 0.0, "nope": 0.0}   # stemmed like BM25
    assert idx.header_share([]) == {}
    # Within a target, the share is of the files the search sees there.
    keyword.index_facts(db, {f"viking://resources/other/{n}.md": _fact("Maria said", "Hello.") for n in range(4)})
    assert idx.header_share(["john", "maria"]) == {"john": 0.25, "maria": 0.625}
    assert idx.header_share(["john", "maria"], "viking://resources/c") == {"john": 0.5, "maria": 0.25}
    assert idx.header_share(["john"], "viking://resources/none") == {}
    # Several folders: the files under any of them are the scope.
    assert idx.header_share(["john"], ["viking://resources/c", "viking://resources/none"]) == {"john": 0.5}
    assert idx.header_share(["maria"], ["viking://resources/c", "viking://resources/other"]) == {"maria": 0.625}
    # A target that holds the whole index gives the whole index's shares.
    assert idx.header_share(["john", "maria"], "viking://resources") == idx.header_share(["john", "maria"])
    idx.close()


def _fts_rows(db) -> tuple[int, int]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return (conn.execute("SELECT count(*) FROM fts").fetchone()[0],
                conn.execute("SELECT count(*) FROM docs").fetchone()[0])
    finally:
        conn.close()


def test_updates_and_removals_leave_no_stale_keyword_rows_even_after_vacuum(tmp_path) -> None:
    import sqlite3

    db = tmp_path / "kw.sqlite"
    uri = "viking://resources/n/{}.md".format
    keyword.index_facts(db, {uri(i): _fact(f"note {i}", f"word{i} common") for i in range(5)})
    keyword.remove_facts(db, [uri(1)])
    conn = sqlite3.connect(db)
    conn.execute("VACUUM")          # rowids of a table without an INTEGER PRIMARY KEY may change here
    conn.close()
    assert keyword.index_facts(db, {uri(3): _fact("note 3", "replaced text")}).indexed == 1
    assert _fts_rows(db) == (4, 4)
    idx = keyword.KeywordIndex(db)
    find = lambda words: [c.uri for c in idx.candidates(query.fts_query(query.analyse(words)),  # noqa: E731
                                                         "viking://resources", 10)]
    assert find("word3") == [] and find("replaced") == [uri(3)] and find("word1") == []
    assert sorted(find("common")) == [uri(0), uri(2), uri(4)]
    assert set(idx.scores('"common"', [uri(0), uri(3), uri(9)])) == {uri(0)}
    idx.close()


def test_index_keyed_by_uri_alone_is_migrated_in_place(tmp_path) -> None:
    import sqlite3

    db = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(db)       # the layout before fts rows shared the docs id
    conn.executescript("CREATE TABLE docs (uri TEXT PRIMARY KEY, content_hash TEXT NOT NULL, date TEXT, "
                       "source TEXT, text TEXT NOT NULL);"
                       "CREATE VIRTUAL TABLE fts USING fts5(uri UNINDEXED, title, breadcrumb, body, context, "
                       "tokenize = 'porter unicode61');")
    for name, body in (("a", "alpha text"), ("b", "beta text")):
        u = f"viking://resources/n/{name}.md"
        conn.execute("INSERT INTO docs VALUES (?, 'h', NULL, NULL, ?)", (u, _fact(name, body)))
        conn.execute("INSERT INTO fts (uri, title, breadcrumb, body, context) VALUES (?, ?, '', ?, '')",
                     (u, name, body))
    conn.execute("DELETE FROM docs WHERE uri = 'viking://resources/n/a.md'")   # rowids now differ
    conn.execute("INSERT INTO docs VALUES ('viking://resources/n/a.md', 'h', NULL, NULL, ?)",
                 (_fact("a", "alpha text"),))
    conn.commit()
    conn.close()
    idx = keyword.KeywordIndex(db)
    assert [c.uri for c in idx.candidates('"alpha"', "viking://resources", 5)] == ["viking://resources/n/a.md"]
    assert set(idx.scores('"text"', ["viking://resources/n/a.md", "viking://resources/n/b.md"])) == {
        "viking://resources/n/a.md", "viking://resources/n/b.md"}
    idx.close()
    assert _fts_rows(db) == (2, 2)
    assert keyword.remove_facts(db, ["viking://resources/n/b.md"]) == 1 and _fts_rows(db) == (1, 1)


def test_a_migration_that_fails_half_way_leaves_the_old_table(tmp_path) -> None:
    import sqlite3

    db = tmp_path / "v1.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE docs (uri TEXT PRIMARY KEY, content_hash TEXT NOT NULL, date TEXT, "
                 "source TEXT, text TEXT NOT NULL)")
    conn.execute("INSERT INTO docs VALUES ('viking://resources/n/a.md', 'h', NULL, NULL, 'alpha')")
    conn.execute("INSERT INTO docs VALUES (NULL, 'h', NULL, NULL, 'no uri')")   # legal in layout 1, not in 2
    conn.commit()
    conn.close()
    with pytest.raises(sqlite3.IntegrityError):
        keyword.connect(db)             # fails at the copy, after the rename and the new table
    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "docs_v1" not in tables
    assert next(r[1] for r in conn.execute("PRAGMA table_info(docs)")) == "uri"     # the old layout, whole
    assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == 2
    conn.close()


def test_a_target_is_a_case_sensitive_prefix(tmp_path) -> None:
    # SQLite's LIKE folds ASCII case: "notes/%" also matched "Notes/...", another area, whose file
    # then failed the stage's own under-the-target check (a search error) or counted in its shares.
    db = tmp_path / "kw.sqlite"
    keyword.index_facts(db, {
        "viking://resources/notes/a.md": _fact("John said", "The backup failed.", date="2025-06-03"),
        "viking://resources/Notes/b.md": _fact("John said", "The backup failed again.", date="2025-06-03"),
        "viking://resources/notes_x/c.md": _fact("Maria said", "The backup failed.", date="2025-06-03"),
    })
    idx = keyword.KeywordIndex(db)
    match = query.fts_query(query.analyse("backup failed"))
    got = idx.candidates(match, "viking://resources/notes", 10)
    assert [c.uri for c in got] == ["viking://resources/notes/a.md"]
    day = (dt.datetime(2025, 6, 3, tzinfo=dt.UTC), dt.datetime(2025, 6, 4, tzinfo=dt.UTC))
    assert [c.uri for c in idx.candidates(match, "viking://resources/notes", 10, between=day)] == [got[0].uri]
    assert idx.header_share(["john"], "viking://resources/notes") == {"john": 1.0}
    assert idx.header_share(["john"], "viking://resources/Notes/") == {"john": 1.0}
    idx.close()


def test_a_walk_of_one_root_leaves_the_rows_of_another_case_alone(tmp_path) -> None:
    from types import SimpleNamespace

    class _Walker:            # the two calls build_from_openviking makes of a client
        def walk(self, root):
            return [SimpleNamespace(uri=f"{root}/a.md", stamp=None)]

        def read(self, uri):
            return _fact("John said", "The backup failed.")

    db = tmp_path / "kw.sqlite"
    keyword.index_facts(db, {"viking://resources/Notes/b.md": _fact("Maria said", "Restore worked."),
                             "viking://resources/notes/gone.md": _fact("John said", "Old.")})
    stats = keyword.build_from_openviking(_Walker(), "viking://resources/notes", db)
    assert stats.removed == 1                 # notes/gone.md, under the walked root and no longer there
    idx = keyword.KeywordIndex(db)
    assert idx.count() == 2 and idx.header_share(["maria"], "viking://resources/Notes") == {"maria": 1.0}
    idx.close()
