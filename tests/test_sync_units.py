"""Sync's pieces that need no server: what counts as confirmed, what is a fact file, the manifest."""

from __future__ import annotations

from pathlib import Path

from muninn.export.sync import Manifest, _confirmed, local_files

AREA = "viking://resources/a"


def test_only_paths_the_server_lists_are_confirmed() -> None:
    batch = {"x.md": b"1", "y/z.md": b"2", "w.md": b"3"}
    result = {"created": [f"{AREA}/x.md"], "updated": [f"{AREA}/y/z.md"], "unchanged": []}
    assert _confirmed(result, AREA, batch) == ["x.md", "y/z.md"]
    # An answer without the lists (an older server) confirms the batch it accepted.
    assert _confirmed({"task_id": "t"}, AREA, batch) == list(batch)


def test_fact_files_exclude_hidden_files_and_ledgers(tmp_path: Path) -> None:
    (tmp_path / ".muninn-export").mkdir()
    (tmp_path / ".muninn-export" / "notes.md").write_text("ledger-ish")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.md").write_text("fact")
    (tmp_path / "a" / ".draft.md").write_text("hidden")
    (tmp_path / "a" / "c.txt").write_text("not a fact")
    assert local_files(tmp_path) == {"a/b.md": b"fact"}


def test_manifest_keeps_files_and_pending_across_processes(tmp_path: Path) -> None:
    m = Manifest(tmp_path / "m.json", {"server": "s", "identity": "i", "to": AREA})
    m.files["a.md"] = "h1"
    m.pending["b.md"] = "h2"
    m.save()
    again = Manifest(tmp_path / "m.json", m.header)
    assert (again.files, again.pending, again.owned()) == ({"a.md": "h1"}, {"b.md": "h2"}, {"a.md", "b.md"})
    assert not list(tmp_path.glob("*.tmp"))
