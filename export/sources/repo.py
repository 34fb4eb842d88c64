"""A git repository at a ref: its text files as facts.

Reads the ref through git itself (`ls-tree`, `cat-file --batch`), never the working copy, so
uncommitted scratch files and local build output never leak into the memory. Tracked files
that match .gitignore (force-added) are skipped too, binaries are skipped, and big files are
capped. Markdown splits by heading like notes; other text is one fact per file, in parts when long.

`known_values()`: the secrets of the repository's `.env`-style files (`.env`, `.env.*`, `*.env`, and
direnv's `.envrc`), at the ref and in the working copy at every level (where the untracked `.env` a
developer keeps usually sits: `apps/api/.env`), each through `setting_values` by its key. The working
copy is read whether or not git can read the ref: a failing git is this source's export's error to
report, and the `.env` beside it must still be redacted. Reading them exports nothing; they are
redacted everywhere (`secret_values.known`). Templates (`.env.example`, `.sample`, `.template`,
`.dist`) hold placeholders meant to be read, and are left out.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

from pydantic import Field

from muninn.core.errors import ConfigError
from muninn.export import markdown
from muninn.export.facts import CRUMB, Fact, slug
from muninn.export.sources import Options
from muninn.guards.known.secret_values import source_kind, text_values
from muninn.guards.known.setting_values import setting_values


class RepoOptions(Options):
    ref: str = Field("HEAD", description="Branch, tag or commit to export")
    max_bytes: int = Field(200_000, gt=0, description="Files bigger than this are skipped")
    max_chars: int = Field(1200, ge=200, description="A markdown section bigger than this splits at sub-headings")
    min_chars: int = Field(160, ge=0, description="A sub-section smaller than this stays in its parent")
    exclude: list[str] = Field(default_factory=lambda: ["*.lock", "package-lock.json", "*.min.js", "*.svg"],
                               description="Glob patterns of paths to skip")
    name: str | None = Field(None, description="Project name (default: the folder name)")


def _git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, input=input)
    if proc.returncode != 0:
        raise ConfigError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}",
                          path=str(repo), fix="point the repo source at a git repository and an existing ref")
    return proc.stdout


_TEMPLATES = (".example", ".sample", ".template", ".tmpl", ".dist", ".defaults")


# Folders of other people's code or of generated files, never where a project keeps its own `.env`.
_NOT_OURS = frozenset({".git", ".hg", ".svn", "node_modules", "bower_components", "vendor", "third_party",
                       "site-packages", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", "dist", "build", "target", ".terraform", ".gradle", ".idea"})
# The walk stops after this many env files or directories: a home directory given as a repo must not
# stall every redaction.
MAX_ENV_FILES = 200
MAX_DIRS = 20_000
_ENVRC_LINE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_]\w*=")


def is_env_file(path: str) -> bool:
    """`.env`, `.env.*`, `*.env` or `.envrc`, and not a template of one."""
    name = Path(path).name.lower()
    return (source_kind(Path(path)) == "env" or name == ".envrc") and not name.endswith(_TEMPLATES)


def _env_text(data: bytes) -> str | None:
    """A `.env` is text whatever its encoding: one Latin-1 byte must not hide the rest of it. Read as
    Latin-1 then, not with replacement characters: `contraseña99` written in Latin-1 is pasted as
    `contraseña99`, and a value with U+FFFD in it would match nothing."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _settings(path: str, text: str) -> list[tuple[str, str]]:
    if Path(path).name.lower() == ".envrc":
        # direnv's file is shell: only its `export KEY=VALUE` lines are settings.
        text = "\n".join(line for line in text.splitlines() if _ENVRC_LINE.match(line))
    return [(sid.rpartition(":")[2], value) for sid, value in text_values(text, path, env=True)]


