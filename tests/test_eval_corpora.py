"""The corpora harness (evals/lab/corpora): the converters write source trees only, every committed
question set is checkable, gold is what the exporter wrote, and one small run goes end to end
through the real stack with its baselines."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest

from muninn.core.errors import MuninnError
from muninn.evals.lab.corpora import docbook, harness, locomo_notes, model_loco, replay, report, sources, trace
from muninn.evals.lab.corpora import questions as qmod
from muninn.evals.lab.corpora.baselines import settings_for
from muninn.evals.lab.corpora.passage_lab import every_start
from muninn.evals.lab.corpora.window_lab import put_window
from muninn.plugins.search import doc as docmod
from muninn.plugins.search.stages.rerank_stage import rerank_text

PAGE = """<html><head><link rel="up" href="unix-services.html" title="Chapter 9. Unix Services" /></head><body>
<div id="banner">Download the ebook</div><ul class="docnav"><li>Prev</li></ul>
<div class="section"><h2 class="title">9.5. <code>syslog</code> System Events</h2>
<div class="toc">9.5.1. Principle</div><a class="indexterm" id="x"></a>
<h3 class="title">9.5.1. Principle and Mechanism</h3><p>The rsyslogd daemon reads /etc/rsyslog.conf and pg_dump.</p>
<pre>*.crit;kern.none  /var/log/crit</pre>
<h4>9.5.1.1. Deeper</h4><p>Nested text.</p></div></body></html>"""


def test_docbook_page_keeps_headings_and_drops_navigation() -> None:
    title, md = docbook.page_markdown(PAGE)
    assert title == "syslog System Events"
    assert md.startswith("# syslog System Events\n")
    assert "## Principle and Mechanism" in md and "### Deeper" in md
    for noise in ("Download the ebook", "Prev", "9.5.1. Principle\n", "9.5.1."):
        assert noise not in md
    assert "pg_dump" in md and "pg\\_dump" not in md            # notes are not markdown-escaped
    assert "```\n*.crit;kern.none  /var/log/crit\n```" in md     # code stays fenced, verbatim
    assert docbook.chapter_of(PAGE) == "Unix Services"


def _xsl_page(body: str, up: str = "index.en.html") -> str:
    """A DocBook XSL page (the Debian Reference's stylesheet) around `body`."""
    return (f'<html><head><link rel="up" href="{up}" title="Debian Reference"/></head><body>'
            f'<div class="chapter"><h1 class="title">Chapter 3. The system initialization</h1>{body}</div>'
            '</body></html>')


def _admonition(label: str) -> str:
    return (f'<div class="{label.lower()}"><table border="0" summary="{label}"><tr><td rowspan="2">'
            f'<img alt="[{label}]" src="images/{label.lower()}.png"/></td><th>{label}</th></tr>'
            '<tr><td><p>Edit <code class="literal">/etc/default/grub</code> then run update-grub.</p>'
            '<p>Second paragraph.</p></td></tr></table></div>')


@pytest.mark.parametrize("label", ["Tip", "Note", "Warning", "Caution", "Important"])
def test_an_admonition_box_keeps_its_text_and_label_without_the_frame(label: str) -> None:
    _, md = docbook.page_markdown(_xsl_page(_admonition(label)))
    assert f"**{label}:** Edit `/etc/default/grub` then run update-grub.\n\nSecond paragraph." in md
    assert "|" not in md and f"[{label}]" not in md and f"\n{label}\n" not in md


@pytest.mark.parametrize("body, kept", [
    # a data table (its own summary) stays a table, even beside a box
    ('<div class="table"><table summary="List of boot loaders"><tr><th>package</th><th>initrd</th></tr>'
     '<tr><td>grub-pc</td><td>Supported</td></tr></table></div>', "| grub-pc | Supported |"),
    ('<div class="tip"><p>A box drawn without a table.</p></div>', "A box drawn without a table."),
    ('<div class="note"><h3 class="title">Note</h3><p>PostgreSQL style.</p></div>', "### Note\n\nPostgreSQL style."),
])
def test_only_the_framing_table_of_a_box_is_unboxed(body: str, kept: str) -> None:
    _, md = docbook.page_markdown(_xsl_page(body))
    assert kept in md


@pytest.mark.parametrize("body, inline, gone", [
    ('<p>Store it read-only. <a href="#ftn.a" class="footnote" id="a"><sup class="footnote">[4]</sup></a></p>'
     '<div class="footnotes"><hr/><div id="ftn.a" class="footnote"><p><a href="#a" class="para"><sup class="para">'
     '[4] </sup></a> A write-once <code class="literal">CD-R</code> medium. </p></div></div>',
     "Store it read-only. (A write-once `CD-R` medium.)", ["[4]", "---"]),
    # two notes, cited mid-sentence, each at its own place
    ('<p>Too many ways<a href="#ftn.b" class="footnote"><sup>[1]</sup></a> and plugins'
     '<a href="#ftn.c" class="footnote"><sup>[2]</sup></a> exist.</p><div class="footnotes">'
     '<div id="ftn.b" class="footnote"><p><a class="para">[1]</a>pathogen</p></div>'
     '<div id="ftn.c" class="footnote"><p><a class="para">[2]</a>vundle</p></div></div>',
     "Too many ways (pathogen) and plugins (vundle) exist.", ["[1]", "[2]"]),
    # a citation whose note is missing loses its marker, not the sentence
    ('<p>Dangling<a href="#ftn.z" class="footnote"><sup>[9]</sup></a> here.</p>', "Dangling here.", ["[9]"]),
])
def test_a_footnote_is_read_where_it_is_cited(body: str, inline: str, gone: list[str]) -> None:
    _, md = docbook.page_markdown(_xsl_page(body))
    assert inline in md
    for marker in gone:
        assert marker not in md


@pytest.mark.parametrize("up, chapter", [
    ("index.html", ""), ("index.en.html", ""), ("index.pt-br.html", ""), ("ch03.en.html", "Debian Reference"),
])
def test_a_page_below_the_book_index_is_a_chapter_of_its_own(up: str, chapter: str) -> None:
    assert docbook.chapter_of(_xsl_page("", up)) == chapter


def _httpd_page(body: str, path: str = '<a href="../index.html">Version 2.4</a> &gt; <a href="./">Modules</a>') -> str:
    """A page of the httpd manual's own stylesheet around `body`."""
    return ('<html><body><div id="page-header"><p class="menu">Modules | Directives</p></div>'
            '<div id="path"><a href="https://www.apache.org/">Apache</a> &gt; <a href="https://httpd.apache.org/">'
            'HTTP Server</a> &gt; <a href="https://httpd.apache.org/docs/">Documentation</a> &gt; '
            f'{path}</div><div id="page-content"><div id="preamble"><h1>Apache Module mod_x</h1>'
            '<div class="toplang"><p>Available Languages: en</p></div></div>'
            '<div id="quickview"><h3>Topics</h3><ul><li>Intro</li></ul></div>'
            f'<h2 id="d">XDirective Directive <a class="permalink" href="#d">&para;</a></h2>{body}'
            '<div class="top"><a href="#page-header">top</a></div></div><div id="footer">Copyright</div>'
            '</body></html>')


@pytest.mark.parametrize("body, kept", [
    # prose quoted TeX-style next to a code span: plain quotes, so no line opens a fence
    ("<p>``<code>%{name}c</code>'' cryptography format</p>", '"`%{name}c`" cryptography format'),
    ("<pre>echo ``kept''</pre>", "echo ``kept''"),
    # an example written a <br> a line: a fence, its comment lines not headings
    ('<div class="example"><p><code>\n        # Unknown method<br>\n        WOW / HTTP/1.0<br>\n      </code></p>'
     '</div>', "```\n# Unknown method\nWOW / HTTP/1.0\n```"),
])
def test_httpd_manual_text_keeps_its_examples_and_quotes(body: str, kept: str) -> None:
    title, md = docbook.page_markdown(_httpd_page(body))
    assert title == "Apache Module mod_x"
    assert kept in md
    assert "## XDirective Directive\n" in md
    for noise in ("Available Languages", "Topics", "Directives", "Copyright", "¶", "top"):
        assert noise not in md


@pytest.mark.parametrize("path, chapter", [
    ('<a href="../index.html">Version 2.4</a> &gt; <a href="./">Modules</a>', "Modules"),
    ('<a href="./">Version 2.4</a>', ""),
])
def test_an_httpd_page_takes_its_chapter_from_the_breadcrumb_bar(path: str, chapter: str) -> None:
    assert docbook.chapter_of(_httpd_page("", path)) == chapter


@pytest.mark.parametrize("raw, clean", [
    ("9.5.1. Principle and Mechanism", "Principle and Mechanism"),
    ("Chapter 9. Unix Services", "Unix Services"),
    ("26.1. SQL Dump", "SQL Dump"),
    ("B.2. Something", "Something"),
    ("pg_dump", "pg_dump"),
    ("  spaced\n  title ", "spaced title"),
])
def test_section_numbers_leave_headings(raw: str, clean: str) -> None:
    assert docbook.clean_title(raw) == clean


def test_locomo_converter_writes_one_dated_source_note_per_turn(tmp_path) -> None:
    conv = {"speaker_a": "Caroline", "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."},
                          {"speaker": "Melanie", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a cake"}],
            "qa": [{"question": "When?", "evidence": ["D1:1"], "category": 2},
                   {"question": "Adversarial", "evidence": ["D1:2"], "category": 5},
                   {"question": "Two turns", "evidence": ["D1:2; D1:1"], "category": 1}]}
    files = locomo_notes.convert(conv, tmp_path)
    assert [f.relative_to(tmp_path).as_posix() for f in files] == ["session-01/turn-001.md", "session-01/turn-002.md"]
    text = files[0].read_text()
    assert text.startswith("---\ndate: 2023-05-08\n---\n# Caroline, 8 May 2023 at 1:56 PM (session 1)\n")
    assert "content_hash" not in text and "breadcrumb" not in text      # a source note, not a fact file
    assert "[shares a photo: a cake]" in files[1].read_text()
    qs = locomo_notes.questions(conv, "t").questions
    assert [q.label for q in qs] == ["temporal", "multi-hop"]
    assert qs[1].files == ["session-01/turn-001.md", "session-01/turn-002.md"]


@pytest.mark.parametrize("fields, ok", [
    ({"answer": "some text"}, True),
    ({"files": ["a.md"]}, True),
    ({"expect": ["x/y"]}, True),
    ({}, False),
    ({"answer": "some text", "files": ["a.md"]}, False),
    ({"answer": "abc"}, False),                  # too short to be unique
])
def test_a_question_names_exactly_one_kind_of_gold(fields: dict, ok: bool) -> None:
    if ok:
        qmod.Question(id="q", kind="howto", question="why?", **fields)
    else:
        with pytest.raises(ValueError):
            qmod.Question(id="q", kind="howto", question="why?", **fields)


def test_check_flags_answers_that_are_missing_or_repeated(tmp_path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nThe port is\n   5432 by default.\n\nrepeat me\n")
    (tmp_path / "b.md").write_text("# B\n\nrepeat me\n")
    qs = qmod.QuestionSet(name="t", corpus="t", questions=[
        qmod.Question(id="wrapped", kind="identifier", question="port?", answer="port is 5432 by default"),
        qmod.Question(id="twice", kind="buried", question="which?", answer="repeat me"),
        qmod.Question(id="absent", kind="buried", question="where?", answer="not in the tree"),
    ])
    problems = qmod.check(tmp_path, qs)
    assert [p.split(":")[0] for p in problems] == ["twice", "absent"]


# built from `apt-get download`
DEBIAN_MANUALS = ["debian-handbook", "postgresql", "debian-reference", "apache-httpd"]


@pytest.mark.parametrize("name", [n for n in sources.CORPORA if n not in DEBIAN_MANUALS])
def test_every_offline_corpus_builds_and_its_answers_are_unique(name: str, tmp_path) -> None:
    built = sources.build(name, tmp_path)
    assert built.questions.questions
    if built.tree is not None:
        assert qmod.check(built.tree, built.questions) == []


@pytest.mark.parametrize("name", DEBIAN_MANUALS)
def test_documentation_question_sets_are_big_and_varied(name: str) -> None:
    qs = qmod.load(qmod.QUESTIONS_DIR / f"{name}.yaml").questions
    kinds = {q.kind for q in qs}
    assert len(qs) >= 40 and {"identifier", "howto", "vocabulary", "buried", "near-duplicate"} <= kinds
    assert all(q.answer for q in qs)


def test_the_large_manual_asks_most_where_search_is_weak() -> None:
    qs = qmod.load(qmod.QUESTIONS_DIR / "apache-httpd.yaml").questions
    count = {k: sum(q.kind == k for q in qs) for k in ("buried", "vocabulary", "near-duplicate")}
    assert len(qs) >= 60 and min(count.values()) >= 10, count


HTTPD_SLICE = Path(sources.HERE, "httpd_slice")


def test_the_httpd_manual_builds_from_a_slice_and_its_questions_there_check(tmp_path) -> None:
    """Seven shipped pages stand in for the downloaded package (the cache's version stamp says it is
    there): the corpus builds offline, the skip list drops the link list and the Portuguese page, the
    sidebar and menus are gone, and every question whose answer is on these pages finds one section."""
    pkg = tmp_path / "debs" / "apache2-doc"
    shutil.copytree(HTTPD_SLICE, pkg / "tree/usr/share/doc/apache2-doc/manual/en",
                    ignore=shutil.ignore_patterns("*.txt"))
    (pkg / ".version").write_text("2.4.68-1~deb12u1")
    built = sources.build("apache-httpd", tmp_path)
    assert built.origin == "apache2-doc 2.4.68-1~deb12u1, 5 pages"
    assert built.tree is not None
    pages = sorted(p.relative_to(built.tree).as_posix() for p in built.tree.rglob("*.md"))
    assert pages == ["modules/mod-ratelimit.md", "modules/mod-remoteip.md", "programs/htdbm.md",
                     "programs/htpasswd.md", "stopping-and-restarting-apache-http-server/stopping.md"]
    remoteip = (built.tree / "modules/mod-remoteip.md").read_text()
    assert remoteip.startswith("# Apache Module mod_remoteip\n")
    for noise in ("Available Languages", "Report a bug", "Copyright", "¶", "Topics"):
        assert noise not in remoteip
    secs = harness.sections(built, "r")
    here = [q for q in built.questions.questions if harness.gold(q, secs)]
    assert len(here) >= 10
    slice_set = qmod.QuestionSet(name="slice", corpus="apache-httpd", questions=here)
    assert qmod.check(built.tree, slice_set) == []
    assert all(len(harness.gold(q, secs)) == 1 for q in here)


def test_a_source_option_reaches_the_exporter_as_muninn_yaml_would_set_it(tmp_path) -> None:
    """The lever measured is the product's own option: smaller sections give more facts, and the
    run's settings carry the option into the `sources:` entry sync exports from."""
    plain = harness.sections(sources.build("ops", tmp_path), "r")
    opts = sources.parse_options(["notes.max_chars=200", "notes.min_chars=0"])
    built = sources.build("ops", tmp_path, opts)
    assert {s.options.get("max_chars") for s in built.sources if s.kind == "notes"} == {200}
    assert all(not s.options for s in built.sources if s.kind != "notes")
    assert len(harness.sections(built, "r")) > len(plain)


@pytest.mark.parametrize("pair", ["max_chars=800", "notes.max_chars", "=1", "notes.=3"])
def test_a_source_option_must_name_kind_option_and_value(pair: str) -> None:
    with pytest.raises(MuninnError, match="KIND.OPTION=VALUE"):
        sources.parse_options([pair])


def test_metrics_score_the_first_right_hit() -> None:
    m = harness.metrics([0, 3, 9, None], [1.0, 2.0, 3.0, 4.0])
    assert (m["hit@1"], m["hit@4"], m["hit@10"]) == (0.25, 0.5, 0.75)
    assert m["MRR"] == pytest.approx((1 + 1 / 4 + 1 / 10) / 4) and m["p50_ms"] == 2.5
    assert harness.first_rank(["a", "b", "c"], {"c", "z"}) == 2 and harness.first_rank(["a"], {"z"}) is None


@pytest.mark.integration
def test_the_harness_runs_end_to_end_on_the_fixture(stack, tmp_path) -> None:
    built = sources.build("fixture", tmp_path)
    # The two embedders muninn's own dependencies carry (e5 needs `embed fetch`, mpnet `models fetch`).
    models = ["bge-small", "MiniLM-L6"]
    runs = harness.run(stack.settings, {"fixture": built}, tmp_path / "work", say=lambda m: None,
                       trace_dir=tmp_path / "trace", dense_models=models)
    (r,) = runs
    assert r.facts >= 3 and r.questions == len(built.questions.questions)
    assert set(r.variants) == {*harness.VARIANTS, "dense bge-small", "dense MiniLM-L6", "BM25 baseline"}
    for name, m in r.variants.items():
        for key in ("hit@1", "hit@4", "hit@10", "MRR"):
            assert 0.0 <= m[key] <= 1.0 and not math.isnan(m[key]), (name, key)
        assert m["hit@1"] <= m["hit@4"] <= m["hit@10"] and m["n"] == r.questions
    # The baselines really ranked: on four plain questions over three notes they find something.
    assert all(r.variants[b]["hit@10"] > 0 for b in harness.baseline_names(models))
    assert r.variants["defaults"]["hit@10"] > 0
    assert len(r.ranks) == r.questions * len(r.variants)
    md = report.table(runs)
    assert "| defaults |" in md and "*dense MiniLM-L6*" in md and "*BM25 baseline*" in md
    data = json.loads(report.write_json(runs, tmp_path / "c.json").read_text())
    assert data[0]["name"] == "fixture"
    assert report.plot(runs, tmp_path / "c.png").stat().st_size > 1000
    # The trace replays: the recorded candidates, ranked offline by the product's own fusion, blend,
    # recency and cap code, give every question the rank the live pipeline gave it.
    recs = trace.read(tmp_path / "trace" / "fixture.jsonl")
    cfg = stack.settings.search
    live = [x["first"] for x in r.ranks if x["variant"] == "defaults"]
    assert len(recs) == r.questions and any(c["ce"] is not None for rec in recs for c in rec["cands"])
    assert replay.firsts(recs, replay.Setting.of(cfg), cfg) == live
    off = replay.firsts(recs, dataclasses.replace(replay.Setting.of(cfg), rerank=False), cfg)
    assert off == [x["first"] for x in r.ranks if x["variant"] == "--no-rerank"]


def _run(name: str) -> harness.CorpusRun:
    m = harness.metrics([0, None], [5.0, 7.0])
    return harness.CorpusRun(name=name, origin="o", facts=2, questions=2, variants={"defaults": m,
                             "BM25 baseline": m}, by_kind={"defaults": {"howto": 0.5}})


def test_the_table_goes_between_the_markers_and_the_findings_around_it_stay(tmp_path) -> None:
    md = tmp_path / "corpora.md"
    md.write_text(f"# Title\n\nfindings before\n\n{report.BEGIN}\nold table\n{report.END}\n\nfindings after\n")
    report.write_markdown([_run("a")], md, "cmd a")
    text = md.read_text()
    assert "old table" not in text and "findings before" in text and "findings after" in text
    assert "| defaults | 2 | 0.500 | 0.500 | 0.500 | 0.500 | 6 |" in text and "| *BM25 baseline* |" in text
    report.write_markdown([_run("b")], md, "cmd b")                  # a rerun replaces, never appends
    assert md.read_text().count(report.BEGIN) == 1 and "### b" in md.read_text() and "### a" not in md.read_text()


def test_runs_made_apart_merge_from_their_json(tmp_path) -> None:
    report.write_json([_run("a")], tmp_path / "a.json")
    report.write_json([_run("b")], tmp_path / "b.json")
    merged = report.read_json(tmp_path / "a.json") + report.read_json(tmp_path / "b.json")
    assert [r.name for r in merged] == ["a", "b"] and merged[0].variants["defaults"]["hit@1"] == 0.5


@pytest.mark.parametrize("record, refused", [
    ({"warnings": [], "degraded": False}, False),
    ({"warnings": ["linear fusion skipped, results are in RRF order: sidecar timed out"], "degraded": True}, True),
    ({"warnings": ["no cross-encoder: weights not found"], "degraded": True}, True),
])
def test_replay_refuses_a_trace_recorded_on_a_fallback_path(tmp_path, record: dict, refused: bool) -> None:
    rec = {"id": "q", "kind": "howto", "gold": ["viking://r/a.md"], "route": "hybrid", "window": False,
           "linear": True, "features": [], "now": "2026-01-01T00:00:00+00:00", "cands": [], **record}
    (tmp_path / "c.jsonl").write_text(json.dumps(rec) + "\n")
    if refused:
        with pytest.raises(replay.DegradedTrace, match="1 of 1 recorded questions fell back"):
            replay.load(tmp_path)
    else:
        assert replay.load(tmp_path) == {"c": [rec]}


def _m(h4: float, h10: float, n: int = 10) -> dict:
    return {"hit@1": 0.0, "hit@4": h4, "hit@10": h10, "MRR": 0.0, "n": n, "p50_ms": 0.0}


@pytest.mark.parametrize("defaults, rival, failed", [
    ((0.8, 0.9), (0.7, 0.9), []),                                   # better or equal at both cut-offs
    ((0.8, 0.9), (0.8, 0.9), []),
    ((0.7, 0.9), (0.8, 0.8), []),                                   # one question behind: sync noise
    ((0.6, 0.9), (0.8, 0.85), ["hit@4"]),                           # two behind
    ((0.8, 0.7), (0.7, 0.9), ["hit@10"]),
    ((0.5, 0.6), (0.8, 0.85), ["hit@4", "hit@10"]),
])
def test_the_gate_names_each_loss_beyond_one_question_to_a_single_retriever_or_baseline(defaults, rival,
                                                                                      failed) -> None:
    for name in ("keyword only", "vectors only", "dense e5-small-v2", "dense mpnet", "dense baseline",
                 "BM25 baseline"):
        run = harness.CorpusRun(name="c", origin="o", facts=1, questions=10,
                                variants={"defaults": _m(*defaults), name: _m(*rival)})
        got = report.gate([run])
        assert [g.split()[2] for g in got] == failed and all(name in g for g in got)


def test_the_gate_compares_against_the_best_baseline_at_each_cut_off() -> None:
    """Best at hit@4 and best at hit@10 may be two models; each loss names the one that beat the defaults."""
    variants = {"defaults": _m(0.70, 0.80, 20), "dense bge-small": _m(0.60, 0.95, 20),
                "dense e5-small-v2": _m(0.85, 0.80, 20), "dense MiniLM-L6": _m(0.75, 0.90, 20),
                "BM25 baseline": _m(0.50, 0.60, 20), "--no-rerank": _m(1.0, 1.0, 20)}    # not a rival
    run = harness.CorpusRun(name="c", origin="o", facts=1, questions=20, variants=variants)
    got = report.gate([run])
    assert len(got) == 2
    assert "hit@4 0.700 (14 of 20) < dense e5-small-v2 0.850 (17 of 20)" in got[0]
    assert "hit@10 0.800 (16 of 20) < dense bge-small 0.950 (19 of 20)" in got[1]
    assert report.gate([run], noise=3) == []                        # the allowance is a count of questions
    assert report.gate([harness.CorpusRun(name="c", origin="o", facts=1, questions=20,
                                          variants={"defaults": _m(0.7, 0.8, 20)})]) == []   # nothing to beat


def test_a_baseline_model_that_is_not_on_disk_stops_the_run_before_any_sync(tmp_path, monkeypatch) -> None:
    from muninn.core.config import EmbedSettings, Settings
    from muninn.core.errors import ExitCode

    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    with pytest.raises(MuninnError) as err:          # never reaches the server (none is running here)
        harness.run(Settings(home=tmp_path), {}, tmp_path / "work", dense_models=["bge-small", "e5-small-v2"])
    assert err.value.exit_code == ExitCode.STACK and "muninn models fetch" in (err.value.fix or "")
    assert settings_for("mpnet", EmbedSettings(max_tokens=128)).model_dump() == \
        EmbedSettings(model="sentence-transformers/all-mpnet-base-v2", max_tokens=128).model_dump()


def _trace(folder: Path, corpora: list[str], gold_first: bool) -> Path:
    """One question per corpus, two candidates; the right one leads on every feature, or trails on all
    (then it is second: hit@4 and hit@10 still, MRR 0.5)."""
    folder.mkdir(parents=True)
    for name in corpora:
        good, bad = (0.9, 0.1) if gold_first else (0.1, 0.9)
        cands = [{"uri": f"viking://r/{u}.md", "score": s, "features": {"keyword": s, "vector": s}, "ce": s,
                  "date": None, "file": f"{u}.md"} for u, s in (("gold", good), ("other", bad))]
        rec = {"id": "q", "kind": "howto", "gold": ["viking://r/gold.md"], "route": "hybrid", "window": False,
               "linear": True, "features": ["keyword", "vector"], "now": "2026-01-01T00:00:00+00:00",
               "cands": cands, "warnings": [], "degraded": False}
        (folder / f"{name}.jsonl").write_text(json.dumps(rec) + "\n")
    return folder


def test_model_loco_chooses_the_model_that_wins_on_the_other_corpora(tmp_path, capsys) -> None:
    names = ["a", "b", "c"]
    assert model_loco.main([f"worse={_trace(tmp_path / 'w', names, False)}",
                            f"better={_trace(tmp_path / 'b', names, True)}", "--only", "keyword_weight=1,2"]) == 0
    out = capsys.readouterr().out
    folds = [line for line in out.splitlines() if line.startswith(("| a |", "| b |", "| c |"))]
    assert len(folds) == 3 and all("| better: " in f and "| 1.000 / 1.000 / 1.000 | 1.000 / 1.000 / 0.500 |" in f
                                   for f in folds)


def test_model_loco_refuses_traces_of_other_corpora(tmp_path) -> None:
    with pytest.raises(SystemExit, match="not the corpora of the first model"):
        model_loco.main([f"x={_trace(tmp_path / 'x', ['a', 'b'], True)}", f"y={_trace(tmp_path / 'y', ['a'], True)}",
                         "--only", "keyword_weight=1"])


@pytest.mark.parametrize("lists, tops, kept", [
    (None, (20, 20), True),                                  # recorded before ranks were kept: as recorded
    ({"vector": 19}, (20, 20), True),
    ({"vector": 20}, (20, 20), False),                       # 0-based: the 21st is past a list of 20
    ({"vector": 25}, (30, 20), True),
    ({"keyword": 25, "vector": 35}, (30, 20), False),
    ({"keyword": 25, "vector": 35}, (20, 30), True),
    ({"keyword": 3}, (5, 5), True),
])
def test_a_longer_recorded_list_replays_cut_to_the_setting(lists, tops, kept) -> None:
    cand = {"uri": "viking://r/a.md"} | ({"lists": lists} if lists is not None else {})
    assert replay.within(cand, {"vector": tops[0], "keyword": tops[1]}) is kept


def test_a_candidate_past_every_cut_cannot_be_found(tmp_path) -> None:
    rec = json.loads((_trace(tmp_path / "t", ["a"], True) / "a.jsonl").read_text())
    rec["cands"][0]["lists"] = {"vector": 30}          # the right one came only from a list of 40
    rec["cands"][1]["lists"] = {"keyword": 0}
    base = replay.SearchSettings()
    short, long = (dataclasses.replace(replay.Setting.of(base), vector_top=n) for n in (20, 40))
    assert replay.firsts([rec], short, base) == [None] and replay.firsts([rec], long, base) == [0]


@pytest.mark.parametrize("only, field, values", [
    ("vector_top=20,40", "vector_top", [20]),                     # 40 is the current one, listed first
    ("keyword_weight=0.5,1,0.5", "keyword_weight", [0.5]),       # 1 is current (e5's); a repeat counts once
    ("rerank=false", "rerank", [False]),
])
def test_one_reading_of_only_keeps_each_fields_type(only, field, values) -> None:
    current = replay.Setting.of(replay.SearchSettings())
    got = replay.varied(current, only)
    assert got[0] == current and [getattr(s, field) for s in got[1:]] == values
    assert all(type(getattr(s, field)) is type(getattr(current, field)) for s in got)


def test_the_passage_ceiling_reads_a_fact_from_every_paragraph_start_as_the_reranker_would() -> None:
    d = docmod.parse("viking://a/b.md", "---\nbreadcrumb: Guide › Setup\ntitle: Setup\n---\n"
                     "First paragraph.\n\nSecond says port 5432.\n\nThird.\n")
    texts = every_start(d, 1500)
    assert texts[0] == rerank_text(d, 1500)
    assert texts[1:] == ["Guide › Setup\n… Second says port 5432.\n\nThird.", "Guide › Setup\n… Third."]
    assert all(len(t) == 20 for t in every_start(d, 20))   # cut to what the reranker is given


@pytest.mark.parametrize("which, recorded, after", [
    ("fact", {"fact": 0.2, "vector": 0.5, "keyword": 3.0}, {"fact": 0.7, "vector": 0.5, "keyword": 3.0}),
    ("vector", {"fact": 0.2, "vector": 0.5}, {"fact": 0.2, "vector": 0.7}),
    ("vector", {"fact": 0.2, "vector": 0.9}, {"fact": 0.2, "vector": 0.9}),     # the file's own is kept when higher
    ("both", {"fact": 0.2, "vector": 0.9}, {"fact": 0.7, "vector": 0.7}),
    ("both", {"keyword": 3.0}, {"keyword": 3.0}),                               # never adds a feature
])
def test_the_window_lab_puts_the_best_window_only_where_it_was_asked(which, recorded, after) -> None:
    put_window(recorded, 0.7, which)
    assert recorded == after


def test_capped_baselines_show_a_plain_ranking_as_the_products_cap_would() -> None:
    from muninn.evals.lab.corpora.capped_baselines import capped, found

    ranked = ["p1#a", "p1#b", "p1#c", "p2#a", "p1#d", "p3#a"]
    file_of = {u: u.split("#")[0] for u in ranked}
    assert capped(ranked, file_of, None) == ranked
    # Two of page 1 in the first four places; its third and fourth come after the page of four.
    assert capped(ranked, file_of, 2) == ["p1#a", "p1#b", "p2#a", "p3#a", "p1#c", "p1#d"]
    assert capped(ranked, file_of, 3)[:4] == ["p1#a", "p1#b", "p1#c", "p2#a"]
    firsts = [0, 3, 4, None]
    assert (found(firsts, 4), found(firsts, 10)) == (2, 3)
