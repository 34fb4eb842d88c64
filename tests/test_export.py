"""Export: sources → facts → redaction → leak gate → fact files, on the real filesystem, SQLite and git."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from muninn.cli import app
from muninn.core.errors import ConfigError
from muninn.export import markdown, pipeline, sources
from muninn.export.facts import FRONT_MATTER_KEYS, parse_front_matter
from muninn.guards.redact.redactor import Redacted, Redactor

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
import make_tasks_db  # noqa: E402


@pytest.fixture(scope="module")
def tasks_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tasks_db.build(tmp_path_factory.mktemp("db") / "tasks.db")


def facts_in(out: Path) -> dict[str, tuple[dict, str]]:
    return {p.relative_to(out).as_posix(): parse_front_matter(p.read_text())
            for p in sorted(out.rglob("*.md")) if ".muninn-export" not in p.parts}


EXAMPLE_SOURCES = [
    ("notes", EXAMPLES / "notes"),
    ("observations", EXAMPLES / "observations.jsonl"),
    ("secrets", EXAMPLES / "secrets.yaml"),
    ("inventory", EXAMPLES / "inventory.yaml"),
]


def test_builtins_register_through_the_registry() -> None:
    assert {"tasks", "notes", "observations", "secrets", "inventory", "repo"} <= set(sources.kinds())
    with pytest.raises(ConfigError, match="unknown source kind"):
        sources.get("nope")


@pytest.mark.parametrize(("kind", "path"), EXAMPLE_SOURCES)
def test_every_fact_has_the_front_matter_contract_and_a_context_line(kind: str, path: Path, tmp_path: Path) -> None:
    report = pipeline.run(kind, path, tmp_path / "out", [EXAMPLES / "secrets.yaml"])
    assert report.facts > 0 and report.written == report.facts and not report.dropped
    ids = set()
    for rel, (meta, rest) in facts_in(tmp_path / "out").items():
        # The one key beyond the contract a source writes: an inventory entry's names (what pins it).
        extra = ("names",) if kind == "inventory" else ()
        assert tuple(meta) == (*FRONT_MATTER_KEYS[:-1], *extra, FRONT_MATTER_KEYS[-1]), rel
        assert meta["source"] == kind and meta["content_hash"]
        context, _, body = rest.partition("\n\n")
        assert context and "\n" not in context.strip() and body.strip(), rel
        ids.add(meta["id"])
    assert len(ids) == report.facts


@pytest.mark.parametrize(("kind", "path"), EXAMPLE_SOURCES)
def test_rerun_is_unchanged_and_byte_identical(kind: str, path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pipeline.run(kind, path, out)
    first = {p: p.read_bytes() for p in out.rglob("*.md")}
    again = pipeline.run(kind, path, out)
    assert (again.written, again.unchanged) == (0, again.facts)
    assert {p: p.read_bytes() for p in out.rglob("*.md")} == first


def test_notes_follow_headings_with_breadcrumbs(tmp_path: Path) -> None:
    pipeline.run("notes", EXAMPLES / "notes", tmp_path)
    facts = facts_in(tmp_path)
    meta, rest = facts["runbooks/database-upgrade-2025/rollback.md"]
    assert meta["breadcrumb"] == "Database upgrade 2025 › Rollback"
    assert meta["date"] == "2025-03-04" and meta["project"] == "platform" and meta["kind"] == "runbook"
    assert "pg_ctlcluster 16 main stop" in rest and "pg_upgrade --check" not in rest
    # "Afterwards" is tiny: it stays in its parent rather than becoming a fact of its own.
    root_meta, root_rest = facts["runbooks/database-upgrade-2025.md"]
    assert "## Afterwards" in root_rest and root_meta["breadcrumb"] == "Database upgrade 2025"
    assert not any("afterwards" in p for p in facts)


def test_huge_sections_split_at_sub_headings_and_code_fences_are_not_headings() -> None:
    sub = "\n".join(f"### Step {i}\n\n" + f"Do the thing number {i} carefully. " * 12 for i in range(6))
    doc = f"# Guide\n\nIntro.\n\n## Big part\n\n{sub}\n\n## Small part\n\n```\n# not a heading\n```\nok\n"
    chunks = markdown.split(doc, "guide", max_chars=1200, min_chars=160)
    crumbs = [" › ".join(c.breadcrumb) for c in chunks]
    assert "Guide › Big part › Step 3" in crumbs
    assert all("not a heading" not in c for c in crumbs)
    assert all(len(c.text) <= 1800 for c in chunks)
    # A long section without sub-headings splits at paragraphs into numbered parts.
    long = "# Log\n\n" + "\n\n".join(f"Paragraph {i}. " * 30 for i in range(10))
    parts = markdown.split(long, "log")
    assert len(parts) > 1 and parts[0].breadcrumb[-1].startswith("Log (part 1/")


def _git(repo: Path, *args: str, date: str = "2024-01-15T12:00:00+00:00") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_note_dates_come_from_front_matter_then_git_then_mtime(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "fm.md").write_text("---\ndate: 2023-05-06\n---\n# With front matter\n\nbody text\n")
    (notes / "git.md").write_text("# Committed\n\nbody text\n")
    _git(notes, "init", "-q")
    _git(notes, "add", ".")
    _git(notes, "commit", "-q", "-m", "x")
    (notes / "new.md").write_text("# Untracked\n\nbody text\n")
    os.utime(notes / "new.md", (1_600_000_000, 1_600_000_000))
    pipeline.run("notes", notes, tmp_path / "out")
    dates = {rel: meta["date"] for rel, (meta, _) in facts_in(tmp_path / "out").items()}
    assert dates == {"fm.md": "2023-05-06", "git.md": "2024-01-15", "new.md": "2020-09-13"}


def test_deleted_source_removes_only_this_sources_files(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nfirst\n")
    (notes / "b.md").write_text("# B\n\nsecond\n")
    out = tmp_path / "out"
    (out / "mine").mkdir(parents=True)
    (out / "mine" / "hand-written.md").write_text("not from the exporter\n")
    pipeline.run("notes", notes, out)
    (notes / "b.md").unlink()
    report = pipeline.run("notes", notes, out)
    assert report.removed == 1 and not (out / "b.md").exists() and (out / "a.md").exists()
    assert (out / "mine" / "hand-written.md").exists()


def test_tasks_one_fact_per_row_with_project_header(tasks_db: Path, tmp_path: Path) -> None:
    report = pipeline.run("tasks", tasks_db, tmp_path)
    facts = facts_in(tmp_path)
    assert report.facts == len(facts) == 8 + 4 + 2
    meta, rest = facts["observability/task-2.md"]
    assert meta["kind"] == "task" and meta["project"] == "observability" and "dozzle" in meta["tags"]
    assert rest.startswith("Task #2 in project observability (metrics, logs and alerting")
    assert "Dozzle" in rest
    mistake = facts["platform/mistake-1.md"][1]
    assert "What happened:" in mistake and "Lesson:" in mistake


def test_tasks_mapping_comes_from_options(tmp_path: Path) -> None:
    db = tmp_path / "roadmap.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE todo (tid TEXT, headline TEXT, notes TEXT, area TEXT, closed TEXT)")
    con.execute("INSERT INTO todo VALUES ('T-9', 'Swap UPS battery', 'The APC in the rack beeps.', 'homelab', "
                "'2025-02-01T10:00:00')")
    con.commit()
    con.close()
    options = {"projects": None, "tables": {"todo": {"table": "todo", "id": "tid", "title": "headline",
                                                     "body": ["notes"], "project": "area", "date": "closed"}}}
    pipeline.run("tasks", db, tmp_path / "out", options=options)
    (meta, rest), = facts_in(tmp_path / "out").values()
    assert meta["id"] == "tasks/todo/T-9" and meta["date"] == "2025-02-01T10:00:00Z" and meta["project"] == "homelab"
    assert "Swap UPS battery" in rest
    options["tables"]["todo"]["body"] = ["missing_column"]
    with pytest.raises(ConfigError, match="no column 'missing_column'") as err:
        pipeline.run("tasks", db, tmp_path / "out", options=options)
    assert err.value.exit_code == 2 and err.value.path == str(db)


def test_secrets_export_metadata_never_the_value(tmp_path: Path) -> None:
    report = pipeline.run("secrets", EXAMPLES / "secrets.yaml", tmp_path)
    values = [e["value"] for e in yaml.safe_load((EXAMPLES / "secrets.yaml").read_text())]
    text = "".join(p.read_text() for p in tmp_path.rglob("*.md"))
    assert report.facts == len(values) and not any(v in text for v in values)
    meta, rest = facts_in(tmp_path)["jira-api-token.md"]
    assert "use: curl -s -H" in rest and "rotate-yearly" in meta["tags"]


def test_repo_reads_the_ref_skipping_ignored_binary_and_big_files(tmp_path: Path) -> None:
    repo = tmp_path / "infra"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "README.md").write_text("# Infra\n\nTerraform and scripts for the lab.\n")
    (repo / "scripts").mkdir()
    (repo / "scripts" / "kubeconfig.sh").write_text("#!/bin/sh\naws eks update-kubeconfig --name \"$1\"\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (repo / "debug.log").write_text("forced in despite .gitignore\n")
    (repo / "big.txt").write_text("x" * 5000)
    _git(repo, "add", ".")
    _git(repo, "add", "-f", "debug.log")
    _git(repo, "commit", "-q", "-m", "init")
    (repo / "uncommitted.md").write_text("# Scratch\n\nnot committed\n")
    report = pipeline.run("repo", repo, tmp_path / "out", options={"max_bytes": 4000})
    facts = facts_in(tmp_path / "out")
    assert set(facts) == {"readme-md.md", "gitignore.md", "scripts/kubeconfig-sh.md"}
    assert report.skipped == {"debug.log": "matches .gitignore", "logo.png": "binary",
                              "big.txt": "larger than 4000 bytes"}
    meta, rest = facts["scripts/kubeconfig-sh.md"]
    assert meta["source_path"] == "scripts/kubeconfig.sh" and meta["date"] == "2024-01-15"
    assert "update-kubeconfig" in rest


class _BrokenRedactor(Redactor):
    """A redactor with a regression: it changes nothing. The gate must still stop the file."""

    def redact(self, text: str) -> Redacted:
        return Redacted(text)


def test_gate_drops_what_redaction_missed_and_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "clean.md").write_text("# Clean\n\nNothing to hide here.\n")
    (notes / "leaky.md").write_text("# Leaky\n\nThe Grafana admin is Gr4f-adm1n-Sp4rrow-77 for now.\n")
    out = tmp_path / "out"
    (out / "leaky.md").parent.mkdir(parents=True)
    (out / "leaky.md").write_text("an older, clean copy\n")
    monkeypatch.setattr(pipeline, "Redactor", _BrokenRedactor)
    result = CliRunner().invoke(app, ["export", "notes", str(notes), "--out", str(out), "--secrets",
                                      str(EXAMPLES / "secrets.yaml"), "--json"])
    assert isinstance(result.exception, pipeline.LeakGateDropped) and result.exception.exit_code == 3
    report = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert list(report) == ["facts", "written", "unchanged", "redacted", "dropped", "redactions"]
    assert report["dropped"] == [{"path": "leaky.md", "reason": "known-value:grafana-admin (line 16)"}]
    assert report["written"] == 1 and not (out / "leaky.md").exists()
    assert "Gr4f-adm1n-Sp4rrow-77" not in result.output


def test_cli_exit_codes_and_json_shape(tmp_path: Path) -> None:
    env = {**os.environ}
    ok = subprocess.run([sys.executable, "-m", "muninn", "export", "inventory", str(EXAMPLES / "inventory.yaml"),
                         "--out", str(tmp_path / "inv"), "--json"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == {"facts": 6, "written": 6, "unchanged": 0, "redacted": 0, "dropped": [],
                                     "redactions": []}
    log = tmp_path / "obs.jsonl"
    log.write_text('{"ts": "2025-01-01T00:00:00Z", "tool": "bash", "input": "ls", "output": ""}\n{"ts": oops}\n')
    bad = subprocess.run([sys.executable, "-m", "muninn", "export", "observations", str(log), "--out",
                          str(tmp_path / "obs")], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and f"{log}:2" in bad.stderr.replace("\n", "")
    inv = tmp_path / "inventory.yaml"
    inv.write_text("- id: a\n  kind: host\n  aliases: [x]\n- id: b\n  kind: host\n  requires: 5\n")
    with pytest.raises(ConfigError) as err:
        pipeline.run("inventory", inv, tmp_path / "inv2")
    assert err.value.line == 6 and err.value.path == str(inv)


def test_export_all_from_sources_config(tasks_db: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({
        "home": str(tmp_path / "home"),
        "sources": [
            {"kind": "notes", "path": str(EXAMPLES / "notes"), "area": "viking://resources/notes"},
            {"kind": "tasks", "path": str(tasks_db), "area": "viking://resources/roadmap"},
            {"kind": "secrets", "path": str(EXAMPLES / "secrets.yaml"), "area": "viking://resources/ops"},
            {"kind": "inventory", "path": str(EXAMPLES / "inventory.yaml"), "area": "viking://resources/ops"},
        ],
    }))
    result = CliRunner().invoke(app, ["--config", str(cfg), "export", "all", "--json"])
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)
    assert set(reports) == {"viking://resources/notes/notes", "viking://resources/roadmap/tasks",
                            "viking://resources/ops/secrets", "viking://resources/ops/inventory"}
    assert (tmp_path / "home/exports/ops/inventory/host/jump-host.md").exists()
    cfg.write_text(cfg.read_text().replace("kind: inventory", "kind: inventory\n  options: {colour: red}"))
    result = CliRunner().invoke(app, ["--config", str(cfg), "export", "all"])
    assert isinstance(result.exception, ConfigError)
    assert result.exception.path == str(cfg) and "options.colour" in str(result.exception)


TRICKY = ["plain", "Database upgrade 2025 › Rollback", "2025-03-04", "yes", "No", "null", "~", "123", "0x1F",
          "a: b", "x #y", "-dash", "[x]", "{a}", "it's", '"q"', "back\\slash", "tab\there", "line\nbreak", "  pad",
          "emoji 😀", "a,b", "@at", "!tag", "*star", "&amp", "|pipe", ">gt", "?", "", "\x85nel", "u\u2028sep",
          "\ufeffbom", "x\x00y"]


@pytest.mark.parametrize("value", TRICKY)
def test_front_matter_round_trips_any_text(value: str) -> None:
    from muninn.export.facts import Fact, render

    fact = Fact(source="notes", kind="note", key=value, title=value, body="b", lead="c", path="p",
                project=value, tags=(value, "x"), breadcrumb=(value,), source_path=value)
    meta, rest = parse_front_matter(render(fact).text)
    assert meta["id"] == f"notes/{value}" and meta["project"] == value and meta["tags"] == [value, "x"]
    assert meta["source_path"] == value and rest == "c\n\nb\n"


def test_values_named_in_config_are_redacted_without_secrets_flag(tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": [str(EXAMPLES / "secrets.yaml")]}}))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# Broker\n\nThe IoT devices log in with mqTT-brk-9f3K2x8Lq on VLAN 30.\n")
    result = CliRunner().invoke(app, ["--config", str(cfg), "export", "notes", str(notes), "--out",
                                      str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["redacted"] == 1
    text = (tmp_path / "out" / "n.md").read_text()
    assert "[REDACTED:mqtt-broker]" in text and "mqTT-brk" not in text