def _is_binary(data: bytes) -> bool:
    if b"\x00" in data[:8192]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class RepoSource:
    kind = "repo"
    help = "Git repository at a ref: text files as facts (.gitignore honoured, binaries skipped)"
    Options = RepoOptions

    def __init__(self, path: Path, options: RepoOptions) -> None:
        self.path = path
        self.options = options
        self.skipped: dict[str, str] = {}

    def secret_files(self) -> list[Path]:
        return []

    def known_values(self) -> list[tuple[str, str]]:
        """(id, value) of the secrets in the repository's env files, filtered by key
        (`setting_values`); id `env:<name>/<path>:KEY`."""
        name = self.options.name or self.path.resolve().name
        texts: dict[str, str] = {}
        try:
            found = [(p, sha) for p, sha, size in self._tree() if is_env_file(p) and size <= self.options.max_bytes]
            blobs = list(self._blobs([sha for _, sha in found]))
        except ConfigError:
            found, blobs = [], []   # the export of this source says why; the working copy still counts
        for (path, _), data in zip(found, blobs, strict=True):
            if (text := _env_text(data)) is not None:
                texts[f"{path}@{self.options.ref}"] = text
        for file in self._working_env_files():
            if (text := _env_text(file.read_bytes())) is not None:
                texts[file.relative_to(self.path).as_posix()] = text
        return [(f"env:{name}/{where}:{key}{suffix}", kept)
                for where, text in texts.items() for key, value in _settings(where, text)
                for suffix, kept in setting_values(key, value)]

    def _working_env_files(self) -> list[Path]:
        out: list[Path] = []
        for dirs, (root, subdirs, files) in enumerate(os.walk(self.path)):
            subdirs[:] = sorted(d for d in subdirs if d not in _NOT_OURS
                                and not (Path(root, d) / "pyvenv.cfg").exists())
            for f in sorted(files):
                file = Path(root, f)
                if is_env_file(f) and file.is_file() and file.stat().st_size <= self.options.max_bytes:
                    out.append(file)
            if len(out) >= MAX_ENV_FILES or dirs >= MAX_DIRS:
                break
        return out[:MAX_ENV_FILES]

    def _tree(self) -> list[tuple[str, str, int]]:
        out = _git(self.path, "ls-tree", "-r", "-l", "-z", self.options.ref)
        rows = []
        for rec in out.split(b"\x00"):
            if not rec:
                continue
            meta, _, name = rec.partition(b"\t")
            _mode, kind, sha, size = meta.decode().split()
            if kind == "blob":
                rows.append((name.decode("utf-8", "replace"), sha, int(size) if size != "-" else 0))
        return rows

    def _ignored(self, paths: list[str]) -> set[str]:
        if not paths:
            return set()
        proc = subprocess.run(["git", "-C", str(self.path), "check-ignore", "--no-index", "-z", "--stdin"],
                              input="\x00".join(paths).encode() + b"\x00", capture_output=True)
        return {p.decode() for p in proc.stdout.split(b"\x00") if p}

    def _dates(self) -> dict[str, str]:
        log = _git(self.path, "log", "--format=%x00%cI", "--name-only", self.options.ref).decode("utf-8", "replace")
        dates: dict[str, str] = {}
        current = ""
        for line in log.splitlines():
            if line.startswith("\x00"):
                current = line[1:11]
            elif line.strip() and current:
                dates.setdefault(line.strip(), current)
        return dates

    def _blobs(self, shas: list[str]) -> Iterator[bytes]:
        out = _git(self.path, "cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
        pos = 0
        for _ in shas:
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            yield out[header_end + 1:header_end + 1 + size]
            pos = header_end + 1 + size + 1

    def facts(self) -> Iterator[Fact]:
        name = self.options.name or self.path.resolve().name
        rows = self._tree()
        ignored = self._ignored([p for p, _, _ in rows])
        keep = []
        for path, sha, size in rows:
            if path in ignored:
                self.skipped[path] = "matches .gitignore"
            elif any(fnmatch(path, pat) or fnmatch(Path(path).name, pat) for pat in self.options.exclude):
                self.skipped[path] = "excluded by pattern"
            elif size > self.options.max_bytes:
                self.skipped[path] = f"larger than {self.options.max_bytes} bytes"
            else:
                keep.append((path, sha))
        dates = self._dates()
        for (path, _sha), data in zip(keep, self._blobs([s for _, s in keep]), strict=True):
            if _is_binary(data):
                self.skipped[path] = "binary"
                continue
            yield from self._file(name, path, data.decode("utf-8"), dates.get(path))

    def _file(self, name: str, path: str, text: str, date: str | None) -> Iterator[Fact]:
        if not text.strip():
            return
        if path.endswith((".md", ".markdown")):
            chunks = markdown.split(text, Path(path).name, self.options.max_chars, self.options.min_chars)
        else:
            chunks = [markdown.Chunk(breadcrumb=(Path(path).name,), text=f"```\n{t}\n```", anchor=a)
                      for t, a in _parts(text, self.options.max_chars * 2)]
        for chunk in chunks:
            where = CRUMB.join(chunk.breadcrumb)
            lead = f"File {path} in the {name} repository at {self.options.ref}" + \
                      (f" ({where})" if len(chunk.breadcrumb) > 1 or chunk.anchor else "") + \
                      (f", last changed {date}." if date else ".")
            rel = "/".join(slug(p) for p in path.split("/"))
            if chunk.anchor:
                rel += "/" + "/".join(slug(a) for a in chunk.anchor.split("/"))
            key = f"{name}/{path}#{chunk.anchor}" if chunk.anchor else f"{name}/{path}"
            yield Fact(
                source=self.kind, kind="file", key=key,
                title=chunk.breadcrumb[-1], body=chunk.text, lead=lead, path=rel,
                project=name, date=date, tags=(Path(path).suffix.lstrip(".") or "text",),
                breadcrumb=(name, *path.split("/")[:-1], *chunk.breadcrumb), source_path=path,
            )


def _parts(text: str, limit: int) -> list[tuple[str, str]]:
    """Long non-markdown files split at line boundaries into numbered parts."""
    if len(text) <= limit:
        return [(text.rstrip("\n"), "")]
    parts, current = [], []
    size = 0
    for line in text.splitlines():
        if size + len(line) > limit and current:
            parts.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        parts.append("\n".join(current))
    return [(p, f"part-{i}") for i, p in enumerate(parts, 1)]
