"""One export run: source → facts → redact → render → leak gate → fact files on disk.

Redaction and the gate are deliberately separate code (both in `guards/`): the redactor
rewrites, the gate only reads the rendered text and refuses. A file the gate refuses is not
written (an older copy is removed), it is listed in `dropped` with the reason, and the
command exits 3. Reports carry secret ids and paths, never values.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from muninn.core import atomic, factfile, yamlfile
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError
from muninn.export import redaction_report, remote_tree, sources
from muninn.export.facts import Fact, render, unique_paths
from muninn.export.redaction_report import FactMarks, Mark, path_entry
from muninn.export.source_lines import SourceFiles
from muninn.guards.gate.leak_gate import Dropped, LeakGate
from muninn.guards.known import secret_values
from muninn.guards.known.forms import ENCODINGS
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.redactor import Redactor, Tables
from muninn.guards.rules import MARKER_PREFIX

LEDGER_DIR = ".muninn-export"


class LeakGateDropped(MuninnError):
    """The gate refused at least one rendered file: the export is incomplete on purpose."""

    exit_code = ExitCode.LEAK_GATE_DROPPED


@dataclass
class ExportReport:
    facts: int = 0
    written: int = 0
    unchanged: int = 0
    redacted: int = 0  # facts in which at least one value or pattern was replaced
    dropped: list[dict[str, str]] = field(default_factory=list)
    removed: int = 0  # files of an earlier run whose fact no longer exists
    hits: int = 0  # replacements in total
    # Each replacement: file, line, kind, rule or secret id, a pattern hit's fingerprint (export/redaction_report.py)
    redactions: list[dict[str, Any]] = field(default_factory=list)
    # The same redactions placed in the source (file and line there, None when unsure), for
    # `muninn redact review` (export/source_lines.py); not part of `--json`.
    review: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # source paths the source passed over, and why
    undated: dict[str, str] = field(default_factory=dict)  # source paths exported undated: why the date was no date
    out: Path | None = None
    error: MuninnError | None = None  # `export all`: this source could not be exported (the others were)

    def as_json(self) -> dict[str, Any]:
        """The `--json` contract of `muninn export`: exactly these keys (and `failed`, the reason, for a
        source of `export all` that could not be exported)."""
        out = {"facts": self.facts, "written": self.written, "unchanged": self.unchanged,
               "redacted": self.redacted, "dropped": self.dropped, "redactions": self.redactions}
        return out | ({"failed": self.error.message} if self.error is not None else {})

    def as_summary(self) -> dict[str, Any]:
        """What a nightly report keeps: `as_json` with the redactions counted by rule and secret id
        (redaction_report.counts), never listed: the full list is `muninn export all --json`."""
        return self.as_json() | {"redactions": redaction_report.counts(self.redactions)}


@dataclass
class Cleaned:
    fact: Fact
    hits: int
    numbered: Fact | None     # the same fact with numbered markers (redaction_report), when anything was hit
    marks: FactMarks
    in_path: int = 0          # values replaced in the path, key or source path


@dataclass
class Guards:
    """The redactor and the gate, built once per run from the known values and the owner's allowlist."""

    redactor: Redactor
    gate: LeakGate
    known: int
    allowlist: Allowlist = field(default_factory=lambda: Allowlist(Path(os.devnull)))
    _source_marks: list[Mark] = field(default_factory=list)
    source_seen: dict[str, set[Mark]] = field(default_factory=dict)   # every source hit of the run, by name

    @classmethod
    def from_files(cls, files: Iterable[Path], allowlist: Allowlist | None = None) -> Guards:
        return cls.from_known(secret_values.collect([Path(f) for f in files]), allowlist)

    @classmethod
    def from_known(cls, known: dict[str, str], allowlist: Allowlist | None = None,
                   tables: Tables | None = None) -> Guards:
        allowlist = allowlist or Allowlist(Path(os.devnull))
        # Export text is read by people and agents, not streamed: every form of the table, and the
        # normalised view (values split by markup, invisible characters or a wrap) and cut prefixes.
        # The allowlist is asked by both, each with its own question (guards/redact/allowlist.py).
        return cls(redactor=Redactor.for_facts(known, allowlist, tables=tables),
                   gate=LeakGate(known, encodings=ENCODINGS,
                                 allow=allowlist.allows_text if allowlist.entries else None),
                   known=len(known), allowlist=allowlist)

    @classmethod
    def for_settings(cls, settings: Settings, extra_secrets: Iterable[Path] = ()) -> Guards:
        """Every configured known value, and the owner's allowlist (keyed: reports print fingerprints)."""
        known = secret_values.known(settings, extra_secrets)
        return cls.from_known(known, Allowlist.load(settings.paths.redact_allowlist).keyed(),
                              tables=_tables(settings, known))

    @staticmethod
    def redactor_for_settings(settings: Settings) -> Redactor:
        """The redactor of `for_settings` without its gate (the observe hook writes a line, gates nothing)."""
        known = secret_values.known(settings)
        return Redactor.for_facts(known, Allowlist.load(settings.paths.redact_allowlist).keyed(),
                                  tables=_tables(settings, known))

    def attach(self, source: object) -> None:
        """A source that cuts or encodes text itself (observations) redacts before it does; one that
        derives titles, ids and paths from file names (notes) takes the names through `safe_name` first."""
        hook = getattr(source, "redact_with", None)
        if hook is not None:
            hook(self._redact_in_source)
        names = getattr(source, "redact_names_with", None)
        if names is not None:
            names(self.safe_name)

    def safe_name(self, rel: str) -> str:
        """A relative file name with every secret the pattern rules find in it replaced by `redacted`,
        read with `-` and `_` as the spaces a name stands for (`wifi-passphrase-Garten7458+.md`), before a
        title ("Wifi passphrase garten7458+"), an id or a URI is made from it in another spelling."""
        # A folder's name is read as a file's is: `/` as the space between words (`door pin 4821/lobby.md`,
        # `creds/ops:Pw9Xx12Lq/notes.md`), so a value in any part of the path is found.
        spaced = rel.replace("/", " ")
        views = dict.fromkeys((rel, rel.replace("_", " "), rel.replace("-", " ").replace("_", " "),
                               spaced, spaced.replace("-", " ").replace("_", " ")))
        spans = sorted({(h.start, h.end) for view in views for h in self.redactor.redact(view).hits
                        if h.kind == "pattern"})
        merged: list[list[int]] = []
        for start, end in spans:            # one character for one in every view: spans line up
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in reversed(merged):
            rel = rel[:start] + "redacted" + rel[end:]
        return rel

    def _redact_in_source(self, text: str) -> str:
        if not text:
            return text
        result = self.redactor.redact(text)
        # Facts are made and cleaned one at a time (`write_facts`): `clean` adds these to the fact.
        marks = [FactMarks(self.allowlist).mark(text, h) for h in result.hits]
        self._source_marks.extend(marks)
        for mk in marks:
            self.source_seen.setdefault(mk.name, set()).add(mk)
        # The hook's own reading of dumps (an undeclared token in `xxd` output), for a line written by hand.
        return self.redactor.redact_dumped(result.text)

    def clean(self, fact: Fact) -> Cleaned:
        """The fact with every text field redacted, and its path, key and source path free of any
        case, slug or separator variant of a value (a value in a file name or heading); the number
        of replacements, and where each one is (redaction_report)."""
        marks = FactMarks(self.allowlist, source=self._source_marks)
        self._source_marks = []

        def field_text(text: str, which: int) -> str:
            return marks.field_text(text, self.redactor.redact)[which] if text else text

        clean = fact.map_text(lambda t: field_text(t, 0))
        paths = {name: getattr(clean, name) for name in ("path", "key", "source_path")}
        safe = {name: self.redactor.redact_path(value) for name, value in paths.items()}
        in_path = sum(safe[name] != paths[name] for name in paths)
        hits = len(marks.marks) + len(marks.source) + in_path
        numbered = replace(fact.map_text(lambda t: field_text(t, 1)), **safe) \
            if marks.marks or marks.source else None
        return Cleaned(replace(clean, **safe), hits, numbered, marks, in_path)


