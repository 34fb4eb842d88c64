"""The sha256 of every file of a fetched model folder, recorded when it was downloaded and checked on
every use: a file damaged, truncated, swapped or removed after the download is never loaded.

One owner for the check: `models fetch` (the e5 wheel) and `models fetch` (the hub) both record here, and
the embedder's load, the reranker's load, `models list` and `muninn doctor` all ask `problem`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

NAME = "sha256.json"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def files_of(folder: Path) -> list[str]:
    """Every file under `folder` (relative, `/`-separated), the manifest itself excepted."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != NAME)


def record(folder: Path, source: str, revision: str = "") -> dict[str, str]:
    """Hash every file of `folder` and write the manifest beside them; returns name -> sha256."""
    sums = {name: sha256(folder / name) for name in files_of(folder)}
    body = {"source": source, "revision": revision, "files": sums}
    (folder / NAME).write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    return sums


def read(folder: Path) -> dict | None:
    try:
        body = json.loads((folder / NAME).read_text())
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) and isinstance(body.get("files"), dict) else None


def problem(folder: Path) -> str | None:
    """None when every recorded file is there with its recorded sha256; else what is wrong, in a phrase
    that names the file."""
    if not folder.is_dir():
        return f"{folder} does not exist"
    body = read(folder)
    if body is None or not body["files"]:
        return f"{folder} has no readable {NAME} (the record of its files' sha256)"
    for name, want in sorted(body["files"].items()):
        path = folder / name
        if not path.is_file():
            return f"{name} is missing from {folder}"
        if (got := sha256(path)) != want:
            return f"{name} in {folder} is not the file downloaded (sha256 {got[:12]}…, recorded {want[:12]}…)"
    return None
