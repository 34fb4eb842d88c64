"""The nightly jobs that need no server for what they decide: the git mirror of the task export (one
commit a night, nothing known ever in its history), the repo snapshot's drop of a file holding a
known value, and `export all` going on past a source that cannot be exported."""

from __future__ import annotations

import base64
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.export import pipeline
from muninn.guards.gate.leak_gate import LeakGate
from muninn.guards.known.secret_values import collect
from muninn.nightly.jobs import Context, mirror
from muninn.nightly.jobs import snapshot as repo_snapshot

ROOT = Path(__file__).resolve().parents[1]
SECRET = "Zq8vN3kT5pW2rX7m"
LATER = "Hb4tY9mQ2vL7cK3w"   # a value that becomes known only after it was committed

# Every way a value can be spelt in a file: the gate must hold each out of the mirror's history.
FORMS = {
    "bare": lambda v: v,
    "after-equals": lambda v: f"TOKEN={v}",
    "in-url": lambda v: f"https://bot:{v}@git.example.net/x",
    "base64": lambda v: base64.b64encode(v.encode()).decode(),
    "url-encoded": lambda v: urllib.parse.quote(v + "/+"),
    "split-by-markup": lambda v: f"{v[:6]}**{v[6:]}**",
}


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


@pytest.fixture
def home(tmp_path: Path, isolated_keyring: Path) -> Path:
    shutil.copy(ROOT / "examples" / "tasks.db", tmp_path / "tasks.db")
    (tmp_path / "secrets.yaml").write_text(f"- id: nas-admin\n  service: nas\n  value: {SECRET}\n")
    # No server here: the export's side of the mirror alone (tests/test_backup.py mirrors a server area).
    cfg = {"home": str(tmp_path / "home"), "export": {"secret_files": [str(tmp_path / "secrets.yaml")]},
           "sources": [{"kind": "tasks", "path": str(tmp_path / "tasks.db"), "area": "viking://resources/roadmap"}],
           "nightly": {"mirror_areas": []}}
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path


def _settings(home: Path):
    return config.load(home / "muninn.yaml")


def _night(home: Path):
    s = _settings(home)
    pipeline.run_all(s)
    return mirror.mirror(Context(s))


def _history(s) -> str:
    return _git(s.paths.mirror, "log", "-p", "--all", "--format=%H %B")


def _task_files(s) -> list[Path]:
    return sorted(p for p in (s.paths.exports / "roadmap" / "tasks").rglob("*.md"))


def test_one_commit_a_night_counting_changes_and_none_when_nothing_changed(home: Path) -> None:
    first = _night(home)
    s = _settings(home)
    assert first.status == "ok", first.detail
    assert first.data["added"] == len(_task_files(s)) > 0 and first.data["commit"]
    assert _git(s.paths.mirror, "log", "--format=%s").splitlines() == [
        f"muninn nightly {_git(s.paths.mirror, 'log', '-1', '--format=%cs').strip()}: "
        f"{first.data['added']} added, 0 changed, 0 removed"]
    again = _night(home)
    assert again.status == "ok" and again.data["commit"] is None and "no change tonight" in again.detail
    con = sqlite3.connect(home / "tasks.db")
    (first_id,) = con.execute("SELECT min(id) FROM tasks").fetchone()
    con.execute("UPDATE tasks SET description = 'moved to the new rack' WHERE id = ?", (first_id,))
    con.execute("DELETE FROM tasks WHERE id = (SELECT max(id) FROM tasks)")
    con.commit()
    con.close()
    third = _night(home)
    assert third.status == "ok" and (third.data["changed"], third.data["removed"]) == (1, 1), third.data
    assert len(_git(s.paths.mirror, "log", "--format=%H").split()) == 2
    assert _git(s.paths.mirror, "log", "-1", "--format=%s").strip().endswith("0 added, 1 changed, 1 removed")


def _stamps(repo: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(repo).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns) for p in repo.rglob("*.md")}


