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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muninn.core import yamlfile
from muninn.core.config import Settings
from muninn.core.errors import ConfigError, ExitCode, MuninnError
from muninn.export import sources
from muninn.export.facts import Fact, render, unique_paths
from muninn.guards import secret_values
from muninn.guards.leak_gate import Dropped, LeakGate
from muninn.guards.redact import Redactor

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
    skipped: dict[str, str] = field(default_factory=dict)  # source paths the source passed over, and why
    out: Path | None = None

    def as_json(self) -> dict[str, Any]:
        """The `--json` contract of `muninn export`: exactly these keys."""
        return {"facts": self.facts, "written": self.written, "unchanged": self.unchanged,
                "redacted": self.redacted, "dropped": self.dropped}


@dataclass
class Guards:
    """The redactor and the gate, built once per run from the known values."""

    redactor: Redactor
    gate: LeakGate
    known: int

    @classmethod
    def from_files(cls, files: Iterable[Path]) -> Guards:
        known = secret_values.collect([Path(f) for f in files])
        return cls(redactor=Redactor(known, patterns=True), gate=LeakGate(known), known=len(known))


def run(kind: str, path: Path | str, out: Path | str, secrets_files: Iterable[Path | str] = (),
        options: dict[str, Any] | None = None, *,
        validate: Callable[[type, Any], Any] | None = None) -> ExportReport:
    """Export one source into `out`. Secrets files add known values; a secrets source adds its own."""
    source = sources.build(kind, Path(path), options, validate=validate)
    files = [Path(f) for f in secrets_files] + source.secret_files()
    return write_facts(kind, Path(path), source.facts(), Path(out), Guards.from_files(files),
                       skipped=lambda: getattr(source, "skipped", {}))


def write_facts(kind: str, path: Path, facts: Iterable[Fact], out: Path, guards: Guards,
                skipped: Callable[[], dict[str, str]] = dict) -> ExportReport:
    report = ExportReport(out=out)
    out.mkdir(parents=True, exist_ok=True)
    ledger = _ledger_file(out, kind, path)
    previous = set(json.loads(ledger.read_text())["files"]) if ledger.exists() else set()
    current: set[str] = set()
    for fact in unique_paths(facts):
        report.facts += 1
        hits = 0

        def redact(text: str) -> str:
            nonlocal hits
            if not text:
                return text
            result = guards.redactor.redact(text)
            hits += len(result.hits)
            return result.text

        clean = fact.map_text(redact)
        rendered = render(clean)
        target = out / rendered.path
        if hits:
            report.redacted += 1
            report.hits += hits
        findings = guards.gate.scan(rendered.text)
        if findings:
            report.dropped.append({"path": rendered.path, "reason": Dropped(rendered.path, findings).reason})
            target.unlink(missing_ok=True)
            continue
        current.add(rendered.path)
        data = rendered.text.encode("utf-8")
        if target.exists() and target.read_bytes() == data:
            report.unchanged += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        report.written += 1
    for stale in sorted(previous - current):
        # Only files an earlier run of this same source wrote: anything else in `out` is left alone.
        if (out / stale).is_file():
            (out / stale).unlink()
            report.removed += 1
            _prune_empty(out, (out / stale).parent)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    tmp = ledger.with_suffix(".tmp")
    tmp.write_text(json.dumps({"kind": kind, "source": str(path), "files": sorted(current)}, indent=0))
    os.replace(tmp, ledger)
    report.skipped = dict(skipped())
    return report


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

    def out_dir(self, settings: Settings) -> Path:
        return area_dir(settings, self.area) / self.name


def _relative(settings: Settings, p: Path) -> Path:
    p = p.expanduser()
    if p.is_absolute() or settings.source_file is None:
        return p
    return settings.source_file.parent / p


def exports_root(settings: Settings) -> Path:
    return _relative(settings, settings.export.out) if settings.export.out else settings.workspace / "exports"


def area_dir(settings: Settings, area: str) -> Path:
    return exports_root(settings) / area.removeprefix("viking://resources/")


def configured(settings: Settings) -> list[Configured]:
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
        out.append(Configured(i, s.kind, _relative(settings, s.path), s.area, name, s.options))
    return out


def _doc(settings: Settings) -> yamlfile.Document:
    if settings.source_file is not None:
        return yamlfile.load(settings.source_file)
    return yamlfile.Document(path=Path("muninn.yaml"), data={})


def known_files(settings: Settings, extra: Iterable[Path] = ()) -> list[Path]:
    """Every file whose values are redacted in `export all`: vault, guard, export, secrets sources."""
    files = [*settings.vault.files, *settings.guard.secret_files, *settings.export.secret_files]
    files = [_relative(settings, f) for f in files] + [Path(f) for f in extra]
    files += [_relative(settings, s.path) for s in settings.sources if s.kind == "secrets"]
    return list(dict.fromkeys(files))


def run_all(settings: Settings, extra_secrets: Iterable[Path] = ()) -> dict[str, ExportReport]:
    """Export every configured source. All of them share one set of known values."""
    doc = _doc(settings)
    entries = configured(settings)
    guards = Guards.from_files(known_files(settings, extra_secrets))
    reports: dict[str, ExportReport] = {}
    for c in entries:
        def validate(model: type, data: Any, _i: int = c.index) -> Any:
            return doc.validate(model, data, base=("sources", _i, "options"))

        source = sources.build(c.kind, c.path, c.options, validate=validate)
        reports[f"{c.area}/{c.name}"] = write_facts(c.kind, c.path, source.facts(), c.out_dir(settings), guards,
                                                    skipped=lambda s=source: getattr(s, "skipped", {}))
    return reports
