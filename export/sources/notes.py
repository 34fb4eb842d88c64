"""A markdown notes tree: one fact per heading section, each with its breadcrumb.

A section's date is, in this order: the note's front matter `date` (what the author meant); a day
in the section's own heading or the nearest heading above it (a journal's `## 2025-05-14`); a day
in the file name (`2025-05-14-dns-outage.md`); the last git commit that touched the file (it
survives a checkout); the file's mtime (which a copy resets). The lead line says which rule
gave it ("dated 2025-05-14, from its file name"), not the front matter: its keys are a contract.

After the context marker a section carries its parent section path and the opening line of the
nearest parent that has text of its own: a sub-section ("Rollback") often leaves implicit what the
whole note is about ("PostgreSQL 14 to 16 on db01"), which a search for it will name. A note that is
one short section, in a folder of many such notes (a chat or journal kept one entry a file),
carries the entries before and after it in name order instead: a reply is understood with the line
it answers, as an observation is with its session's neighbours.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import Field

from muninn.core import datescan, factfile
from muninn.export import markdown
from muninn.export.dates import iso_day
from muninn.export.facts import CRUMB, Fact, parse_front_matter, slug
from muninn.export.sources import Options


class NotesOptions(Options):
    pattern: str = Field("**/*.md", description="Which files under the tree are notes")
    max_chars: int = Field(1200, ge=200, description="A section bigger than this splits at sub-headings")
    min_chars: int = Field(160, ge=0, description="A sub-section smaller than this stays in its parent")
    kind_from_folder: bool = Field(True, description="Use the top folder (incidents, runbooks) as the kind")


def git_dates(root: Path) -> dict[Path, str]:
    """Last commit date per file under `root`, in one `git log` pass (empty if not a git tree)."""
    top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0:
        return {}
    base = Path(top.stdout.strip())
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%x00%cI", "--name-only", "--", "."],
                         capture_output=True, text=True)
    dates: dict[Path, str] = {}
    current = ""
    for line in log.stdout.splitlines():
        if line.startswith("\x00"):
            current = line[1:11]
        elif line.strip() and current:
            dates.setdefault((base / line.strip()).resolve(), current)
    return dates


def title_of(path: Path) -> str:
    return path.stem.replace("-", " ").replace("_", " ").strip().capitalize() or path.name


_UNREADABLE = ("not UTF-8 text (binary, or another encoding such as Latin-1): skipped, its earlier facts kept; "
               "convert it with `iconv -f latin1 -t utf-8`")
_SINGULAR = {"incidents": "incident", "runbooks": "runbook", "notes": "note", "postmortems": "postmortem"}


class NotesSource:
    kind = "notes"
    help = "Markdown tree: one fact per heading section, with its breadcrumb"
    Options = NotesOptions

    def __init__(self, path: Path, options: NotesOptions) -> None:
        self.path = path
        self.options = options
        self.skipped: dict[str, str] = {}
        self.kept: set[str] = set()     # notes skipped this run whose earlier facts stay (not pruned)
        self.name: Callable[[str], str] = lambda rel: rel     # the export's `safe_name` once attached

    def redact_names_with(self, name: Callable[[str], str]) -> None:
        """Titles, ids and paths are made from `name(rel)`: a secret in a file name never reaches them."""
        self.name = name

    def secret_files(self) -> list[Path]:
        return []

    def files(self) -> list[Path]:
        if self.path.is_file():
            return [self.path]
        root = self.path.resolve()
        out = []
        for p in sorted(self.path.glob(self.options.pattern)):
            rel = p.relative_to(self.path)
            if not p.is_file() or any(part.startswith(".") for part in rel.parts):
                continue
            if not p.resolve().is_relative_to(root):
                # A link (to a file, or in a linked folder) out of the tree would export whatever it
                # points at, ~/.ssh included: the tree is the boundary the owner chose.
                self.skipped[rel.as_posix()] = "a symlink out of the notes tree"
                continue
            out.append(p)
        return out

    def facts(self) -> Iterator[Fact]:
        base = self.path if self.path.is_dir() else self.path.parent
        dates = git_dates(base)
        by_folder: dict[str, list[tuple[str, str, Path]]] = {}
        for file in self.files():
            rel = self.name(file.relative_to(base).as_posix())
            try:
                text = file.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError) as exc:
                # One unreadable note must not stop the tree; and skipped is not deleted: its facts stay.
                self.skipped[rel] = _UNREADABLE if isinstance(exc, UnicodeDecodeError) else \
                    f"not readable ({exc.strerror or type(exc).__name__}): skipped, its earlier facts kept"
                self.kept.add(rel)
                continue
            by_folder.setdefault(rel.rpartition("/")[0], []).append((rel, text, file))
        for entries in by_folder.values():
            lines = [self.entry_line(rel, text) for rel, text, _ in entries]
            if not _is_log(lines):
                lines = [""] * len(lines)
            for i, (rel, text, file) in enumerate(entries):
                around = _around(lines, i) if lines[i] else ""
                yield from self.document(rel, text, dates.get(file.resolve()), file.stat().st_mtime, around)

    def entry_line(self, rel: str, text: str) -> str:
        """"Title: opening line" of a note that is one short section, else "" (it is a document)."""
        _, body = parse_front_matter(text)
        chunks = markdown.split(body, title_of(Path(rel)), self.options.max_chars, self.options.min_chars)
        if len(chunks) != 1 or len(chunks[0].text) > _ENTRY_CHARS:
            return ""
        if any(markdown.is_heading(ln) for ln in chunks[0].text.splitlines()[1:]):
            return ""       # sub-headings: a short document, not one entry
        opening = _opening(chunks[0].text)
        return f"{chunks[0].breadcrumb[-1]}: {opening}" if opening else ""

    def document(self, rel: str, text: str, git_date: str | None, mtime: float,
                 around: str = "") -> Iterator[Fact]:
        meta, body = parse_front_matter(text)
        file_date = _file_date(rel, meta, git_date, mtime)
        tags = meta.get("tags") or []
        tags = tuple(str(t) for t in (tags if isinstance(tags, list) else str(tags).split(",")))
        folder = rel.split("/")[0] if "/" in rel else ""
        kind = _SINGULAR.get(folder, folder.rstrip("s") or "note") if self.options.kind_from_folder else "note"
        project = str(meta["project"]) if meta.get("project") else (folder or None)
        title = str(meta.get("title") or title_of(Path(rel)))
        stem = rel[:-3] if rel.endswith(".md") else rel
        chunks = markdown.split(body, title, self.options.max_chars, self.options.min_chars, dated=_names_a_day)
        texts = {c.breadcrumb: c.text for c in chunks}
        for chunk in chunks:
            # The document's title is a heading only when the note wrote it (an H1), not when it
            # came from the front matter or the file name.
            headings = chunk.breadcrumb if chunk.breadcrumb[0] != title else chunk.breadcrumb[1:]
            date, date_from = file_date if file_date[1] == FRONT_MATTER else _heading_date(headings) or file_date
            where = CRUMB.join(chunk.breadcrumb)
            lead = f"{kind.capitalize()} section \u201c{where}\u201d from {rel}, dated {date}, from {date_from}."
            anchor = chunk.anchor
            # The document's own chunk sits beside the folder of its sections:
            # runbooks/db-upgrade.md and runbooks/db-upgrade/rollback.md.
            path = "/".join(slug(p) for p in stem.split("/"))
            if anchor:
                path += "/" + "/".join(slug(a) for a in anchor.split("/"))
            yield Fact(
                source=self.kind, kind=kind, key=f"{rel}#{anchor}" if anchor else rel,
                title=chunk.breadcrumb[-1], body=chunk.text, lead=lead, path=path,
                project=project, date=date, tags=tags, breadcrumb=chunk.breadcrumb, source_path=rel,
                context=_parents(chunk.breadcrumb, texts) or around,
            )


FRONT_MATTER = "its front matter"


def _file_date(rel: str, meta: dict, git_date: str | None, mtime: float) -> tuple[str, str]:
    """(date, rule) from what holds for the whole file; a dated heading comes before all but the first."""
    if date := iso_day(meta.get("date")):
        return date, FRONT_MATTER
    if named := datescan.date_in_file_name(rel):
        return factfile.format_date(named), "its file name"
    if git_date:
        return git_date, "its last git commit"
    return dt.datetime.fromtimestamp(mtime, dt.UTC).date().isoformat(), "the file's mtime"


def _names_a_day(heading: str) -> bool:
    return datescan.find_date(heading) is not None


def _heading_date(headings: tuple[str, ...]) -> tuple[str, str] | None:
    """A day in the section's own heading, else in the nearest heading above it."""
    for heading in reversed(headings):
        if when := datescan.find_date(heading):
            return factfile.format_date(when), "its heading"
    return None