@pytest.mark.parametrize("edit", ["none", "one changed", "one removed"])
def test_a_file_as_already_mirrored_is_not_written_again(home: Path, edit: str) -> None:
    assert _night(home).status == "ok"
    s = _settings(home)
    before = _stamps(s.paths.mirror)
    con = sqlite3.connect(home / "tasks.db")
    (task_id,) = con.execute("SELECT min(id) FROM tasks").fetchone()
    if edit == "one changed":
        con.execute("UPDATE tasks SET description = 'moved to the new rack' WHERE id = ?", (task_id,))
    elif edit == "one removed":
        con.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
    con.commit()
    con.close()
    assert _night(home).status == "ok"
    after = _stamps(s.paths.mirror)
    kept = {rel: stamp for rel, stamp in after.items() if before.get(rel) == stamp}
    expected = {"none": 0, "one changed": 1, "one removed": 1}[edit]
    assert len(set(before) | set(after)) - len(kept) == expected, (before.keys() ^ after.keys())
    assert _git(s.paths.mirror, "status", "--porcelain") == ""


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_value_planted_then_removed_never_reaches_the_history(home: Path, form: str) -> None:
    assert _night(home).status == "ok"
    s = _settings(home)
    victim = _task_files(s)[0]
    clean = victim.read_text()
    # Written past redaction, straight into the export (a bug, a hand edit): the gate before commit holds it.
    victim.write_text(clean + f"\n{FORMS[form](SECRET)}\n")
    planted = mirror.mirror(Context(s))
    assert planted.status == "findings" and "nas-admin" in planted.detail and SECRET not in planted.detail
    rel = victim.relative_to(s.paths.exports).as_posix()
    assert [d["path"] for d in planted.data["dropped"]] == [rel]
    victim.write_text(clean)
    assert mirror.mirror(Context(s)).status == "ok"
    history = _history(s)
    assert not LeakGate(collect([home / "secrets.yaml"]), patterns=False).scan(history), form
    assert SECRET not in history


def test_a_value_learnt_after_its_commit_is_taken_out_and_its_commit_named(home: Path) -> None:
    s = _settings(home)
    con = sqlite3.connect(home / "tasks.db")
    (task_id,) = con.execute("SELECT min(id) FROM tasks").fetchone()
    con.execute("UPDATE tasks SET description = ? WHERE id = ?", (f"the rack label reads {LATER} now", task_id))
    con.commit()
    con.close()
    assert _night(home).status == "ok"   # not known yet: committed as it stood
    (home / "secrets.yaml").write_text((home / "secrets.yaml").read_text()
                                       + f"- id: ci-bot\n  service: ci\n  value: {LATER}\n")
    after = mirror.mirror(Context(s))
    assert after.status == "findings" and LATER not in after.detail
    # The commit that added it, and tonight's that took it out (its patch shows the removed line).
    commits = _git(s.paths.mirror, "log", "--format=%H").split()
    assert [h["commit"] for h in after.data["history"]] == [c[:12] for c in commits]
    assert all(h["secret_ids"] == ["ci-bot"] for h in after.data["history"])
    assert "ci-bot" in after.detail and after.data["history"][0]["commit"] in after.detail
    # The work tree no longer holds it: the night's commit removed the file.
    assert LATER not in "".join(p.read_text() for p in s.paths.mirror.rglob("*.md"))
    assert after.data["removed"] == 1


