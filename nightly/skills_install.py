"""`muninn skills install`: a skill folder written into viking://agent/skills/<name>/, read back, and its
name and content hash added to the approved list the skills-drift job checks. That list is a state file
in the workspace (`<home>/skills/approved.json`), not the hand-edited muninn.yaml: an install is a
machine's act, and `nightly.approved_skills` stays what the owner typed.

The hash is the one skills-drift computes, over what the server gives back (path and text of every
file), so a skill installed tonight is not drift tomorrow unless someone changes it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from muninn.core import paths
from muninn.core.client import OpenViking
from muninn.core.config import Settings
from muninn.core.errors import ConfigError
from muninn.nightly import skills
from muninn.nightly.skills import load

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def packaged() -> dict[str, Path]:
    """The skills muninn ships, by name (each a folder holding a SKILL.md)."""
    root = paths.package_dir("muninn.plugins.search", "skills")
    if root is None or not root.is_dir():
        return {}
    return {d.name: d for d in sorted(root.iterdir()) if (d / "SKILL.md").is_file()}


def resolve(what: str) -> tuple[str, Path]:
    """A packaged skill by name, or a folder holding a SKILL.md."""
    shipped = packaged()
    if what in shipped:
        return what, shipped[what]
    folder = Path(what).expanduser()
    if not (folder / "SKILL.md").is_file():
        raise ConfigError(f"{what!r} is neither a skill muninn ships nor a folder with a SKILL.md", key="SKILL",
                          fix=f"use one of: {', '.join(shipped) or 'none'}, or a path to a skill folder")
    if not NAME.match(folder.name):
        raise ConfigError(f"skill folder name {folder.name!r} is not a skill name", path=str(folder),
                          fix="name the folder in lower case letters, digits and dashes")
    return folder.name, folder


def install(settings: Settings, what: str) -> dict[str, Any]:
    name, folder = resolve(what)
    files = {f.relative_to(folder).as_posix(): f.read_text(encoding="utf-8")
             for f in sorted(folder.rglob("*")) if f.is_file()}
    uri = f"{skills.SKILLS}/{name}"
    with OpenViking.user(settings) as client:
        client.ensure_dir(skills.SKILLS)
        client.ensure_dir(uri)
        for rel, text in files.items():
            client.write(f"{uri}/{rel}", text, wait=True)
        on_server = {e.uri[len(uri) + 1:] for e in client.walk(uri)}
        # A file of an earlier version of this skill that this one no longer has would change the hash.
        for stale in sorted(on_server - set(files)):
            client.rm(f"{uri}/{stale}")
        client.wait()
        digest = skills.content_hash(client, uri)
    pin = f"{name}@sha256:{digest}"
    entries = [e for e in load(settings) if e.partition("@")[0] != name] + [pin]
    skills.save(settings, entries)
    return {"name": name, "uri": uri, "files": sorted(files), "sha256": f"sha256:{digest}",
            "approved_in": str(settings.paths.approved_skills)}
