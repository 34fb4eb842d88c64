"""`muninn secret move`: a secret found in a note (a row of `muninn redact review`) moved into the vault.

Redaction keeps a value out of what reaches OpenViking and agents, but the note still holds it, where a shell
reads it. Moving it: the value is sealed in the vault (a pattern hit gets the id the owner names; a known
value is there already), the note is copied first to <home>/moved-notes/<time>/ (0600), and every place the
value stands in the note is replaced by a reference, `{{secret:ID}}` (muninn/core/secret_refs.py), which
the exporter shows as `<vault secret ID>`. The value itself is never printed.

The hit is found again in the note by its fingerprint (a pattern rule's match, keyed as the allowlist keys
it) or its secret id (a known value), so the review file never needs to hold a value.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from muninn.core import atomic, secret_refs
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.guards.known import secret_values
from muninn.guards.redact.allowlist import Allowlist
from muninn.guards.redact.redactor import Redactor
from muninn.guards.undeclared import review


@dataclass
class Place:
    file: Path
    lines: list[int]     # 1-based, where the value stands now
    count: int


@dataclass
class Plan:
    """What a move will do; `value` is never printed."""

    secret_id: str
    kind: str            # "pattern" (into the vault) or "value" (there already)
    rule: str | None
    value: str = field(repr=False)
    places: list[Place] = field(default_factory=list)

    @property
    def reference(self) -> str:
        return secret_refs.reference(self.secret_id)


def _rows(settings: Settings, what: str) -> list[dict]:
    def named(r: dict) -> bool:
        return r.get("fingerprint") == what or (r.get("kind") == "value" and r.get("secret_id") == what)

    rows = [r for r in review.load(settings)["export"] if r.get("file") and named(r)]
    if not rows:
        raise ConfigError(f"{what!r} is not a redaction of the last export", key="FINGERPRINT",
                          fix="copy a fingerprint (a pattern hit) or a secret id (a known value) from "
                          "`muninn redact review`")
    return rows


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _pattern_value(settings: Settings, files: list[Path], fingerprint: str) -> str:
    """The text the rule matched, found again in the note by its fingerprint."""
    allowlist = Allowlist.load(settings.paths.redact_allowlist).keyed()
    scanner = Redactor({}, patterns=True)
    for file in files:
        text = _read(file)
        for hit in scanner.redact(text).hits:
            if hit.kind == "pattern" and allowlist.fingerprint(hit.rule, text[hit.start:hit.end]) == fingerprint:
                return text[hit.start:hit.end]
    raise ConfigError(f"{fingerprint} is no longer in {', '.join(map(str, files))}", key="FINGERPRINT",
                      fix="the note changed since the export: run `muninn export all`, then `muninn redact review`")


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the note cannot be read ({type(exc).__name__})", path=str(file),
                          fix="check the file, then run `muninn redact review` again") from None


def plan(settings: Settings, what: str, new_id: str | None) -> Plan:
    rows = _rows(settings, what)
    files = sorted({Path(r["file"]) for r in rows})
    if rows[0].get("kind") == "value":
        secret_id = rows[0]["secret_id"]
        values = sorted((v for v, i in secret_values.known(settings).items() if i == secret_id), key=len, reverse=True)
        text = "".join(_read(f) for f in files)
        value = next((v for v in values if v in text), None)
        if value is None:
            raise ConfigError(f"the value of {secret_id} is no longer written in {', '.join(map(str, files))}",
                              key="ID", fix="nothing to move; `muninn export all` updates the review")
        if new_id not in (None, secret_id):
            raise ConfigError(f"{what!r} is the vault secret {secret_id!r} already", key="--id", fix="drop --id")
        out = Plan(secret_id, "value", None, value)
    else:
        if not new_id:
            raise ConfigError("a pattern hit needs the id it will have in the vault", key="--id",
                              fix=f"e.g. `muninn secret move {what} --id grafana-token`")
        out = Plan(new_id, "pattern", rows[0].get("rule"), _pattern_value(settings, files, what))
    for file in files:
        text = _read(file)
        starts = [i for i in range(len(text)) if text.startswith(out.value, i)]
        if starts:
            out.places.append(Place(file, sorted({_line(text, i) for i in starts}), len(starts)))
    return out


def backup_dir(settings: Settings) -> Path:
    return settings.paths.moved_notes / datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def apply(settings: Settings, planned: Plan, backups: Path) -> list[Path]:
    """Copy each note to `backups` (0600), then write it with the reference in place of the value.
    The vault already holds the value (the caller adds it first): a failure here leaves the note as it was."""
    backups.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(backups, 0o700)
    kept = []
    for n, place in enumerate(planned.places):
        copy = backups / f"{n}-{place.file.name}"
        shutil.copyfile(place.file, copy)
        os.chmod(copy, 0o600)
        kept.append(copy)
        mode = place.file.stat().st_mode & 0o777
        atomic.write_text(place.file, _read(place.file).replace(planned.value, planned.reference), mode=mode)
    return kept
