"""Which files on the server a backup must hold: what the server has, less what an export rebuilds.

Seed 002's rule is that the accounts file and what readers wrote cannot be rebuilt, and the vector
index and the exports can. So the backup is decided by the server's bytes, not by which exporters
exist: every file every identity with a key can see is read, and it is left out only when a sync
manifest says muninn wrote exactly those bytes at that URI (then `export all` + `sync all` bring it
back). Everything else is held: the agents' areas, whatever a reader wrote directly into a shared
area, and an exported file a reader edited in place.

Files are told apart by account and URI (with ACLs on, some are visible to one reader only), and each
keeps the label of an identity that could read it, which restore uses to choose a writer.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from muninn.core import policy
from muninn.core.config import Settings
from muninn.core.errors import AuthError, NotFound
from muninn.export.sync import read_many
from muninn.nightly import server_scan


@dataclass(frozen=True)
class ServerFile:
    uri: str
    account: str
    read_as: str            # an identity label of server_scan.identities: "cli" or a policy reader
    why: str                # "direct" (no export wrote it) or "edited" (an export's file, changed since)
    data: bytes


@dataclass
class Collected:
    files: list[ServerFile] = field(default_factory=list)
    rebuildable: int = 0            # files left out: exactly as a sync wrote them
    identities: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest_account(identity: str) -> str | None:
    """The account of a manifest's identity ("openviking:<account>:<user>"); None when it names none."""
    parts = identity.split(":")
    return parts[1] if len(parts) == 3 and parts[0] == "openviking" else None


def written_by_sync(folder: Path, server: str) -> dict[tuple[str | None, str], set[str]]:
    """{(account or None, uri): hashes a sync wrote (or was writing) there}, from every manifest for
    `server`. An unreadable manifest counts as none: then its files are held, which costs room only."""
    out: dict[tuple[str | None, str], set[str]] = defaultdict(set)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("server") != server or not data.get("to"):
            continue
        account = _manifest_account(str(data.get("identity") or ""))
        for section in ("files", "pending"):
            for rel, digest in (data.get(section) or {}).items():
                out[(account, f"{data['to']}/{rel}")].add(digest)
    return out


def derived(uri: str) -> bool:
    """The server's own files (.abstract.md, .overview.md, .relations.json): rebuilt by indexing."""
    return uri.rsplit("/", 1)[-1].startswith(".")


def collect(settings: Settings, roots: Iterable[str] | None = None, every_file: bool = False) -> Collected:
    """Every file that cannot be rebuilt, under `roots` (default: each identity's own roots); with
    `every_file`, every file there (the mirror's view of an area)."""
    owned = written_by_sync(settings.paths.sync_manifests, settings.server.base_url)
    wanted = tuple(r.rstrip("/") for r in roots) if roots is not None else None
    out = Collected()
    seen: set[tuple[str, str]] = set()
    listed: set[str] = set()
    refused: list[tuple[str, str]] = []
    for ident in server_scan.identities(settings):
        client = server_scan.connect(settings, ident)
        if client is None:
            out.unreadable.append(f"{ident.label}: no key {ident.key_name!r} in the keyring")
            continue
        out.identities.append(ident.label)
        with client:
            uris: list[str] = []
            for root in wanted if wanted is not None else ident.roots:
                note = lambda folder, who=ident.label: refused.append((who, folder))  # noqa: E731
                uris += [e.uri for e in server_scan.walk(client, root, note, listed=listed)
                         if (ident.account, e.uri) not in seen and not derived(e.uri)]
            # A file this key may list but not read is left to the next identity that can.
            got = read_many(client, list(dict.fromkeys(uris)), settings.search.fetch_workers, (NotFound, AuthError))
            for uri, data in got.items():
                seen.add((ident.account, uri))
                hashes = owned.get((ident.account, uri), set()) | owned.get((None, uri), set())
                if sha(data) in hashes and not every_file:
                    out.rebuildable += 1
                    continue
                out.files.append(ServerFile(uri, ident.account, ident.label, "edited" if hashes else "direct",
                                            data))
    out.files.sort(key=lambda f: (f.account, f.uri))
    # A folder one key may not list is only worth saying when no other key listed it.
    out.unreadable += [f"{label}: {folder}: not readable with this key" for label, folder in refused
                       if folder not in listed]
    return out


def area_of(uri: str, areas: list[str]) -> str:
    """The policy area holding `uri` (the longest), else its top folder: how a report groups files."""
    inside = [a for a in areas if uri.startswith(a + "/")]
    if inside:
        return max(inside, key=len)
    scheme, _, rest = uri.partition("://")
    head = rest.split("/")
    return f"{scheme}://{'/'.join(head[:2] if head[0] == 'resources' else head[:1])}"


def policy_areas(settings: Settings) -> list[str]:
    path = policy.path_for(settings)
    return list(policy.load(path).areas.values()) if path.exists() else []
