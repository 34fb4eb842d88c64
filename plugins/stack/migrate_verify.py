"""Before the switch: the copy holds the same files as the old data, tree by tree, and a search with
the new model finds a file of each tree by a line of its own text."""

from __future__ import annotations

from dataclasses import dataclass, field

from muninn.core.config import Settings
from muninn.plugins.stack import migrate_state as st
from muninn.plugins.stack import migrate_steps as steps


@dataclass
class Verified:
    files: int = 0
    missing: list[str] = field(default_factory=list)     # in the old data, not listed by the second server
    extra: list[str] = field(default_factory=list)       # listed by it, not in the old data
    searched: int = 0
    not_found: list[str] = field(default_factory=list)   # a tree whose sample file a search did not find
    # Fewer vectors embedded than files re-embedded: some kept the old model's vector (the override lets
    # the server keep them), which a search would rank as noise.
    vectors_short: bool = False

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.not_found or self.vectors_short)


def _sample_line(text: str) -> str | None:
    """A line of prose to search for: not front matter, not a heading marker alone."""
    for line in text.splitlines():
        words = line.strip().lstrip("#>-* ").split()
        if len(words) >= 3 and ":" not in words[0]:
            return " ".join(words)[:200]
    return None


def verify(settings: Settings, side: Settings, state: st.State) -> Verified:
    old = st.data(settings)
    expected = {"/".join(st.uri_of(rel)): rel for rel, _ in st.content_files(old)}
    out = Verified(files=len(expected), vectors_short=state.vectors < state.files)
    listed: set[str] = set()
    with steps.root_client(settings, side) as root:
        # An account made on the old server during the window has files but no tree of the reindex.
        for account in sorted({a for a, _ in state.trees} | {key.split("/", 1)[0] for key in expected}):
            with steps.as_admin(settings, side, account, steps.admin_user(root, account) or "") as client:
                for top in ("viking://resources", "viking://agent", "viking://user"):
                    listed |= {f"{account}/{e.uri}" for e in client.walk(top, into=lambda u: "/sessions" not in u)
                               if not e.uri.rsplit("/", 1)[-1].startswith(".")}
                for _, uri in (t for t in state.trees if t[0] == account):
                    sample = _sample(old, account, uri)
                    if sample is None:
                        continue
                    file_uri, line = sample
                    out.searched += 1
                    hits = client.find(line, target_uri=uri, limit=10)
                    if not any(str(h.get("uri", "")).startswith(file_uri) for h in hits):
                        out.not_found.append(f"{account}/{file_uri}")
    out.missing = sorted(set(expected) - listed)
    out.extra = sorted(listed - set(expected))
    return out


def _sample(old, account: str, uri: str) -> tuple[str, str] | None:
    prefix = f"{account}/{uri.removeprefix('viking://')}"
    for rel, path in st.content_files(old):
        if rel == prefix or rel.startswith(prefix + "/"):
            line = _sample_line(path.read_text(errors="replace"))
            if line:
                return st.uri_of(rel)[1], line
    return None


def describe(v: Verified) -> str:
    parts = []
    if v.missing:
        parts.append(f"{len(v.missing)} file(s) missing from the copy (first: {v.missing[0]})")
    if v.extra:
        parts.append(f"{len(v.extra)} file(s) only in the copy (first: {v.extra[0]})")
    if v.not_found:
        parts.append(f"{len(v.not_found)} tree(s) whose sample file a search did not find (first: {v.not_found[0]})")
    if v.vectors_short:
        parts.append("the reindex embedded fewer vectors than there are files")
    return "; ".join(parts)
