"""A git repository at a ref: its text files as facts.

Reads the ref through git itself (`ls-tree`, `cat-file --batch`), never the working copy, so
uncommitted scratch files and local build output never leak into the memory. Tracked files
that match .gitignore (force-added) are skipped too, binaries are skipped, and big files are
capped. Markdown splits by heading like notes; other text is one fact per file, in parts when long.

`known_values()`: the values of the repository's `.env`-style files (`.env`, `.env.*`, `*.env`), at
the ref and in the working copy's top two levels, where the untracked `.env` a developer keeps usually
sits. Reading them exports nothing; they are redacted everywhere (`secret_values.known`), through the
filter for values nobody declared. Templates (`.env.example`, `.sample`, `.template`, `.dist`) hold
placeholders meant to be read, and are left out.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

from pydantic import Field

from muninn.core.errors import ConfigError
from muninn.export import markdown
from muninn.export.facts import CRUMB, Fact, slug
from muninn.export.sources import Options
from muninn.guards.secret_values import names_identifier, source_kind, text_values


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


def is_env_file(path: str) -> bool:
    """`.env`, `.env.*` or `*.env`, and not a template of one."""
    return source_kind(Path(path)) == "env" and not path.lower().endswith(_TEMPLATES)


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
        """(id, value) of every setting in the repository's env files, unfiltered but for keys that name an
        identifier (`DB_USER`, `REDIS_HOST`); id `env:<name>/<path>:KEY`."""
        name = self.options.name or self.path.resolve().name
        texts: dict[str, str] = {}
        found = [(p, sha) for p, sha, size in self._tree() if is_env_file(p) and size <= self.options.max_bytes]
        for (path, _), data in zip(found, self._blobs([sha for _, sha in found]), strict=True):
            if not _is_binary(data):
                texts[f"{path}@{self.options.ref}"] = data.decode("utf-8")
        for file in (*self.path.glob(".env*"), *self.path.glob("*.env"), *self.path.glob("*/.env*"),
                     *self.path.glob("*/*.env")):
            rel = file.relative_to(self.path).as_posix()
            if is_env_file(rel) and file.is_file() and file.stat().st_size <= self.options.max_bytes:
                data = file.read_bytes()
                if not _is_binary(data):
                    texts[rel] = data.decode("utf-8")
        return [(f"env:{name}/{where}:{sid.rpartition(':')[2]}", value)
                for where, text in texts.items() for sid, value in text_values(text, where, env=True)
                if not names_identifier(sid.rpartition(":")[2], value)]

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
            context = f"File {path} in the {name} repository at {self.options.ref}" + \
                      (f" ({where})" if len(chunk.breadcrumb) > 1 or chunk.anchor else "") + \
                      (f", last changed {date}." if date else ".")
            rel = "/".join(slug(p) for p in path.split("/"))
            if chunk.anchor:
                rel += "/" + "/".join(slug(a) for a in chunk.anchor.split("/"))
            key = f"{name}/{path}#{chunk.anchor}" if chunk.anchor else f"{name}/{path}"
            yield Fact(
                source=self.kind, kind="file", key=key,
                title=chunk.breadcrumb[-1], body=chunk.text, context=context, path=rel,
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
