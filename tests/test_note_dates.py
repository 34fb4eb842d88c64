"""Where a note's date comes from (front matter, heading, file name, git, mtime, in that order), the
day scanner behind the heading and file-name rules, and the neighbouring context the notes and
observations exporters write after the context marker."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest

from muninn.core import datescan, factfile
from muninn.export import pipeline

UTC = dt.UTC

# (heading, the day it names) for every spelling the class holds
DATED = [
    ("2025-05-14", dt.date(2025, 5, 14)),
    ("Notes 2025/05/14", dt.date(2025, 5, 14)),
    ("2025.05.14 standup", dt.date(2025, 5, 14)),
    ("14.05.2025", dt.date(2025, 5, 14)),
    ("on 8 May, 2023", dt.date(2023, 5, 8)),
    ("8 May 2023", dt.date(2023, 5, 8)),
    ("May 14th 2025", dt.date(2025, 5, 14)),
    ("May 14, 2025: restic restore", dt.date(2025, 5, 14)),
    ("Wednesday, 14 May 2025", dt.date(2025, 5, 14)),
    ("the 3rd of March 2024", dt.date(2024, 3, 3)),
    ("Sept. 3rd, 2024", dt.date(2024, 9, 3)),
    ("1 JANUARY 2024", dt.date(2024, 1, 1)),
    ("Retro (2024-12-31)", dt.date(2024, 12, 31)),
    ("1:56 pm on 8 May, 2023", dt.datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("Caroline, 8 May 2023 at 1:56 PM (session 1)", dt.datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("May 8, 2023, 09:05", dt.datetime(2023, 5, 8, 9, 5, tzinfo=UTC)),
    ("8 May 2023 at 12:00 am", dt.datetime(2023, 5, 8, 0, 0, tzinfo=UTC)),
    ("8 May 2023 at 25:00", dt.date(2023, 5, 8)),                   # not a time: the day alone
    ("2025-05-14 14:30 call", dt.datetime(2025, 5, 14, 14, 30, tzinfo=UTC)),
    ("2025-05-14T09:30:00+02:00", dt.datetime(2025, 5, 14, 7, 30, tzinfo=UTC)),
]
# Numbers that only look like dates, and dates that name no single day
UNDATED = ["Upgrade to Kubernetes 1.31", "k8s 1.31.2 rollout", "Subnet 10.0.30.5", "192.168.2025.14", "INC-2025-05-14",
           "JIRA-20250514", "ticket #20250514", "Release 2024.10.1", "v2025.05.14", "2025.05.14.1", "Years 1999-2001",
           "2025-13-01", "2025-02-30", "May 2025", "Q3 2025 planning", "port 2023", "build 2025-05-14-rc1",
           "/var/log/2025/05/14x", "You may 14 times 2025 retries", "ISO 8601", "1.31 on 3.14", "12:30 standup"]


@pytest.mark.parametrize("text, day", DATED)
def test_a_day_in_a_heading_in_any_common_spelling(text: str, day: dt.date) -> None:
    assert datescan.find_date(text) == day


@pytest.mark.parametrize("text", UNDATED)
def test_numbers_that_only_look_like_dates_date_nothing(text: str) -> None:
    assert datescan.find_date(text) is None


@pytest.mark.parametrize("name, day", [
    ("2025-05-14-dns-outage.md", dt.date(2025, 5, 14)), ("2025-05-14.md", dt.date(2025, 5, 14)),
    ("20250514-call.md", dt.date(2025, 5, 14)), ("20250514T0930-call.md", dt.datetime(2025, 5, 14, 9, 30, tzinfo=UTC)),
    ("journal_2025_05_14.md", dt.date(2025, 5, 14)), ("incident-2025-05-14.md", dt.date(2025, 5, 14)),
    ("notes-8-may-2023.md", dt.date(2023, 5, 8)), ("sub/dir/2024-02-29-leap.md", dt.date(2024, 2, 29)),
    ("k8s-1-31-upgrade.md", None), ("database-upgrade-2025.md", None), ("inc-20250514.md", None),
    ("2023-02-29-not-leap.md", None), ("10-0-30-5.md", None), ("release-2025-10-1.md", None),
])
def test_a_day_in_a_file_name(name: str, day: dt.date | None) -> None:
    assert datescan.date_in_file_name(name) == day


def _git(repo: Path, *args: str, date: str = "2024-01-15T12:00:00+00:00") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _export(tmp_path: Path, files: dict[str, str], commit: bool = True) -> dict[str, tuple[dict, str]]:
    notes = tmp_path / "notes"
    for rel, text in files.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text)
    if commit:
        _git(notes, "init", "-q")
        _git(notes, "add", ".")
        _git(notes, "commit", "-q", "-m", "x")
    (notes / "late.md").write_text("# Written after the commit\n\nbody text\n")
    os.utime(notes / "late.md", (1_600_000_000, 1_600_000_000))
    pipeline.run("notes", notes, tmp_path / "out")
    out = {}
    for p in sorted((tmp_path / "out").rglob("*.md")):
        meta, rest = factfile.split_front_matter(p.read_text())
        out[str(meta["id"]).removeprefix("notes/")] = (meta, rest)
    return out


# Long enough that a note of three such sections splits into them (export.markdown: 1,200 characters).
BODY = "Some text long enough to stay a section of its own, with enough words in it to be worth a fact. " * 6


def test_each_rule_in_order_and_the_context_line_names_it(tmp_path: Path) -> None:
    facts = _export(tmp_path, {
        "fm.md": f"---\ndate: 2023-05-06\n---\n# Journal\n\n## 2025-05-14\n\n{BODY}\n",
        "journal.md": f"# Journal\n\n## 2025-05-14\n\n{BODY}\n\n## on 8 May, 2023\n\n{BODY}\n\n## Someday\n\n{BODY}\n",
        "2024-03-01-retro.md": f"# Retro\n\n{BODY}\n\n## Sprint 2024/02/27\n\n{BODY}\n\n## Actions\n\n{BODY}\n",
        "plain.md": "# Committed\n\nbody text\n",
    })
    got = {key: (meta["date"], rest.split("\n", 1)[0]) for key, (meta, rest) in facts.items()}
    want = {
        "fm.md": ("2023-05-06", "its front matter"),                      # front matter beats a dated heading
        "journal.md#2025-05-14": ("2025-05-14", "its heading"),
        "journal.md#on 8 May, 2023": ("2023-05-08", "its heading"),
        "journal.md#Someday": ("2024-01-15", "its last git commit"),     # no day in it: git
        "2024-03-01-retro.md": ("2024-03-01", "its file name"),
        "2024-03-01-retro.md#Sprint 2024/02/27": ("2024-02-27", "its heading"),   # heading beats file name
        "plain.md": ("2024-01-15", "its last git commit"),
        "late.md": ("2020-09-13", "the file's mtime"),
    }
    assert set(got) >= set(want), sorted(got)
    for key, (date, rule) in want.items():
        assert got[key][0] == date, key
        assert got[key][1].endswith(f"dated {date}, from {rule}."), got[key][1]


def test_a_sub_section_takes_the_day_of_the_heading_above_it(tmp_path: Path) -> None:
    facts = _export(tmp_path, {"log.md": f"# Log\n\n## 14 May 2025\n\n{BODY}\n\n### Morning\n\n{BODY}\n\n"
                                         f"### Evening\n\n{BODY}\n{BODY}\n"}, commit=False)
    assert facts["log.md#14 May 2025/Morning"][0]["date"] == "2025-05-14"
    assert "its heading" in facts["log.md#14 May 2025/Evening"][1].split("\n", 1)[0]


@pytest.mark.parametrize("heading", ["Upgrade to 1.31", "Hosts 10.0.30.5 and 10.0.30.6", "INC-2025-05-14 follow-up",
                                     "Release 2024.10.1"])
def test_a_version_address_or_ticket_in_a_heading_is_not_its_date(tmp_path: Path, heading: str) -> None:
    note = f"# Notes\n\n## {heading}\n\n{BODY}\n\n## Other\n\n{BODY}\n\n## More\n\n{BODY}\n"
    facts = _export(tmp_path, {"n.md": note})
    section = facts[f"n.md#{heading}"][0]
    assert section["date"] == "2024-01-15"


def test_a_note_section_carries_its_parent_path_and_opening_line(tmp_path: Path) -> None:
    facts = _export(tmp_path, {"db.md": "# Database upgrade\n\nPostgreSQL 14 to 16 on db01, in place.\n\n"
                                        f"## Rollback\n\n{BODY}\n\n## Verify\n\n{BODY}\n"})
    rest = facts["db.md#Rollback"][1]
    ff = factfile.parse("---\nid: x\n---\n" + rest)
    assert ff.context == "In: Database upgrade\nPostgreSQL 14 to 16 on db01, in place."
    assert "PostgreSQL" not in ff.body                  # context, not the fact: search weighs it lower
    assert factfile.parse("---\nid: x\n---\n" + facts["db.md"][1]).context == ""   # the top has no parent


def _observations(tmp_path: Path, rows: list[dict]) -> dict[str, factfile.FactFile]:
    log = tmp_path / "obs.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pipeline.run("observations", log, tmp_path / "out")
    out = {}
    for p in (tmp_path / "out").rglob("*.md"):
        ff = factfile.parse(p.read_text())
        out[ff.title] = ff
    return out


def test_an_observation_carries_two_calls_before_and_one_after_in_its_session(tmp_path: Path) -> None:
    def call(n: int, session: str, minute: int) -> dict:
        return {"ts": f"2025-10-02T09:{minute:02d}:00Z", "tool": "Bash", "session": session,
                "input": f"step{n} --flag", "output": f"result{n} line\nmore"}
    rows = [call(1, "a", 1), call(2, "a", 2), call(3, "b", 3), call(4, "a", 4), call(5, "a", 5), call(6, "a", 6)]
    facts = _observations(tmp_path, rows)
    ctx = facts["step5 --flag"].context.splitlines()
    assert ctx == ["Bash: step2 --flag -> result2 line", "Bash: step4 --flag -> result4 line", "Bash: (this call)",
                   "Bash: step6 --flag -> result6 line"]
    assert "step3" not in facts["step4 --flag"].context            # another session is not a neighbour
    assert facts["step3 --flag"].context == ""                      # alone in its session


def test_without_sessions_neighbours_are_adjacent_lines_within_an_hour(tmp_path: Path) -> None:
    rows = [{"ts": "2025-10-02T09:00:00Z", "tool": "Bash", "input": "first"},
            {"ts": "2025-10-02T09:30:00Z", "tool": "Bash", "input": "second"},
            {"ts": "2025-10-02T15:00:00Z", "tool": "Bash", "input": "much later"}]
    facts = _observations(tmp_path, rows)
    assert "first" in facts["second"].context and "much later" not in facts["second"].context
    assert facts["much later"].context == ""


def test_a_neighbour_is_cut_at_a_space_never_inside_a_value(tmp_path: Path) -> None:
    token = "tok_" + "x9" * 80                                  # one long word, longer than the cut
    rows = [{"ts": "2025-10-02T09:00:00Z", "tool": "Bash", "session": "s", "input": f"curl -H 'X-Token: {token}'"},
            {"ts": "2025-10-02T09:01:00Z", "tool": "Bash", "session": "s", "input": "next"}]
    ctx = _observations(tmp_path, rows)["next"].context
    assert "curl -H" in ctx and "tok_" not in ctx


def _entries(folder: Path, n: int, body: str = "said something short about item {i}.") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"entry-{i:03d}.md").write_text(f"# Speaker {i % 2}, 8 May 2023\n\n{body.format(i=i)}\n")


def _neighbours(tree: Path) -> dict[str, str]:
    from muninn.export.sources.notes import NotesOptions, NotesSource

    return {f"{f.source_path}#{f.title}": f.context for f in NotesSource(tree, NotesOptions()).facts()}


def test_a_folder_kept_as_a_log_gives_each_entry_the_entries_around_it(tmp_path: Path) -> None:
    _entries(tmp_path / "chat", 10)
    got = _neighbours(tmp_path)
    first, middle, last = (got[f"chat/entry-{i:03d}.md#Speaker {i % 2}, 8 May 2023"] for i in (0, 4, 9))
    assert first == "After: Speaker 1, 8 May 2023: said something short about item 1."
    assert middle.splitlines() == ["Before: Speaker 1, 8 May 2023: said something short about item 3.",
                                   "After: Speaker 1, 8 May 2023: said something short about item 5."]
    assert last.startswith("Before: ") and "After" not in last


@pytest.mark.parametrize("layout", ["few short notes", "long notes", "sectioned documents", "mixed folder"])
def test_notes_that_are_documents_carry_no_sibling_context(tmp_path: Path, layout: str) -> None:
    folder = tmp_path / "notes"
    if layout == "few short notes":          # a handful of how-tos side by side are separate documents
        _entries(folder, 5)
    elif layout == "long notes":
        _entries(folder, 10, body="A paragraph that goes on. " * 40 + "{i}")
    elif layout == "sectioned documents":
        _entries(folder, 10, body="intro {i}\n\n## Part one\n\n" + "one " * 60 + "\n\n## Part two\n\n" + "two " * 60)
    else:                                     # entries are too few of the folder to make it a log
        _entries(folder, 8)
        for i in range(4):
            (folder / f"zz-doc-{i}.md").write_text("# Doc\n\n" + "Long text here. " * 60)
    got = _neighbours(tmp_path)
    assert got and not [v for v in got.values() if v.startswith(("Before:", "After:"))]


def test_a_journal_kept_one_day_a_file_is_a_log_too(tmp_path: Path) -> None:
    # Another shape of the class: no headings, the day in the file name, one short paragraph each.
    folder = tmp_path / "journal"
    folder.mkdir()
    for day in range(1, 11):
        (folder / f"2025-05-{day:02d}.md").write_text(f"Rotated the backup key on nas{day}.\n")
    got = _neighbours(tmp_path)
    mid = next(v for k, v in got.items() if k.startswith("journal/2025-05-05.md"))
    assert "nas4" in mid.splitlines()[0] and "nas6" in mid.splitlines()[1]