def _tables(settings: Settings, known: dict[str, str]) -> Tables:
    """From the sealed cache when they were made from exactly these values (guards/redact/cache.py)."""
    from muninn.guards.redact import cache as redact_cache

    return redact_cache.tables(settings, known, ENCODINGS, views=True)


def run(kind: str, path: Path | str, out: Path | str, secrets_files: Iterable[Path | str] = (),
        options: dict[str, Any] | None = None, *,
        validate: Callable[[type, Any], Any] | None = None, allowlist: Path | None = None,
        known: dict[str, str] | None = None) -> ExportReport:
    """Export one source into `out`. `known` (from `secret_values.known`) and secrets files give the known
    values; a secrets source adds its own. `allowlist`: the owner's fingerprint file
    (settings.paths.redact_allowlist); without it no pattern hit is allowed and none gets a fingerprint."""
    source = sources.build(kind, Path(path), options, validate=validate)
    values = dict(known or {})
    for value, secret_id in secret_values.collect([Path(f) for f in secrets_files] + source.secret_files()).items():
        values.setdefault(value, secret_id)
    # Exported without a `sources:` entry, its own `.env` values count too.
    for value, secret_id in secret_values.keyed(getattr(source, "known_values", list)()).items():
        values.setdefault(value, secret_id)
    guards = Guards.from_known(values, Allowlist.load(allowlist).keyed() if allowlist else None)
    guards.attach(source)
    return write_facts(kind, Path(path), source.facts(), Path(out), guards,
                       skipped=lambda: getattr(source, "skipped", {}), undated=lambda: getattr(source, "undated", {}),
                       kept=lambda: getattr(source, "kept", set()), source_files=SourceFiles.for_path(Path(path)))


