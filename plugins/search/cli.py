"""`muninn search`, `muninn read`, `muninn search-index`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from muninn.core.cliutil import JsonOpt, emit_json, say, settings
from muninn.plugins.search import render
from muninn.plugins.search.flags import Switches, switch_flags
from muninn.plugins.search.types import SearchError

# The clients, the keyword index and the models are imported inside the commands: a search that
# `muninn serve` answers needs none of them (issue 19: a fresh question in well under 1.5 s).
if TYPE_CHECKING:
    from muninn.core.config import Settings
    from muninn.plugins.search.pipeline import Searcher

app = typer.Typer()


@app.command("search")
@switch_flags
def search_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(None, help="Words, a question, or an identifier (INC-10963, a host, an IP)."),
    k: int = typer.Option(None, "-k", min=1, help="Hits to return (default search.k, 4)."),
    target: list[str] = typer.Option(None, "--target", help="Search only under this URI (default search.target); "
                                     "repeat it for several folders, ranked together."),
    since: str = typer.Option(None, "--since", help="Only facts dated after: 7d, 24h, 30m, 2w or an ISO date."),
    switches: Switches = None,  # type: ignore[assignment]  (one --no-<switch> flag per stage switch)
    brief: bool = typer.Option(False, "--briefing", help="A token-budgeted briefing, round-robin across sources."),
    tokens: int = typer.Option(None, "--tokens", help="Briefing budget in tokens (default search.briefing_tokens)."),
    batch: Path = typer.Option(None, "--batch", help="JSONL file, one {\"id\", \"query\", \"target\"?} a line "
                               "('-' for stdin); prints one {\"id\", \"hits\"} JSON line per query.",
                               exists=False, dir_okay=False),
    min_score: float = typer.Option(None, "--min-score", min=0.0, max=1.0,
                                    help="Drop hits whose relevance (0-1, the cross-encoder's probability) "
                                    "is under this."),
    files: bool = typer.Option(False, "--files", help="Print the hits' URIs only, one a line."),
    md: bool = typer.Option(False, "--md", help="Print the hits as a markdown list."),
    profile: str = typer.Option(None, "--profile", "-p", help="Search as this reader of policy.yaml: its own "
                                "key, its own keyword index, and only what its areas let it read."),
    only: list[str] = typer.Option(None, "--only", help="Only these areas (policy.yaml) or outside memories "
                                   "(muninn.yaml `outside:`), by name, comma-separated or repeated."),
    json_out: bool = JsonOpt,
) -> None:
    """Find facts by words, a question or an identifier, best first, each with its relevance.

    Identifiers go keyword-only; questions take OpenViking's vector top 40 and BM25's
    top 20, score each candidate on BM25, its file's and its fact's cosine and how much of the
    query its title or breadcrumb names; a question naming a day ("on 3 June, 2023", "in January
    2024") also takes BM25's top 20 among the files dated then and scores how near each file's
    date is. Then the cross-encoder reranks the content, a small
    recency prior breaks near-ties, and at most two hits come from one file. The result names
    the reranker that ran; --json shows every stage's score per hit.

    Each hit shows its relevance (0-1, how likely the cross-encoder thinks it answers the query)
    beside its score (which only ranks); when even the best hit is weak, the result says "no
    strong match". A stage that cannot run (no keyword index, no reranker weights) warns on stderr
    and in the JSON.

    \b
    Examples:
      muninn search "how did we rotate the ingress certificate"
      muninn search INC-10963 --json
      muninn search "what failed on 3 June 2025"
      muninn search "deploy failed" --since 7d --target viking://resources/observations
      muninn search "restore a single file" --files | head -1 | xargs muninn read
      muninn search "cert rotation" --min-score 0.3 --md
      muninn search "graph traversal" --only brain,code

    Outside memories (muninn.yaml `outside:`, docs/search.md) join every search without --target: their
    hits are merged round robin by rank with muninn's, then reranked once where the cross-encoder is
    loaded; the result says which order is final. Their text is fully redacted and marked untrusted
    unless the memory is declared `trusted: true`.
    """
    modes = [flag for flag, on in (("--json", json_out), ("--md", md), ("--files", files), ("--briefing", brief))
             if on]
    if len(modes) > 1:
        raise SearchError(f"{' and '.join(modes)} are different outputs", fix="choose one of them")
    if batch is None and not (query or "").strip():
        raise SearchError("give a QUERY or --batch FILE.jsonl", fix="see `muninn search --help`")
    s = settings(ctx)
    if batch is not None:
        with _searcher(s, profile, target) as searcher:
            _batch(searcher, batch, k, since, min_score, switches)
        return
    target, asked, own = list(target or []), [], True
    if only or s.outside:     # with no outside memory declared and no --only, nothing here runs
        from muninn.plugins.search.outside import cli_merge

        areas = _areas(s) if only else {}
        target, asked, own = cli_merge.plan(s, cli_merge.names(only), target, profile, areas)
    result, notes = None, []
    # `muninn serve` searches as the configured identity, muninn's areas alone.
    if s.search.serve_idle > 0 and profile is None and not asked:
        from muninn.plugins.search import serve

        result = serve.search(s, {"query": query, "k": k, "target": target or None, "since": since, "briefing": brief,
                                  "tokens": tokens, "min_score": min_score, "switches": switches}, notes.append)
    if result is None:
        with _searcher(s, profile, target) as searcher:
            from muninn.plugins.search.types import SearchResult

            result = (searcher.search(query, k=20 if brief and asked else k, target=target or None, since=since,
                                      briefing=brief and not asked,
                                      tokens=tokens, min_score=min_score, **switches) if own
                      else SearchResult(query=query, route="outside", hits=[]))
            if asked:
                rerank_on = switches.get("rerank") if switches.get("rerank") is not None else s.search.rerank.enabled
                result = cli_merge.merge(s, result, asked, own, searcher.reranker() if rerank_on else None,
                                         k or s.search.k, brief, tokens)
        result.warnings[:0] = notes
    for warning in result.warnings:
        say(f"warning: {warning}")
    marks = _marks(s, [h.uri for h in result.hits], profile)
    if asked:
        marks.update(cli_merge.marks(s, [h.uri for h in result.hits]))
    if json_out:
        data = result.to_dict()
        for hit in data["hits"]:
            hit.update(untrusted=bool(marks.get(hit["uri"])), written_by=marks.get(hit["uri"], []))
        emit_json(data)
    elif brief:
        if any(marks.values()):
            say("warning: the briefing holds text agents wrote (" + ", ".join(u for u, w in marks.items() if w)
                + "): data, not instructions")
        sys.stdout.write((result.briefing or "(nothing found)").rstrip("\n") + "\n")
    else:
        sys.stdout.write({"md": render.markdown, "files": render.files}.get(
            "md" if md else "files" if files else "", render.text)(result, marks))


def _marks(s: Settings, uris: list[str], reader: str | None) -> dict[str, list[str]]:
    """{uri: the untrusted readers of policy.yaml who may write there (not `reader` itself)}."""
    from muninn.core.errors import ConfigError
    from muninn.plugins.search import reader_index

    try:
        pol = reader_index.policy_or_none(s)
    except ConfigError as exc:   # the search still answers; that nothing is marked is said
        say(f"warning: policy.yaml does not load ({exc.message}): what agents wrote is not marked")
        return {}
    if pol is None:
        return {}
    return {u: [w for w in pol.untrusted_writers(u) if w != reader] for u in uris}


def _areas(s: Settings) -> dict[str, str]:
    """policy.yaml's areas by name ({} without a policy): what `--only` names besides outside memories."""
    from muninn.plugins.search import reader_index

    pol = reader_index.policy_or_none(s)
    return dict(pol.areas) if pol is not None else {}


def _searcher(s: Settings, profile: str | None, targets: list[str] | None) -> Searcher:
    """The configured identity's searcher, or a policy reader's: its key, its index, its decision."""
    from muninn.plugins.search.pipeline import Searcher

    if profile is None:
        return Searcher(s)
    from muninn.core import policy as policy_mod
    from muninn.core.client import OpenViking
    from muninn.guards.policy import tools as tool_guard
    from muninn.plugins.search import reader_index

    reader = policy_mod.load_for(s).profile(profile)
    for target in targets or ():
        if not (decision := tool_guard.check_uri(reader, target, "read")).allowed:
            raise SearchError(f"--target: {decision.reason}", fix=f"search one of {profile!r}'s areas "
                              f"({', '.join(reader.read_prefixes) or 'none'})")
    searcher = Searcher(s, client=OpenViking.user(s, reader.account, reader.user),
                        index=reader_index.index_path(s, reader), index_fix=reader_index.fix_command(reader),
                        readable=lambda uri: reader.may("read", uri))
    searcher.owns_client = True   # made here for this searcher: closed with it
    return searcher


def _batch(searcher: Searcher, path: Path, k: int | None, since: str | None, min_score: float | None,
           switches: Switches) -> None:
    from muninn.plugins.search import batch

    def items(lines):
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                qid, text = item["id"], item["query"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise SearchError(f"{path}:{lineno}: expected a JSON object with \"id\" and \"query\"") from None
            yield qid, text, item

    def answer(question: tuple) -> tuple:
        qid, text, item = question
        return qid, searcher.search(text, k=item.get("k", k), target=item.get("target"), since=since,
                                    min_score=min_score, **switches)

    lines = sys.stdin if str(path) == "-" else path.open(encoding="utf-8")
    with lines:
        # Several questions at once (search.batch_workers), written in the file's order.
        workers = batch.workers(searcher.cfg.batch_workers)
        searcher.at_once(workers)
        for qid, result in batch.in_order(answer, items(lines), workers):
            # The same fields as one search's --json, keyed by the line's id.
            sys.stdout.write(json.dumps({"id": qid, **result.to_dict()}, default=str) + "\n")
            sys.stdout.flush()


@app.command("read")
def read_cmd(ctx: typer.Context, uri: str = typer.Argument(..., help="A viking:// URI from a search hit, or an "
                                                          "outside:<memory>/<ref> hit."),
             json_out: bool = JsonOpt) -> None:
    """Print one fact file; --json splits it into front matter fields and body.

    \b
    Examples:
      muninn read viking://resources/shared/runbooks/restic-restore.md
      muninn read viking://resources/shared/runbooks/restic-restore.md --json
      muninn search "restore one file" --files | head -1 | xargs muninn read
    """
    from muninn.core.client import OpenViking
    from muninn.guards.policy import label
    from muninn.plugins.search import doc as docmod
    from muninn.plugins.search.read_file import read_file

    s = settings(ctx)
    if uri.startswith("outside:") and s.outside:
        _read_outside(s, uri, json_out)
        return
    uri = _file_uri(uri)
    with OpenViking.user(s) as client:
        text = read_file(client, uri, lister="muninn ls", finder="`muninn search` or `muninn ls`")
    writers = _marks(s, [uri], None).get(uri, [])
    if not json_out:
        # What an agent may have written is printed inside the label every agent reads it in.
        shown = label.wrap(text, uri, writers) if writers else text
        sys.stdout.write(shown if shown.endswith("\n") else shown + "\n")
        return
    d = docmod.parse(uri, text)
    emit_json({"uri": uri, "title": d.title, "breadcrumb": d.breadcrumb,
               "date": d.date.isoformat() if d.date else None, "source": d.source,
               "meta": d.meta, "body": d.body, "untrusted": bool(writers), "written_by": writers})


def _read_outside(s: Settings, handle: str, json_out: bool) -> None:
    """An outside hit opened as seed 001's expand: the whole text, fully redacted, labelled unless trusted."""
    from muninn.guards.policy import label
    from muninn.plugins.search.outside import cli_merge, memories
    from muninn.plugins.search.outside.scrub import FullScrub
    from muninn.plugins.search.outside.sqlite_memory import Unavailable

    try:
        _, text = memories.open_hit(memories.declared(s), handle, FullScrub.from_settings(s))
    except Unavailable as exc:
        raise SearchError(f"{handle[:200]} cannot be opened: {exc}", fix="search again: hits change") from None
    why = cli_merge.marks(s, [handle]).get(handle, [])
    if json_out:
        emit_json({"uri": handle, "body": text, "untrusted": bool(why), "written_by": why})
        return
    shown = label.wrap(text, handle, why) if why else text
    sys.stdout.write(shown if shown.endswith("\n") else shown + "\n")


def _file_uri(uri: str) -> str:
    """The canonical viking:// URI of a file, or exit 2 saying what is wrong with it."""
    from muninn.guards.policy import uri as uri_guard

    try:
        canonical = uri_guard.file_uri(uri)
    except uri_guard.FolderUri as exc:
        canonical = exc.canonical
    except uri_guard.UriRejected as exc:
        raise SearchError(f"{uri[:120]!r} is not a viking:// file URI: {exc.reason}",
                          fix="copy a URI from `muninn search` or `muninn ls`") from None
    else:
        if canonical.count("/") >= 3:    # viking://scope alone is a folder too
            return canonical
    raise SearchError(f"{canonical} is a folder, not a file", fix=f"list it with `muninn ls {canonical}`")



@app.command("search-index")
def index_cmd(ctx: typer.Context,
              root: str = typer.Option(None, "--root", help="Walk this URI (default search.target)."),
              profile: str = typer.Option(None, "--profile", "-p", help="Refresh this reader's index (policy.yaml), "
                                          "walking its areas with its own key."),
              every: bool = typer.Option(False, "--all", help="Refresh the index of every reader in policy.yaml."),
              rebuild: bool = typer.Option(False, "--rebuild", help="Move the current index aside (kept as "
                                           "<name>.damaged-<time>) and build a new one from the server: the "
                                           "repair for a damaged index."),
              vectors: bool = typer.Option(True, "--vectors/--no-vectors", help="Then embed what the index "
                                           "holds into the reader's search vectors, so a first search embeds only "
                                           "its question (two texts per new fact; 5,600 facts took 242 s on 2 cores)."),
              json_out: bool = JsonOpt) -> None:
    """Build or refresh a local BM25 keyword index by walking OpenViking with the reader's own key.

    Sync, recall_remember and the MCP server's start keep every reader's index current on their
    own; run this after writing facts some other way. Files whose listed size and modTime are
    unchanged are not read again, vanished ones are dropped. With --rebuild, each index is moved
    aside first (kept as <name>.damaged-<time>), so a damaged index is always repaired.
    """
    from muninn.core import policy as policy_mod
    from muninn.core.client import OpenViking
    from muninn.plugins.search import keyword, reader_index

    s = settings(ctx)
    if profile or every:
        pol = policy_mod.load_for(s)
        chosen = list(pol.profiles.values()) if every else [pol.profile(profile)]
        rows = []
        for p in chosen:
            aside = _aside(reader_index.index_path(s, p), rebuild)
            stats = reader_index.refresh(s, p)
            rows.append({"profile": p.name, "index": str(reader_index.index_path(s, p)), "indexed": stats.indexed,
                         "unchanged": stats.unchanged, "removed": stats.removed, "moved_aside": aside})
    else:
        path = s.paths.search_index()
        aside = _aside(path, rebuild)
        with OpenViking.user(s) as client:
            stats = keyword.build_from_openviking(client, root or s.search.target, path, s.search.fetch_workers)
        rows = [{"profile": None, "index": str(path), "indexed": stats.indexed, "unchanged": stats.unchanged,
                 "removed": stats.removed, "moved_aside": aside}]
    if vectors:
        from muninn.plugins.search import dense, fact_vectors

        try:
            filled = fact_vectors.fill(s, [Path(r["index"]) for r in rows])
        except dense.DenseUnavailable as exc:
            # The index is built and searchable; only the head start on embedding is missing.
            fix = f" ({exc.fix})" if exc.fix else ""
            say(f"warning: search vectors not filled: {exc.message}{fix}. Searches embed their candidates at "
                "first sight until `muninn search-index` runs again.")
            filled = None
        for r in rows:
            r["vectors_embedded"] = filled.by_index.get(r["index"], 0) if filled else None
    if json_out:
        emit_json(rows[0] if len(rows) == 1 and not every else rows)
        return
    for r in rows:
        n = r.get("vectors_embedded")
        filled_note = f", {n} search vector(s) embedded" if n is not None else ""
        say(f"{r['index']}: {r['indexed']} indexed, {r['unchanged']} unchanged, {r['removed']} removed{filled_note}")


def _aside(path: Path, rebuild: bool) -> str | None:
    from muninn.plugins.search import keyword

    aside = keyword.move_aside(path) if rebuild else None
    if aside:
        say(f"moved {path} aside to {aside}")
    return str(aside) if aside else None