_NOT_PROSE = ("#", "```", "~~~", "|", "<!--")
_ENTRY_CHARS = 600      # a note this short, in one section, is an entry of a log rather than a document
_LOG_ENTRIES = 8


def _opening(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(_NOT_PROSE)), "")
    return line if len(line) <= 240 else line[:240].rsplit(" ", 1)[0] + " …"


def _is_log(lines: list[str]) -> bool:
    """A folder kept as a log: many notes, nearly all of them one short entry. A handful of short
    notes side by side (a few how-tos) are separate documents, whose neighbours say nothing."""
    entries = sum(1 for x in lines if x)
    return entries >= _LOG_ENTRIES and entries >= 0.75 * len(lines)


def _around(lines: list[str], i: int) -> str:
    """The entries just before and after entry i of its folder, when they are entries too."""
    said = []
    if i > 0 and lines[i - 1]:
        said.append(f"Before: {lines[i - 1]}")
    if i + 1 < len(lines) and lines[i + 1]:
        said.append(f"After: {lines[i + 1]}")
    return "\n".join(said)


def _parents(breadcrumb: tuple[str, ...], texts: dict[tuple[str, ...], str]) -> str:
    """The parent section path and the opening line of the nearest parent with text of its own."""
    if len(breadcrumb) < 2:
        return ""
    lines = [f"In: {CRUMB.join(breadcrumb[:-1])}"]
    for depth in range(len(breadcrumb) - 1, 0, -1):
        if opening := _opening(texts.get(breadcrumb[:depth], "")):
            lines.append(opening)
            break
    return "\n".join(lines)