def _shows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits whose patch the mirror reads, as it reads them."""
    read: list[str] = []
    real = mirror.git

    def counting(repo: Path, *args: str) -> str:
        if args[0] == "show":
            read.append(args[-1])
        return real(repo, *args)

    monkeypatch.setattr(mirror, "git", counting)
    return read


@pytest.mark.parametrize("ledger", [True, False])
def test_the_history_is_read_again_only_for_new_commits_or_new_values(home: Path, ledger: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from muninn.guards.known.retired import Ledger

    s = _settings(home)
    if ledger:   # the server leak scan's ledger: its salt keys the cache's fingerprint
        Ledger(s.paths.retired_hashes).remember([])
    read = _shows(monkeypatch)
    assert _night(home).status == "ok" and len(read) == 1
    read.clear()
    assert _night(home).status == "ok"
    assert len(read) == (0 if ledger else 1)      # no ledger, no fingerprint: every commit, every night
    con = sqlite3.connect(home / "tasks.db")
    (task_id,) = con.execute("SELECT min(id) FROM tasks").fetchone()
    con.execute("UPDATE tasks SET description = ? WHERE id = ?", (f"the rack label reads {LATER} now", task_id))
    con.commit()
    con.close()
    read.clear()
    assert _night(home).status == "ok"
    assert len(read) == (1 if ledger else 2)      # only tonight's commit is new
    (home / "secrets.yaml").write_text((home / "secrets.yaml").read_text()
                                       + f"- id: ci-bot\n  service: ci\n  value: {LATER}\n")
    read.clear()
    after = mirror.mirror(Context(s))
    commits = _git(s.paths.mirror, "log", "--format=%H").split()
    assert set(read) == set(commits) and len(commits) == 3   # a value learnt since: every commit again
    assert after.status == "findings" and [h["secret_ids"] for h in after.data["history"]] == [["ci-bot"]] * 2
    read.clear()
    again = mirror.mirror(Context(s))
    # A commit with a finding is never cached: reported every night until the history is rewritten.
    assert again.status == "findings" and len(again.data["history"]) == 2
    assert len(read) == (2 if ledger else 3)
    assert LATER not in (mirror.history_cache(s).read_text() if ledger else "")


def test_nothing_to_mirror_is_ok_and_makes_no_repository(tmp_path: Path, isolated_keyring: Path) -> None:
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump({"home": str(tmp_path / "home")}))
    s = config.load(tmp_path / "muninn.yaml")
    result = mirror.mirror(Context(s))
    assert result.status == "ok" and not s.paths.mirror.exists()


# --- snapshot: a repo file holding a known value is dropped whole ------------------------------

def _repo(root: Path, files: dict[str, str]) -> Path:
    repo = root / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-f", ".")
    _git(repo, "commit", "-q", "-m", "files")
    return repo


LONG = "Restart the worker with systemctl after the deploy finishes, then check the health page. " * 3


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("where", ["config.env", "docs/guide.md", "deep/nested/run.sh"])
def test_snapshot_drops_the_file_holding_a_known_value_and_names_path_and_id(home: Path, form: str,
                                                                             where: str) -> None:
    body = "# Guide\n\n" + LONG + f"\n\n## Login\n\nUse {FORMS[form](SECRET)} for the bot.\n" if where.endswith(
        ".md") else LONG + f"\nAPI={FORMS[form](SECRET)}\n"
    repo = _repo(home, {where: body, "README.md": "# Service\n\n" + LONG})
    s = _settings(home)
    c = pipeline.Configured(0, "repo", repo, "viking://resources/code", "svc", {})
    files = s.paths.known_secret_files()
    report, dropped = repo_snapshot.export_repo(s, c, pipeline.Guards.from_files(files),
                                                LeakGate(collect(files), patterns=False))
    assert dropped == [{"source": "viking://resources/code/svc", "path": where, "secret_ids": ["nas-admin"]}]
    out = c.out_dir(s)
    written = {p.read_text() for p in out.rglob("*.md") if pipeline.LEDGER_DIR not in p.parts}
    assert written and not any(where in t for t in written), "every fact of the dropped file is gone"
    assert not any(SECRET in t for t in written)


# --- export all: a source that cannot be exported is skipped, the others still run ---------------

def _cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(("broken", "want"), [
    ([], 0),
    (["absent-notes"], 0),
    (["absent-notes", "absent-db"], 0),
    (["absent-notes", "absent-db", "gone-too"], ExitCode.BAD_INPUT),
    (["bad-options"], ExitCode.BAD_INPUT),   # a typo in muninn.yaml is bad input now, not a warning
])
def test_export_all_skips_a_failing_source_and_fails_only_when_all_did(home: Path, broken: list[str],
                                                                       want: int) -> None:
    notes = home / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Worker\n\nRestart it.\n")
    entries = {
        "absent-notes": {"kind": "notes", "path": str(home / "gone-notes"), "area": "viking://resources/n1"},
        "absent-db": {"kind": "tasks", "path": str(home / "gone.db"), "area": "viking://resources/roadmap"},
        "gone-too": {"kind": "notes", "path": str(home / "gone2"), "area": "viking://resources/n3"},
        "bad-options": {"kind": "notes", "path": str(notes), "area": "viking://resources/n2",
                        "options": {"colour": "red"}},
    }
    good = {"kind": "notes", "path": str(notes), "area": "viking://resources/shared"}
    cfg = yaml.safe_load((home / "muninn.yaml").read_text())
    cfg["sources"] = [entries[b] for b in broken] + ([good] if len(broken) < 3 else [])
    (home / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    out = _cli(home / "muninn.yaml", "export", "all")
    assert out.returncode == want, out.stderr
    assert "Traceback" not in out.stderr
    for b in (b for b in broken if b != "bad-options"):
        assert f"skipped {entries[b]['area']}/notes" in out.stderr or f"skipped {entries[b]['area']}/tasks" \
            in out.stderr, (b, out.stderr)
    assert (home / "home/exports/shared/notes").is_dir() == (want == 0)


# --- observations keep the time of day (what `muninn watch` measures freshness by) --------------

@pytest.mark.parametrize(("ts", "date", "folder"), [
    ("2025-10-02T09:14:03Z", "2025-10-02T09:14:03Z", "2025-10-02"),
    ("2025-10-02T11:14:03+02:00", "2025-10-02T09:14:03Z", "2025-10-02"),
    ("2025-10-02T23:30:00-02:00", "2025-10-03T01:30:00Z", "2025-10-03"),
    ("2025-10-02 09:14:03", "2025-10-02T09:14:03Z", "2025-10-02"),
    ("2025-10-02T09:14:03.123456Z", "2025-10-02T09:14:03Z", "2025-10-02"),
    ("2025-10-02", "2025-10-02", "2025-10-02"),
    ("not a time", None, "undated"),
])
def test_an_observation_is_dated_to_the_second_in_utc(tmp_path: Path, ts: str, date: str | None,
                                                     folder: str) -> None:
    import json

    from muninn.core import factfile

    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"ts": ts, "tool": "Bash", "input": "uptime", "output": "up 3 days"}) + "\n")
    pipeline.run("observations", log, tmp_path / "out")
    (fact,) = [p for p in (tmp_path / "out").rglob("*.md") if pipeline.LEDGER_DIR not in p.parts]
    assert factfile.parse(fact.read_text()).date == date and fact.parent.name == folder


# --- skills install: what it takes, and the approved list it keeps --------------------------------

def test_the_shipped_skill_is_found_by_name() -> None:
    from muninn.nightly import skills_install

    name, folder = skills_install.resolve("observation-log")
    assert name == "observation-log" and (folder / "SKILL.md").is_file()


@pytest.mark.parametrize(("what", "message"), [
    ("no-such-skill", "neither a skill muninn ships"),
    ("{tmp}/empty", "neither a skill muninn ships"),
    ("{tmp}/Bad Name", "is not a skill name"),
    ("{tmp}/../etc", "neither a skill muninn ships"),
])
def test_a_skill_that_is_not_one_is_refused_before_any_write(tmp_path: Path, what: str, message: str) -> None:
    from muninn.core.errors import ConfigError
    from muninn.nightly import skills_install

    (tmp_path / "empty").mkdir()
    (tmp_path / "Bad Name").mkdir()
    (tmp_path / "Bad Name" / "SKILL.md").write_text("---\nname: x\n---\n")
    with pytest.raises(ConfigError, match=message):
        skills_install.resolve(what.format(tmp=tmp_path))


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"approved": 3}', '{"other": []}'])
def test_a_damaged_approved_list_is_one_sentence_naming_the_fix(home: Path, text: str) -> None:
    from muninn.core.errors import ConfigError
    from muninn.nightly import skills_install

    s = _settings(home)
    s.paths.approved_skills.parent.mkdir(parents=True)
    s.paths.approved_skills.write_text(text)
    with pytest.raises(ConfigError, match="damaged") as err:
        skills_install.load(s)
    assert "muninn skills install" in (err.value.fix or "")


# --- the CLI edge passes an ExitCode through (cron relies on `muninn nightly`'s code) ------------

@pytest.mark.parametrize(("returned", "code"), [
    (ExitCode.OK, 0), (ExitCode.CHECK_FAILED, 1), (ExitCode.JOB_FAILED, 13), (ExitCode.BUSY, 14), (1, 1), (13, 13),
    (None, 0), (True, 0), (False, 0), ("done", 0),
])
def test_the_edge_exits_with_the_code_a_command_returned(returned: object, code: int) -> None:
    from muninn.core import edge

    with pytest.raises(SystemExit) as out:
        edge.run(lambda **kw: returned)
    assert int(out.value.code) == code


def test_a_nightly_job_that_could_not_run_exits_13_from_the_real_cli(tmp_path: Path, isolated_keyring: Path) -> None:
    # No server and no key: the job fails to run, the report is written, and cron sees 13, not 0.
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump({"home": str(tmp_path / "home"),
                                                           "server": {"port": 9}}))
    out = _cli(tmp_path / "muninn.yaml", "nightly", "--only", "skills-drift")
    assert out.returncode == ExitCode.JOB_FAILED, out.stdout + out.stderr


# --- muninn status --stores: each reader's readable areas, from its own index -------------------

STORES_POLICY = """
version: 1
areas:
  shared: viking://resources/shared
  raven: viking://resources/agents/raven
  bob: viking://resources/agents/bob
