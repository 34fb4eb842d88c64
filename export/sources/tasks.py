"""A SQLite task/roadmap database: one fact per task, observation or mistake.

Each fact opens with a plain-language line that says which project it belongs to and what
that project is, because a one-line task ("switch to Dozzle") is unfindable without it.
The table and column names are options, so any schema maps without code.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from muninn.core.errors import ConfigError
from muninn.export.dates import source_date
from muninn.export.facts import Fact, slug
from muninn.export.sources import Options


class ProjectTable(Options):
    """Where project names come from, when a table's `project` column holds an id."""

    table: str = Field("projects", description="The projects table")
    id: str = Field("id", description="Its id column")
    name: str = Field("name", description="Its name column: the fact's project")
    description: str | None = Field("description", description="Its description column (null: none)")


class TableMap(Options):
    """One table exported as one kind of fact (one fact per row)."""

    table: str = Field(description="The table to read")
    id: str = Field("id", description="Its id column: part of the fact's path and id")
    title: str | None = Field(None, description="Title column (null: the body's first line, cut at 80 characters)")
    body: list[str] = Field(min_length=1, description="Columns joined into the body, in order")
    project: str | None = Field("project_id", description="Project name, or an id into `projects`")
    status: str | None = Field(None, description="Status column, named in the fact's lead line")
    date: str | None = Field(None, description="Date column: ISO text, a day, or epoch seconds, milliseconds "
                             "or microseconds; a value that is no date leaves the fact undated")
    tags: str | None = Field(None, description="Comma-separated or a JSON list")


def _default_tables() -> dict[str, TableMap]:
    return {
        "task": TableMap(table="tasks", title="title", body=["description"], status="status",
                         date="updated_at", tags="tags"),
        "observation": TableMap(table="observations", title=None, body=["text"], date="created_at",
                                tags="tags"),
        "mistake": TableMap(table="mistakes", title="title", body=["what_happened", "lesson"],
                            date="created_at", tags="tags"),
    }


class TasksOptions(Options):
    projects: ProjectTable | None = Field(default_factory=ProjectTable, description="The projects table "
                                          "(null: a `project` column is the name itself)")
    tables: dict[str, TableMap] = Field(default_factory=_default_tables,
                                        description="fact kind → table mapping")


def _tags(value: object) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    text = str(value)
    if text.startswith("["):
        try:
            return tuple(str(t) for t in json.loads(text))
        except json.JSONDecodeError:
            pass
    return tuple(t.strip() for t in text.split(",") if t.strip())


class TasksSource:
    kind = "tasks"
    help = "SQLite task/roadmap database: one fact per task, observation or mistake"
    Options = TasksOptions

    def __init__(self, path: Path, options: TasksOptions) -> None:
        self.path = path
        self.options = options
        # source path -> why its date column gave no date (the fact is exported undated, never misdated)
        self.undated: dict[str, str] = {}

    def secret_files(self) -> list[Path]:
        return []

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            db.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"not a readable SQLite database: {exc}", path=str(self.path)) from None
        db.row_factory = sqlite3.Row
        return db

    def _check(self, db: sqlite3.Connection, table: str, columns: list[str | None], key: str) -> None:
        have = {r["name"] for r in db.execute(f'PRAGMA table_info("{table}")')}
        if not have:
            raise ConfigError(f"no table {table!r} in the database", path=str(self.path), key=key,
                              fix="set the table name under the source's options in muninn.yaml")
        for col in columns:
            if col and col not in have:
                raise ConfigError(f"table {table!r} has no column {col!r} (it has: {', '.join(sorted(have))})",
                                  path=str(self.path), key=key, fix="fix the column mapping in muninn.yaml")

    def _projects(self, db: sqlite3.Connection) -> dict[str, tuple[str, str]]:
        p = self.options.projects
        if p is None:
            return {}
        self._check(db, p.table, [p.id, p.name, p.description], "options.projects")
        desc = f', "{p.description}"' if p.description else ""
        rows = db.execute(f'SELECT "{p.id}", "{p.name}"{desc} FROM "{p.table}"').fetchall()
        return {str(r[0]): (str(r[1]), str(r[2] or "") if p.description else "") for r in rows}

    def facts(self) -> Iterator[Fact]:
        db = self._connect()
        try:
            projects = self._projects(db)
            for kind, m in sorted(self.options.tables.items()):
                yield from self._table(db, kind, m, projects)
        finally:
            db.close()

    def _table(self, db: sqlite3.Connection, kind: str, m: TableMap,
               projects: dict[str, tuple[str, str]]) -> Iterator[Fact]:
        cols = [m.id, m.title, *m.body, m.project, m.status, m.date, m.tags]
        self._check(db, m.table, cols, f"options.tables.{kind}")
        names = [c for c in dict.fromkeys(cols) if c]
        select = ", ".join(f'"{c}"' for c in names)
        for row in db.execute(f'SELECT {select} FROM "{m.table}" ORDER BY "{m.id}"'):
            yield self._fact(kind, m, dict(zip(names, tuple(row), strict=True)), projects)

    def _fact(self, kind: str, m: TableMap, row: dict, projects: dict[str, tuple[str, str]]) -> Fact:
        rid = str(row[m.id])
        raw_project = row.get(m.project) if m.project else None
        name, about = projects.get(str(raw_project), (str(raw_project), "")) if raw_project is not None \
            else ("", "")
        parts = [(c, str(row[c]).strip()) for c in m.body if row.get(c) not in (None, "")]
        body_lines = [text if len(parts) == 1 else f"{c.replace('_', ' ').capitalize()}: {text}"
                      for c, text in parts]
        first = parts[0][1].splitlines()[0] if parts else ""
        title = str(row[m.title]).strip() if m.title and row.get(m.title) else first[:80]
        status = str(row[m.status]) if m.status and row.get(m.status) else None
        dated = source_date(row.get(m.date)) if m.date else None
        date = dated.value if dated else None
        source_path = f"{self.path.name}#{m.table}/{rid}"
        if dated and dated.problem:
            self.undated[source_path] = f"{m.date}: {dated.problem}"
        label = kind.replace("_", " ").capitalize()
        lead = f"{label} #{rid}"
        if name:
            lead += f" in project {name}"
            if about:
                lead += f" ({about.rstrip('.')})"
        lead += "."
        if status:
            lead += f" Status: {status}."
        if date:
            lead += f" Dated {date}."
        body = f"# {title}\n\n" + "\n\n".join(body_lines)
        return Fact(
            source=self.kind, kind=kind, key=f"{kind}/{rid}", title=title, body=body, lead=lead,
            path=f"{slug(name or 'no-project')}/{slug(kind)}-{slug(rid)}", project=name or None,
            date=date, tags=_tags(row.get(m.tags)) if m.tags else (), breadcrumb=(name or label, title),
            source_path=source_path,
        )
