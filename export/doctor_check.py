"""`muninn doctor` lines for `sources:`: each entry's kind is one a plugin registered, its options
validate, and its path is there. What `export all` would stop on or skip, said before it runs."""

from __future__ import annotations

import time
from pathlib import Path

from muninn.core import registry
from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.export import pipeline, remote_tree


def sources(settings: Settings) -> list[Check]:
    if not settings.sources:
        return [Check("sources", "warn", "none configured: `export all` has nothing to read",
                      "add a `sources:` entry (kind, path, area) to muninn.yaml, e.g. "
                      "{kind: notes, path: ~/notes, area: viking://resources/notes}")]
    known = registry.sources()
    doc = pipeline._doc(settings)
    out: list[Check] = []
    for i, src in enumerate(settings.sources):
        where = f"{doc.path}:{doc.line(('sources', i))}" if doc.line(('sources', i)) else str(doc.path)
        name = f"source {src.kind} {src.area}"
        if src.kind not in known:
            out.append(Check(name, "fail", f"{where}: unknown source kind {src.kind!r}",
                             f"use one of: {', '.join(sorted(known))} (or install the plugin that adds it)"))
            continue
        try:
            doc.validate(known[src.kind].Options, src.options, base=("sources", i, "options"))
        except ConfigError as exc:
            out.append(Check(name, "fail", str(exc), "fix the option named (see docs/configuration.md, sources)"))
            continue
        path = settings.paths.resolve(src.path)
        if src.remote:
            out.append(_mirror(name, src.remote, path))
            continue
        if not path.exists() and getattr(known[src.kind], "absent_is_empty", False):
            out.append(Check(name, "ok", f"{path} (not written yet: empty)"))
            continue
        if not path.exists():
            out.append(Check(name, "fail", f"{where}: {path} does not exist (`export all` skips it)",
                             f"fix `path:` or mount it ({path})"))
            continue
        out.append(Check(name, "ok", str(path)))
    return out


def _mirror(name: str, remote: str, mirror: Path) -> Check:
    """A remote tree: how old its local mirror is (no network call: `export all` pulls)."""
    state = mirror / remote_tree.STATE
    if not state.exists():
        return Check(name, "warn", f"{remote}: not pulled yet (into {mirror})",
                     "run `muninn export all`; check `ssh` reaches the host without a prompt")
    hours = (time.time() - state.stat().st_mtime) / 3600
    level = "ok" if hours <= 48 else "warn"
    return Check(name, level, f"{remote}: mirror {mirror}, pulled {hours:.1f} h ago",
                 "" if level == "ok" else "the last pulls failed: run `muninn export all` and read its warning")