readers:
  owner: {kind: owner, account: home, user: owner, areas: {shared: manage, raven: manage, bob: manage},
          remember_to: shared}
  raven: {kind: agent, account: home, user: raven, areas: {shared: read, raven: write}, remember_to: raven,
          tools: [recall_search]}
"""


def _fact_text(date: str) -> str:
    return f"---\nsource: notes\ndate: \"{date}\"\n---\n# A note\nsomething happened\n"


@pytest.mark.parametrize(("reader", "want"), [
    (None, {("owner", "bob"): 1, ("owner", "raven"): 2, ("owner", "shared"): 1, ("raven", "raven"): 2,
            ("raven", "shared"): 1}),
    ("raven", {("raven", "raven"): 2, ("raven", "shared"): 1}),
    ("nobody", None),
])
def test_status_stores_lists_each_readers_areas_from_its_own_index(tmp_path: Path, isolated_keyring: Path,
                                                                   reader: str | None, want: dict | None) -> None:
    from muninn.plugins.search import keyword

    (tmp_path / "policy.yaml").write_text(STORES_POLICY)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "guard": {"policy": str(tmp_path / "policy.yaml")}}))
    s = config.load(cfg)
    files = {"viking://resources/shared/a.md": _fact_text("2026-11-01"),
             "viking://resources/agents/raven/b.md": _fact_text("2026-11-02T10:00:00Z"),
             "viking://resources/agents/raven/c.md": _fact_text("2026-11-03T11:30:00Z"),
             "viking://resources/agents/bob/d.md": _fact_text("2026-10-01")}
    for user in ("owner", "raven"):
        mine = {u: t for u, t in files.items() if user == "owner" or "/bob/" not in u}
        keyword.index_facts(s.paths.search_index("home", user), mine)
    out = _cli(cfg, "status", "--stores", "--json", *(["--profile", reader] if reader else []))
    if want is None:
        assert out.returncode == ExitCode.BAD_INPUT and "nobody" in out.stderr
        return
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {(r["reader"], r["area"]): r["files"] for r in rows} == want
    newest = {(r["reader"], r["area"]): r["newest"] for r in rows}
    assert newest[("raven", "raven")].startswith("2026-11-03T11:30")
    assert all("search-index --profile" in r["index"] for r in rows), "never walked: the fix is named"
