"""`muninn source add PATH`: a folder becomes a `sources:` entry in muninn.yaml and an area in
policy.yaml that the readers reach, in one step (issue #51 §4: a source no area covers exports fine and
every agent is refused there, silently).

The new area gets each reader's level on the area it is like (`--like`, default the first notes source's
area): a second notes folder is read and written by whoever reads and writes the first. Both files are
edited by inserting text (plugins/stack/yaml_insert.py), checked by their own loaders before they are
written, so comments stay and a file is never left half-changed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from muninn.core import atomic, config
from muninn.core import policy as policy_mod
from muninn.core.config import Settings, SourceSettings
from muninn.core.errors import ConfigError
from muninn.plugins.stack import yaml_insert

# The level each kind of reader gets when there is no area to copy levels from (init's notes levels).
KIND_LEVELS = {"owner": "manage", "assistant": "write", "agent": "read"}


@dataclass
class Plan:
    config_file: Path
    policy_file: Path
    uri: str
    area: str
    config_text: str | None = None          # None: muninn.yaml already has the source
    policy_text: str | None = None          # None: a reader already reaches the area
    levels: dict[str, str] = field(default_factory=dict)
    said: list[str] = field(default_factory=list)


def target(src: SourceSettings) -> str:
    """Where a source's facts land: its area, or the sub-folder `name` (default: the kind)."""
    return src.area if src.name == "." else f"{src.area}/{src.name or src.kind}"


