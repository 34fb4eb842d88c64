"""refresh: what `secret load`, `export all` and `sync all` do by hand, every night, then every reader's
keyword index walked again. Each step and each source stands alone: one that fails is reported and the
others still run (an unmounted disk must not leave every other area a day old).

Repository sources are left to the `snapshot` job, which drops a repo file holding a known value
instead of redacting it (a value committed to a repository is a finding of its own).
"""

from __future__ import annotations

from typing import Any

from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import MuninnError
from muninn.export import pipeline
from muninn.export import sync as sync_mod
from muninn.export.redaction_report import rollup
from muninn.export.sync_gate import SyncGate
from muninn.guards.known import secret_values
from muninn.guards.undeclared import review
from muninn.nightly.jobs import Context, JobResult

REPO_KIND = "repo"


def _vault(settings: Settings, data: dict[str, Any], failures: list[str]) -> None:
    from muninn.plugins.access.vault import Vault

    if not settings.vault.files:
        data["vault"] = "no vault.files configured"
        return
    vault = Vault.open(settings)
    try:
        data["vault"] = vault.sync().as_dict()
    except MuninnError as exc:
        failures.append(f"secret load: {exc.message}")
    finally:
        vault.close()


def sync_areas(settings: Settings, areas: list[str], data: dict[str, Any], failures: list[str]) -> None:
    """Sync each area on its own (gate included): a refused or incomplete area does not stop the rest."""
    synced = data.setdefault("synced", {})
    gate = SyncGate.from_settings(settings)
    with OpenViking.user(settings) as client:
        for area in areas:
            try:
                r = sync_mod.sync(client, pipeline.area_dir(settings, area), area,
                                  batch_size=settings.export.batch_size, manifest_dir=settings.paths.sync_manifests,
                                  settings=settings, gate=gate)
            except MuninnError as exc:
                failures.append(f"sync {area}: {exc.message}")
                continue
            synced[area] = {"written": r.written, "unchanged": r.unchanged, "missing": r.missing_after_wait,
                            "conflicts": r.conflicts}   # readers' edits, kept (the backup holds them)
            if r.missing_after_wait:
                failures.append(f"sync {area}: {r.missing_after_wait} file(s) missing after wait")


def refresh_indexes(settings: Settings, data: dict[str, Any], failures: list[str]) -> None:
    from muninn.plugins.search import reader_index

    pol = reader_index.policy_or_none(settings)
    indexed = data.setdefault("indexes", {})
    for profile in (pol.profiles.values() if pol is not None else []):
        try:
            stats = reader_index.refresh(settings, profile)
        except MuninnError as exc:
            failures.append(f"keyword index of {profile.name}: {exc.message}")
            continue
        indexed[profile.name] = {"indexed": stats.indexed, "unchanged": stats.unchanged, "removed": stats.removed}


def fill_vectors(settings: Settings, data: dict[str, Any], failures: list[str]) -> None:
    """Each reader's search vectors for what its keyword index now holds (fact_vectors.py): a first
    search then embeds only its question."""
    from muninn.plugins.search import fact_vectors, reader_index

    pol = reader_index.policy_or_none(settings)
    paths = [settings.paths.search_index()]
    paths += [reader_index.index_path(settings, p) for p in (pol.profiles.values() if pol is not None else [])]
    try:
        filled = fact_vectors.fill(settings, paths)
    except MuninnError as exc:      # the sidecar down, a damaged index
        failures.append(f"search vectors: {exc.message}")
        return
    data["vectors"] = {"indexes": filled.indexes, "texts": filled.texts, "embedded": filled.embedded}


def refresh(ctx: Context) -> JobResult:
    s = ctx.settings
    data: dict[str, Any] = {}
    failures: list[str] = []
    leaks: list[str] = []
    _vault(s, data, failures)
    areas: list[str] = []
    if s.sources:
        # The clusters' Secrets into the known-values cache first; one that is down keeps its cached values.
        data["known_values"] = secret_values.refresh(s)
        reports = pipeline.run_all(s, kinds=lambda kind: kind != REPO_KIND, keep_going=True)
        data["exported"] = {name: r.as_summary() for name, r in reports.items()}
        data["redactions"] = rollup({name: e["redactions"] for name, e in data["exported"].items()})
        # `muninn redact review` lists the last export's redactions, this one's as much as a manual one's.
        review.record(s, "export", [r for rep in reports.values() for r in rep.review])
        failures += [f"export {name}: {exc.message}" for name, exc in pipeline.failed(reports).items()]
        leaks = [f"export {name}: the leak gate dropped {d['path']}: {d['reason']}"
                 for name, r in reports.items() for d in r.dropped]
        done = {name for name, r in reports.items() if r.error is None}
        areas = sorted({c.area for c in pipeline.configured(s) if c.uri in done})
        sync_areas(s, areas, data, failures)
    refresh_indexes(s, data, failures)
    fill_vectors(s, data, failures)
    data["failures"], data["dropped"] = failures, leaks
    if failures or leaks:
        said = failures + leaks
        more = f" (+{len(said) - 3} more)" if len(said) > 3 else ""
        # A step that could not run outranks a dropped file: the night's memory is incomplete.
        return JobResult("refresh", False, "; ".join(said[:3]) + more, data,
                         status="error" if failures else "findings")
    return JobResult("refresh", True, f"{len(data.get('exported', {}))} source(s) exported, {len(areas)} area(s) "
                     f"synced, {len(data['indexes'])} keyword index(es) walked, "
                     f"{data['vectors']['embedded']} new search vector(s)" + redacted_note(data)
                     + unread_note(data), data, status="warn" if data.get("known_values") else "ok")


def unread_note(data: dict[str, Any]) -> str:
    """A cluster whose Secrets could not be read this night: its cached values were used."""
    said = data.get("known_values") or []
    return f"; {said[0]}" + (f" (+{len(said) - 1} more)" if len(said) > 1 else "") if said else ""


def redacted_note(data: dict[str, Any]) -> str:
    """The table's word on redaction: how many, and the command that lists them."""
    counted = data.get("redactions")
    return f"; {counted['count']} redaction(s) (`{counted['full_list']}` lists them)" if counted else ""
