"""Planted secrets through every source the exporter reads: none may come out in a fact file.

Over 300 random values in 16 forms (labelled, bare in tables, `API key: v`, inside URLs, YAML,
JSON, INI, env, code blocks, shell history, JSONL observation outputs, repo config files, PEM,
JWT, bare prose), placed where they would really sit: notes, a git repository, an observation
log and a task database. Ordinary prose with short hint words must come out untouched.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml
from planted import PROSE, SHORT_HINTS, Planted, generate, write_secrets_yaml

from muninn.export import pipeline

REPO_FORMS = {"yaml", "json", "ini", "env", "repo-config", "shell-export", "shell-curl"}
OBS_FORMS = {"jsonl-output"}


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def plant(planted: list[Planted], root: Path) -> dict[str, Path]:
    """Put each planted document where its form lives in real life."""
    notes, repo, log, db = root / "notes", root / "repo", root / "observations.jsonl", root / "tasks.db"
    notes.mkdir()
    repo.mkdir()
    lines = []
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, description TEXT, project_id TEXT)")
    for i, p in enumerate(planted):
        if p.form in OBS_FORMS:
            lines.append(p.doc.strip())
        elif p.form in REPO_FORMS:
            target = repo / f"svc{i:03d}" / p.filename
            target.parent.mkdir()
            target.write_text(p.doc)
        elif i % 5 == 0:
            con.execute("INSERT INTO tasks VALUES (?,?,?,?)", (i, f"Fix {p.secret_id}", p.doc, "lab"))
        else:
            (notes / f"{i:03d}-{p.form}.md").write_text(p.doc)
    con.commit()
    con.close()
    log.write_text("\n".join(lines) + "\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-f", ".")
    _git(repo, "commit", "-q", "-m", "configs")
    return {"notes": notes, "repo": repo, "observations": log, "tasks": db}


TASK_OPTIONS = {"projects": None, "tables": {"task": {"table": "tasks", "title": "title", "body": ["description"],
                                                      "project": "project_id"}}}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Planted], Path, dict]:
    root = tmp_path_factory.mktemp("planted")
    planted = generate(n=320, seed=20261129)
    secrets = write_secrets_yaml(planted, root / "secrets.yaml")
    reports = {}
    for kind, path in plant(planted, root).items():
        reports[kind] = pipeline.run(kind, path, root / "out" / kind, [secrets],
                                     options=TASK_OPTIONS if kind == "tasks" else None)
    reports["secrets"] = pipeline.run("secrets", secrets, root / "out" / "secrets")
    return planted, root / "out", reports


def test_planted_corpus_is_wide_enough(exported: tuple[list[Planted], Path, dict]) -> None:
    planted, _, reports = exported
    assert len(planted) >= 300 and len({p.form for p in planted}) >= 12
    assert all(r.facts > 0 for r in reports.values())


def test_no_planted_value_survives_export(exported: tuple[list[Planted], Path, dict]) -> None:
    planted, out, reports = exported
    text = "\n".join(p.read_text() for p in out.rglob("*") if p.is_file())
    leaked = [(p.secret_id, p.form) for p in planted if any(n in text for n in p.needles)]
    assert leaked == []
    # Every source redacted something, and the report names ids only.
    assert all(r.redacted > 0 for kind, r in reports.items() if kind != "secrets")
    assert not any(n in json.dumps([r.as_json() for r in reports.values()]) for p in planted for n in p.needles)


def test_secrets_source_exports_ids_without_values(exported: tuple[list[Planted], Path, dict]) -> None:
    planted, out, reports = exported
    assert reports["secrets"].facts == len(planted) and not reports["secrets"].dropped
    assert (out / "secrets" / f"{planted[0].secret_id}.md").exists()


def test_prose_with_short_hint_words_is_not_redacted(tmp_path: Path) -> None:
    hints = tmp_path / "hints.yaml"
    hints.write_text(yaml.safe_dump([{"id": f"hint-{w}", "value": w} for w in SHORT_HINTS]))
    notes = tmp_path / "notes"
    notes.mkdir()
    for i, para in enumerate(PROSE):
        (notes / f"p{i:02d}.md").write_text(f"# Note {i}\n\n{para}\n")
    report = pipeline.run("notes", notes, tmp_path / "out", [hints])
    assert (report.redacted, report.dropped) == (0, [])
    text = "".join(p.read_text() for p in (tmp_path / "out").rglob("*.md"))
    assert "[REDACTED" not in text
    assert all(para in text for para in PROSE)