def write_facts(kind: str, path: Path, facts: Iterable[Fact], out: Path, guards: Guards,
                skipped: Callable[[], dict[str, str]] = dict,
                undated: Callable[[], dict[str, str]] = dict,
                kept: Callable[[], set[str]] = set, source_files: SourceFiles | None = None) -> ExportReport:
    """`kept`: source paths skipped this run (unreadable) whose facts of earlier runs stay, not pruned.
    `source_files`: the source's root, to place each redaction in its source file (ExportReport.review)."""
    report = ExportReport(out=out)
    with atomic.translated(out):
        out.mkdir(parents=True, exist_ok=True)
    ledger = _no_link(out, _ledger_file(out, kind, path))
    files = json.loads(ledger.read_text())["files"] if ledger.exists() else {}
    # An older muninn's ledger lists names without hashes: "" vouches for nothing at sync.
    previous: dict[str, str] = files if isinstance(files, dict) else dict.fromkeys(files, "")
    current: dict[str, str] = {}   # relative path -> sha256 of the bytes written (what sync checks)
    # Redacted before paths are made unique: two names that differ only by a value collide once
    # the value is gone.
    cleaned = [guards.clean(fact) for fact in facts]
    placed = list(zip(unique_paths([c.fact for c in cleaned]), cleaned, strict=True))
    for fact, _ in placed:                   # every target checked before the first is written
        _no_link(out, out / f"{fact.path}.md")
    for fact, c in placed:
        report.facts += 1
        rendered = render(fact)
        target = out / rendered.path
        if c.hits:
            report.redacted += 1
            report.hits += c.hits
        if c.in_path:
            report.redactions.append(path_entry(rendered.path))
            report.review.append(_in_source(path_entry(rendered.path), fact.source_path, None))
        if MARKER_PREFIX in rendered.text:   # a neighbour's marker too, in a fact with no hit of its own
            numbered = render(c.numbered).text if c.numbered is not None else rendered.text
            origins: list[tuple[str, int, int] | None] = []
            found = c.marks.locate(rendered.path, numbered, guards.source_seen, origins)
            report.redactions += found
            for e, origin in zip(found, origins, strict=True):
                shown, line = source_files.where(fact.source_path, origin) if source_files else \
                    (fact.source_path, None)
                report.review.append(_in_source(e, shown, line))
        findings = guards.gate.scan_path(rendered.path) + guards.gate.scan(rendered.text)
        if findings:
            report.dropped.append({"path": guards.redactor.redact_path(rendered.path),
                                   "reason": Dropped(rendered.path, findings).reason})
            with atomic.translated(target):
                target.unlink(missing_ok=True)
            continue
        data = rendered.text.encode("utf-8")
        current[rendered.path] = hashlib.sha256(data).hexdigest()
        if target.exists() and target.read_bytes() == data:
            report.unchanged += 1
            continue
        # Atomic: a full disk or a kill leaves the previous file (or none), never a truncated one.
        atomic.write_bytes(target, data)
        report.written += 1
    keep = kept()
    for stale in sorted(set(previous) - set(current)):
        # Only files an earlier run of this same source wrote: anything else in `out` is left alone.
        if keep and _from_kept(out / stale, keep):
            current[stale] = previous[stale]         # its note was skipped, not deleted
            continue
        if (out / stale).is_file():
            with atomic.translated(out / stale):
                (out / stale).unlink()
                _prune_empty(out, (out / stale).parent)
            report.removed += 1
    # The ledger names the source too: redacted like a path, so a value in a folder name stays out.
    atomic.write_text(ledger, json.dumps({"kind": kind, "source": guards.redactor.redact_path(str(path)),
                                          "files": dict(sorted(current.items()))}, indent=0))
    report.skipped = {guards.redactor.redact_path(where): why for where, why in skipped().items()}
    # Said to people, so redacted like a path (an id column may hold anything).
    report.undated = {guards.redactor.redact_path(where): why for where, why in undated().items()}
    return report


