"""`muninn redact review` after an export, through the CLI: every redaction of the last export (pattern
hits by rule and fingerprint, known values by secret id), each at its place in the user's note (source
file and source line, not the rendered fact's), never a value or a matched text; a line that cannot be
told for certain is `?`, never a wrong number; the review file is 0600."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from typer.testing import CliRunner

from muninn.cli import app
from muninn.export.source_lines import line_of

TOKEN = "ghp_R8x2Lq9Zt4Vw7Yp1Bn6Mk3Hs5Jd0Fc2Gx8Qa"
AUTH = "Authorization: Bearer Xk29fLq0Zr7TnB4wPs8v"
KNOWN = "Vq7Lm2Xz9Rk4Tp8W"

NOTE = f"""---
title: Deploy runbook
tags: [deploy]
---
# Deploy runbook

Some context first, a line long enough to be a paragraph of its own.

## Push

1. push with {TOKEN} today
2. then wait for the pipeline

## Database

The database password is {KNOWN} (rotate monthly).

## Checks

curl -H '{AUTH}' https://api.example.com
"""


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    code = getattr(result.exception, "exit_code", None) if result.exception else result.exit_code
    if result.exception is not None and code is None:
        raise result.exception
    return code, result.stdout, result.stderr


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_review_lists_every_redaction_at_its_source_line(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "runbooks").mkdir(parents=True)
    note = notes / "runbooks" / "deploy.md"
    note.write_text(NOTE)
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(yaml.safe_dump({"secrets": [{"id": "db-password", "value": KNOWN}]}))
    code, out, err = _run("export", "notes", str(notes), "--out", str(tmp_path / "out"),
                          "--secrets", str(secrets), "--json")
    assert code == 0, err
    exported = json.loads(out)["redactions"]
    assert {e["kind"] for e in exported} == {"pattern", "value"}

    code, out, err = _run("redact", "review", "--json")
    assert code == 0, err
    got = json.loads(out)
    rows = [r for r in got["found"] if r["where"] == "export"]
    by_name = {(r["secret_id"] or r["rule"]): r for r in rows}
    assert set(by_name) == {"github-token", "auth-header", "db-password"} or \
        {"db-password", "auth-header"} <= set(by_name), rows
    for r in rows:
        assert r["file"] == str(note.resolve()), r
    assert by_name["db-password"]["kind"] == "value" and by_name["db-password"]["fingerprint"] is None
    assert by_name["db-password"]["line"] == _line(NOTE, KNOWN)
    assert by_name["auth-header"]["line"] == _line(NOTE, AUTH)
    assert by_name["auth-header"]["fingerprint"].startswith("auth-header:")
    token_row = next(r for r in rows if r["kind"] == "pattern" and r["rule"] != "auth-header")
    assert token_row["line"] == _line(NOTE, TOKEN)
    # The rendered fact's line is kept beside it, and differs: the fact has front matter of its own.
    assert all(r["fact"].endswith(".md") and isinstance(r["fact_line"], int) for r in rows)
    # Never a value, never the matched text; the file is the owner's alone.
    said = out + err + Path(got["file"]).read_text()
    for secret in (TOKEN, KNOWN, "Xk29fLq0Zr7TnB4wPs8v"):
        assert secret not in said
    assert os.stat(got["file"]).st_mode & 0o777 == 0o600

    code, text, err = _run("redact", "review")
    assert code == 0, err
    assert "secret db-password" in text and "auth-header:" in text
    assert str(_line(NOTE, AUTH)) in text
    assert "pattern hit(s) not allowed" in err

    # Allowed by its fingerprint: the next export no longer redacts it, and the review follows.
    fp = by_name["auth-header"]["fingerprint"]
    assert _run("redact", "allow", fp, "--note", "docs fixture")[0] == 0
    assert _run("export", "notes", str(notes), "--out", str(tmp_path / "out"), "--secrets", str(secrets))[0] == 0
    again = json.loads(_run("redact", "review", "--json")[1])["found"]
    assert "auth-header" not in {r["rule"] for r in again}
    assert "db-password" in {r["secret_id"] for r in again}


def test_a_line_not_certain_is_unknown_not_wrong(tmp_path: Path) -> None:
    source = ["# A", "", "token: x1", "", "# B", "", "token: x1"]
    # The same line twice, and nothing around it to tell which: not certain.
    assert line_of(source, "token: x1", 7, 9) is None
    # The heading before it pins it.
    assert line_of(source, "# B\n\ntoken: x1", 12, 14) == 7
    assert line_of(source, "# A\n\ntoken: x1", 12, 14) == 3
    # Text the source never held (a generated lead line) and a hit text on one line only.
    assert line_of(["a", "pw Zq9 here", "b"], "Section from x.md: pw Zq9", 22, 25) == 2
    assert line_of(["a", "b"], "nothing here Zq9", 13, 16) is None


def test_a_task_row_has_no_line(tmp_path: Path) -> None:
    """A source with no file per fact (a SQLite task row) says `?`, never a number from the fact."""
    import shutil
    import sqlite3

    db = tmp_path / "tasks.db"
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "tasks.db", db)
    con = sqlite3.connect(db)
    con.execute("update tasks set description = ? where rowid = (select min(rowid) from tasks)",
                (f"push with {TOKEN} once",))
    con.commit()
    con.close()
    code, _, err = _run("export", "tasks", str(db), "--out", str(tmp_path / "out"))
    assert code == 0, err
    rows = json.loads(_run("redact", "review", "--json")[1])["found"]
    assert rows and all(r["line"] is None for r in rows), rows
    code, text, _ = _run("redact", "review")
    assert "tasks.db#tasks/1\t?\tgithub-token" in text
