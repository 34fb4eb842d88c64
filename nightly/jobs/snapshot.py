"""snapshot: every configured git repository (`sources:` of kind `repo`) exported at its ref and synced.

A repository file that holds a known value is dropped whole (every fact cut from it) and reported by
its path and the secret's id, never the value: a value committed to a repository is a leak to rotate,
not text to redact and move on. The rest goes through the usual redaction and leak gate, then sync
(whose hook puts it into every reader's keyword index).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.export import pipeline, sources
from muninn.export.facts import Fact, render
from muninn.export.redaction_report import rollup
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known.secret_values import known
from muninn.nightly.jobs import Context, JobResult, refresh


def holding_known_values(facts: Iterable[Fact], gate: LeakGate) -> dict[str, list[str]]:
    """{repository path: sorted secret ids} of every file one of whose facts holds a known value, as
    read before any redaction."""
    found: dict[str, set[str]] = {}
    for fact in facts:
        rendered = render(fact)
        hits = gate.scan_path(rendered.path) + gate.scan(rendered.text)
        if hits:
            found.setdefault(fact.source_path, set()).update(h.secret_id or h.reason for h in hits)
    return {path: sorted(ids) for path, ids in sorted(found.items())}


def export_repo(settings: Settings, c: pipeline.Configured, guards: pipeline.Guards,
                gate: LeakGate) -> tuple[pipeline.ExportReport, list[dict[str, Any]]]:
    source = sources.build(c.kind, c.path, c.options)
    facts = list(source.facts())
    bad = holding_known_values(facts, gate)
    kept = [f for f in facts if f.source_path not in bad]
    report = pipeline.write_facts(c.kind, c.path, kept, c.out_dir(settings), guards,
                                  skipped=lambda: getattr(source, "skipped", {}))
    # The path is redacted like any path muninn reports: a value in a file name stays out too.
    dropped = [{"source": c.uri, "path": guards.redactor.redact_path(path), "secret_ids": ids}
               for path, ids in bad.items()]
    return report, dropped


def snapshot(ctx: Context) -> JobResult:
    s = ctx.settings
    repos = [c for c in pipeline.configured(s) if c.kind == refresh.REPO_KIND] if s.sources else []
    if not repos:
        return JobResult("snapshot", True, "no repository configured under `sources:`", {"repos": 0})
    guards = pipeline.Guards.for_settings(s)
    gate = LeakGate(known(s), patterns=False)
    data: dict[str, Any] = {"repos": len(repos), "exported": {}, "dropped": []}
    failures: list[str] = []
    for c in repos:
        name = c.uri
        try:
            report, dropped = export_repo(s, c, guards, gate)
        except MuninnError as exc:
            failures.append(f"export {name}: {exc.message}")
            continue
        data["exported"][name] = report.as_summary()
        data["dropped"] += dropped + [{"source": name, "path": d["path"], "reason": d["reason"]}
                                      for d in report.dropped]
    data["redactions"] = rollup({name: e["redactions"] for name, e in data["exported"].items()})
    areas = sorted({c.area for c in repos if c.uri in data["exported"]})
    refresh.sync_areas(s, areas, data, failures)
    data["failures"] = failures
    said = failures + [f"{d['source']}: {d['path']} holds " + ", ".join(d.get("secret_ids") or [d.get("reason", "")])
                       for d in data["dropped"]]
    if said:
        more = f" (+{len(said) - 3} more)" if len(said) > 3 else ""
        return JobResult("snapshot", False, "; ".join(said[:3]) + more, data,
                         status="error" if failures else "findings")
    return JobResult("snapshot", True, f"{len(repos)} repo(s) exported and synced into {', '.join(areas)}"
                     + refresh.redacted_note(data), data)