def _in_source(e: dict[str, Any], source: str, line: int | None) -> dict[str, Any]:
    """A review entry: the redaction at its source file and line (None: not certain), and the fact's."""
    return {"file": source, "line": line, "kind": e["kind"], "rule": e["rule"], "secret_id": e["secret_id"],
            "fingerprint": e["fingerprint"], "fact": e["file"], "fact_line": e["line"]}


def _no_link(out: Path, target: Path) -> Path:
    """`target`, when writing it stays inside `out`: not a symlink, no linked folder on the way."""
    if target.is_symlink() or not target.parent.resolve().is_relative_to(out.resolve()):
        raise atomic.WriteFailed(f"{target} is a symlink or lies in a linked folder: export never writes through "
                                 "one, and wrote nothing", fix="remove the link from the export folder, then again")
    return target


def _from_kept(file: Path, kept: set[str]) -> bool:
    """Whether a fact file of an earlier run came from one of the `kept` source paths."""
    try:
        return factfile.parse(file.read_text(encoding="utf-8")).source_path in kept
    except (OSError, ValueError, MuninnError):
        return False


def ledger_hashes(root: Path) -> dict[str, str]:
    """Every file the export wrote under `root` (relative to `root`) -> sha256 of its bytes, read
    from the ledgers of the export folders at, below or above `root` (syncing a sub-folder of an
    export). A ledger of an older muninn lists files without hashes: those map to "", which no
    file matches, so they are refused until exported again."""
    root = Path(root).resolve()
    ledgers = sorted(root.rglob(f"{LEDGER_DIR}/*.json"))
    ledgers += [f for parent in root.parents for f in sorted((parent / LEDGER_DIR).glob("*.json"))]
    out: dict[str, str] = {}
    for ledger in ledgers:
        base = ledger.parent.parent
        try:
            files = json.loads(ledger.read_text()).get("files", {})
        except (OSError, ValueError, AttributeError):
            continue  # an unreadable ledger vouches for nothing: its files are refused
        entries = files.items() if isinstance(files, dict) else ((f, "") for f in files)
        for rel, digest in entries:
            full = base / rel
            if full.is_relative_to(root):
                out[full.relative_to(root).as_posix()] = digest
    return out


def _ledger_file(out: Path, kind: str, path: Path) -> Path:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
    return out / LEDGER_DIR / f"{kind}-{digest}.json"


def _prune_empty(root: Path, folder: Path) -> None:
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


# --- `sources:` in muninn.yaml ---


@dataclass(frozen=True)
class Configured:
    """One configured source, resolved: where its facts go locally and in OpenViking."""

    index: int
    kind: str
    path: Path
    area: str
    name: str
    options: dict[str, Any]
    remote: str | None = None
    known_hosts: Path | None = None

    @property
    def at_root(self) -> bool:
        """`name: .`: the source's files are the area's own, not a sub-folder's."""
        return self.name == ROOT

    @property
    def uri(self) -> str:
        """Where the source's files sit on the server (also its name in reports)."""
        return self.area if self.at_root else f"{self.area}/{self.name}"

    def out_dir(self, settings: Settings) -> Path:
        return area_dir(settings, self.area) if self.at_root else area_dir(settings, self.area) / self.name

    def old_dir(self, settings: Settings) -> Path:
        """Where a root source exported before it was moved to the root: the sub-folder its kind named."""
        return area_dir(settings, self.area) / self.kind

    def exported_before_the_move(self, settings: Settings) -> bool:
        """Its ledger is still in `old_dir`: the move to the root is not done (a sub-folder of the tree that
        happens to be named after the kind has no ledger of its own)."""
        return _ledger_file(self.old_dir(settings), self.kind, self.path).is_file()


ROOT = "."


def area_dir(settings: Settings, area: str) -> Path:
    return settings.paths.exports / area.removeprefix("viking://resources/")