def area_name(folder: Path) -> str:
    """An area name from a folder name: lowercase letters, digits, - and _ (policy.yaml's rule)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", folder.name.lower()).strip("-_")
    name = name if name and name[0].isalpha() else f"notes-{name}".rstrip("-")
    return name[:63]


def plan(settings: Settings, config_file: Path, folder: Path, kind: str, area: str | None,
         like: str | None) -> Plan:
    pol = policy_mod.load_for(settings)
    existing = next((s for s in settings.sources
                     if s.kind == kind and settings.paths.resolve(s.path).resolve() == folder), None)
    if existing is not None:
        uri = target(existing)
        name = area or _area_at(pol, existing.area) or area_name(folder)
        out = Plan(config_file, pol.path, existing.area, name)
        out.said.append(f"{config_file}: already has the {kind} source {folder} ({uri})")
    else:
        name = area or area_name(folder)
        uri = pol.areas.get(name, f"viking://resources/{name}")
        if any(s.area == uri for s in settings.sources):
            taken = next(s for s in settings.sources if s.area == uri)
            raise ConfigError(f"area {uri} already holds the {taken.kind} source {taken.path}",
                              path=str(config_file), fix="pass --area with another name")
        out = Plan(config_file, pol.path, uri, name)
        out.config_text = _with_source(config_file, kind, folder, uri)
        out.said.append(f"{config_file}: added the {kind} source {folder} -> {uri}")
    readers = [p.name for p in pol.profiles.values() if p.may("read", uri)]
    if readers:
        out.said.append(f"{pol.path}: {uri} is already read by {', '.join(readers)}")
        return out
    if out.area in pol.areas and pol.areas[out.area] != out.uri:
        raise ConfigError(f"area {out.area!r} is {pol.areas[out.area]} in the policy, not {out.uri}",
                          path=str(pol.path), fix="pass --area with another name")
    out.levels = _levels(settings, pol, like)
    out.policy_text = _with_area(pol, out.area, out.uri, out.levels)
    shown = ", ".join(f"{r} {lv}" for r, lv in out.levels.items())
    out.said.append(f"{pol.path}: added the area {out.area} ({out.uri}): {shown}")
    return out


def _area_at(pol: policy_mod.Policy, uri: str) -> str | None:
    return next((n for n, u in pol.areas.items() if u == uri), None)


def _levels(settings: Settings, pol: policy_mod.Policy, like: str | None) -> dict[str, str]:
    """Each reader's level on the `like` area (default: the first notes source's), else by its kind."""
    if like is None:
        first = next((s for s in settings.sources if s.kind == "notes"), None)
        like = _area_at(pol, first.area) if first is not None else None
    elif like not in pol.areas:
        raise ConfigError(f"--like {like!r} is not an area of the policy (known: {', '.join(sorted(pol.areas))})",
                          path=str(pol.path), fix="name one of its areas")
    levels = {}
    for p in pol.profiles.values():
        level = p.areas.get(like) if like is not None else KIND_LEVELS.get(p.kind)
        if level is not None:
            levels[p.name] = level
    return levels


def _refused(path: Path, what: str) -> ConfigError:
    return ConfigError(f"cannot add {what} to {path}'s layout (muninn edits by inserting lines, keeping "
                       "your comments)", path=str(path), fix=f"add {what} by hand, then run this again")


def _with_source(config_file: Path, kind: str, folder: Path, uri: str) -> str:
    text = config_file.read_text(encoding="utf-8")
    entry: dict[str, Any] = {"kind": kind, "path": str(folder), "area": uri}
    if kind == "notes":
        entry["name"] = "."     # alone in its area: the notes at the area's root, as init writes them
    item = "{" + ", ".join(f"{k}: {_scalar(k, v)}" for k, v in entry.items()) + "}"
    doc = yaml_insert.root(text) if text.strip() else None
    seq = yaml_insert.value_of(doc, "sources") if doc is not None else None
    if doc is not None and seq is None:
        new = text + ("" if text.endswith("\n") else "\n") + f"sources:\n  - {item}\n"
    elif isinstance(seq, yaml.SequenceNode):
        ins = yaml_insert.append_item(text.splitlines(keepends=True), seq, item)
        if ins is None:
            raise _refused(config_file, f"`- {item}` under `sources:`")
        new = yaml_insert.apply(text, [ins])
    else:
        raise _refused(config_file, f"`- {item}` under `sources:`")
    old = yaml.safe_load(text) or {}
    wanted = {**old, "sources": [*(old.get("sources") or []), entry]}
    if yaml.safe_load(new) != wanted:
        raise _refused(config_file, f"`- {item}` under `sources:`")
    return new


def _scalar(key: str, value: str) -> str:
    """Plain as init writes them, except a path (any character) or a value YAML would read otherwise."""
    plain = key != "path" and re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./-]*|viking://[A-Za-z0-9_./-]+|\.", value)
    return value if plain and yaml.safe_load(value) == value else json.dumps(value)


def _with_area(pol: policy_mod.Policy, name: str, uri: str, levels: dict[str, str]) -> str:
    text = pol.path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    doc = yaml_insert.root(text)
    areas = yaml_insert.value_of(doc, "areas") if doc is not None else None
    readers = yaml_insert.value_of(doc, "readers") if doc is not None else None
    if not isinstance(areas, yaml.MappingNode) or not isinstance(readers, yaml.MappingNode):
        raise _refused(pol.path, f"`{name}: {uri}` under `areas:`")
    inserts = [] if name in pol.areas else [yaml_insert.add_key(lines, areas, name, uri)]
    for reader, level in levels.items():
        node = yaml_insert.value_of(readers, reader)
        own = yaml_insert.value_of(node, "areas") if isinstance(node, yaml.MappingNode) else None
        inserts.append(yaml_insert.add_key(lines, own, name, level) if isinstance(own, yaml.MappingNode) else None)
    if None in inserts:
        raise _refused(pol.path, f"the area {name} and each reader's level on it")
    new = yaml_insert.apply(text, [i for i in inserts if i is not None])
    old = yaml.safe_load(text)
    wanted = {**old, "areas": {**old["areas"], name: uri},
              "readers": {r: ({**v, "areas": {**(v.get("areas") or {}), name: levels[r]}} if r in levels else v)
                          for r, v in old["readers"].items()}}
    if yaml.safe_load(new) != wanted:
        raise _refused(pol.path, f"the area {name} and each reader's level on it")
    policy_mod.parse(new, pol.path)      # the policy's own checks, before anything is written
    return new


def write(p: Plan) -> None:
    """muninn.yaml first, then policy.yaml; muninn.yaml is put back if it does not load after all."""
    if p.config_text is not None:
        before = p.config_file.read_text(encoding="utf-8")
        atomic.write_text(p.config_file, p.config_text, _mode(p.config_file))
        try:
            config.load(p.config_file, environ={})
        except ConfigError:
            atomic.write_text(p.config_file, before, _mode(p.config_file))
            raise
    if p.policy_text is not None:
        atomic.write_text(p.policy_file, p.policy_text, _mode(p.policy_file))


def _mode(path: Path) -> int | None:
    return path.stat().st_mode & 0o777 if path.exists() else None