def configured(settings: Settings, check_old: bool = True) -> list[Configured]:
    if not settings.sources:
        raise ConfigError("no `sources:` configured", path=str(settings.source_file or "muninn.yaml"),
                          fix="add a `sources:` list (kind, path, area) to muninn.yaml, or export one source "
                              "with `muninn export KIND PATH --out DIR`")
    out: list[Configured] = []
    seen: dict[tuple[str, str], int] = {}
    doc = _doc(settings)
    for i, s in enumerate(settings.sources):
        name = s.name or s.kind
        if (s.area, name) in seen:
            raise doc.error_at(("sources", i, "name"), f"two sources write {s.area}/{name}",
                               fix="give one of them a different `name:`")
        seen[(s.area, name)] = i
        sources.get(s.kind)
        out.append(Configured(i, s.kind, settings.paths.resolve(s.path), s.area, name, s.options, s.remote,
                              settings.paths.resolve(s.known_hosts) if s.known_hosts else None))
    for c in out:
        if c.at_root:
            _check_root(settings, doc, c, out, check_old)
    return out


def _check_root(settings: Settings, doc: yamlfile.Document, c: Configured, every: list[Configured],
                check_old: bool) -> None:
    """A source at an area's root owns the area's whole tree: another source in it, or in an area below
    it, would share its folders. Its files from before the move (`<area>/<kind>/`) still in the export
    folder would be synced beside the new ones: two copies of every note."""
    for other in every:
        if other is not c and (other.area == c.area or other.area.startswith(c.area + "/")):
            raise doc.error_at(("sources", c.index, "name"), f"{c.area} has a source at its root (`name: .`) "
                               f"and another source in it ({other.uri})",
                               fix="give the root source an area of its own, or drop `name: .`")
    if check_old and c.exported_before_the_move(settings):
        raise ConfigError(f"the {c.kind} source of {c.area} is now at the area's root (`name: .`), but its "
                          f"files are still under {c.area}/{c.kind}/",
                          path=str(settings.source_file or "muninn.yaml"),
                          fix="run `muninn move-to-root` once: it moves them on the server, keeping readers' edits")


def _doc(settings: Settings) -> yamlfile.Document:
    if settings.source_file is not None:
        return yamlfile.load(settings.source_file)
    return yamlfile.Document(path=Path("muninn.yaml"), data={})


def run_all(settings: Settings, extra_secrets: Iterable[Path] = (),
            kinds: Callable[[str], bool] = lambda kind: True, keep_going: bool = False,
            progress: Callable[[int, str], None] | None = None) -> dict[str, ExportReport]:
    """Export every configured source (whose kind `kinds` accepts). All of them share one set of known
    values. A source whose path is absent (an unmounted disk) gets a report with its `error` and the
    others still run; with `keep_going` (the nightly job) so does a source that fails any other way.
    Without it, bad input stops the run: a typo in muninn.yaml is for the user to fix now.
    `progress(total, name)` is told each source as it starts."""
    doc = _doc(settings)
    entries = [c for c in configured(settings) if kinds(c.kind)]
    guards = Guards.for_settings(settings, extra_secrets)
    reports: dict[str, ExportReport] = {}
    for c in entries:
        def validate(model: type, data: Any, _i: int = c.index) -> Any:
            return doc.validate(model, data, base=("sources", _i, "options"))

        name = c.uri
        if progress is not None:
            progress(len(entries), name)
        pulled = None
        if c.remote:
            try:
                pulled = remote_tree.pull_or_keep(c.remote, c.path, c.options.get("pattern", "**/*.md"),
                                                  c.known_hosts)
            except MuninnError as exc:      # no mirror yet: as a path that is absent, the others still run
                reports[name] = ExportReport(out=c.out_dir(settings), error=exc)
                continue
        # A log no call has been written to yet is empty; a notes tree that is not there is a fault.
        if not c.path.exists() and not getattr(sources.get(c.kind), "absent_is_empty", False):
            reports[name] = ExportReport(out=c.out_dir(settings), error=ConfigError(
                f"{c.kind} source not found", path=str(c.path), fix="check the path (or mount it)"))
            continue
        try:
            source = sources.build(c.kind, c.path, c.options, validate=validate)
            guards.attach(source)
            report = write_facts(c.kind, c.path, source.facts(), c.out_dir(settings), guards,
                                 skipped=lambda s=source: getattr(s, "skipped", {}),
                                 undated=lambda s=source: getattr(s, "undated", {}),
                                 kept=lambda s=source: getattr(s, "kept", set()),
                                 source_files=SourceFiles.for_path(c.path))
        except MuninnError as exc:
            if not keep_going:
                raise
            report = ExportReport(out=c.out_dir(settings), error=exc)
        if pulled is not None and pulled.warning:
            report.skipped[c.remote or ""] = pulled.warning
        reports[name] = report
    return reports


def failed(reports: dict[str, ExportReport]) -> dict[str, MuninnError]:
    return {name: r.error for name, r in reports.items() if r.error is not None}
