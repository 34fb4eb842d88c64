"""A source at its area's root (`name: .`, issue #35 §3.7): `init` writes it, so a new workspace's notes read
viking://resources/notes/x.md, not notes/notes/x.md. An older workspace moves with `muninn move-to-root`,
through the real CLI and server: muninn's files, a reader's edit and a file written there directly all
reach the root, none is duplicated or pruned by the syncs after, and an export or sync before the move
is refused instead of making a second copy."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.core.client import OpenViking
from muninn.core.errors import ExitCode
from muninn.export import area_root
from muninn.export.sync import remote_files
from muninn.plugins.search.keyword import KeywordIndex
from muninn.plugins.stack import init_files

NOTES = {
    "boiler.md": "# Boiler\n\nThe boiler pressure valve was replaced on 2 November.\n",
    "nas.md": "# NAS\n\nThe nas snapshot job runs at 02:30.\n",
    "printer.md": "# Printer\n\nThe office printer needs the PCL6 driver.\n",
    "router.md": "# Router\n\nThe router's admin page is on port 8443.\n",
}
AREA = "viking://resources/notes"
EDIT = "# NAS\nThe nas snapshot job runs at 03:00 now (the assistant's edit).\n"
DIRECT = "# Decision\nWe keep the NAS on ZFS.\n"
SOMEONE = "# Router\nSomeone else's page at the root.\n"


def test_init_puts_the_notes_at_the_area_root(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    planned = init_files.plan(tmp_path / "muninn.yaml", tmp_path / "notes")
    settings_text = planned[0].text
    (notes,) = [s for s in yaml.safe_load(settings_text)["sources"] if s["kind"] == "notes"]
    assert notes["name"] == "." and notes["area"] == AREA


@pytest.mark.parametrize("name", ["..", ".hidden", "a/b"])
def test_a_name_that_would_leave_the_area_or_hide_is_refused(tmp_path: Path, name: str) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"sources": [{"kind": "notes", "path": ".", "area": AREA, "name": name}]}))
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "export", "all"],
                          capture_output=True, text=True, env={"MUNINN_HOME": str(tmp_path / "home"),
                                                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == ExitCode.BAD_INPUT == 2 and "sources" in done.stderr and "Traceback" not in done.stderr


def test_a_root_source_shares_its_area_with_no_other(tmp_path: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"sources": [
        {"kind": "notes", "path": ".", "area": AREA, "name": "."},
        {"kind": "tasks", "path": "t.db", "area": f"{AREA}/roadmap"}]}))
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "export", "all"],
                          capture_output=True, text=True, env={"MUNINN_HOME": str(tmp_path / "home"),
                                                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and "name: ." in done.stderr and f"{AREA}/roadmap/tasks" in done.stderr


@dataclass
class OldWorkspace:
    """A workspace as `init` wrote it before `name: .`: its notes synced to notes/notes/ on a real server."""

    account: str
    key: str
    notes: Path
    conf: Path
    base: dict
    old_source: dict
    env: dict

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True,
                              env=self.env, timeout=300)

    def to_root(self) -> None:
        """The owner adds `name: .` to the source."""
        self.conf.write_text(yaml.safe_dump({**self.base, "sources": [{**self.old_source, "name": "."}]}))


@pytest.fixture
def old_workspace(stack, tmp_path: Path) -> OldWorkspace:
    account = f"ar{uuid.uuid4().hex[:8]}"
    key = stack.root.create_account(account, "owner")
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    conf = tmp_path / "muninn.yaml"
    base = {**yaml.safe_load(stack.config_path.read_text()), "home": str(tmp_path / "home"),
            "openviking": {"account": account, "user": "owner"}}
    old_source = {"kind": "notes", "path": str(notes), "area": AREA}    # what `init` wrote before
    conf.write_text(yaml.safe_dump({**base, "sources": [old_source]}))
    credentials.for_server(config.load(conf)).set(credentials.user_key_name(account, "owner"), key)
    env = {**stack.env, "MUNINN_CONFIG": str(conf), "MUNINN_HOME": str(tmp_path / "home")}
    ws = OldWorkspace(account, key, notes, conf, base, old_source, env)
    assert ws.cli("export", "all").returncode == 0
    assert ws.cli("sync", "all").returncode == 0
    return ws


@pytest.mark.integration
def test_an_old_workspace_moves_its_notes_to_the_root_losing_nothing(stack, old_workspace: OldWorkspace,
                                                                      tmp_path: Path) -> None:
    ws, cli, notes = old_workspace, old_workspace.cli, old_workspace.notes
    account, key = ws.account, ws.key
    client = OpenViking(stack.settings.server.base_url, key, key_name=account)
    assert remote_files(client, AREA) == {f"notes/{n}" for n in NOTES}
    client.write(f"{AREA}/notes/nas.md", EDIT, wait=True)                  # a reader's edit
    client.write(f"{AREA}/notes/decision.md", DIRECT, wait=True)           # a file written there directly
    client.write(f"{AREA}/router.md", SOMEONE, wait=True)                  # the root path already taken

    # The workspace as the last format left it: the next command names the step and its commands.
    (tmp_path / "home" / "format.json").write_text('{"format": 5}\n')
    said = cli("status", "--json")
    assert "add `name: .` to that source" in said.stderr and "`muninn move-to-root" in said.stderr, said.stderr

    ws.to_root()
    for refused in (cli("export", "all"), cli("sync", "all")):   # before the move: two copies, so no
        assert refused.returncode == 2 and "muninn move-to-root" in refused.stderr, refused.stderr

    moved = cli("move-to-root", "--json")
    assert moved.returncode == ExitCode.SYNC_CONFLICT, moved.stderr
    (report,) = json.loads(moved.stdout)
    assert {m["new"] for m in report["moved"]} == {f"{AREA}/{n}" for n in ("boiler.md", "nas.md", "printer.md",
                                                                          "decision.md")}
    assert report["kept"] == [f"{AREA}/notes/router.md"] and "router.md" in moved.stderr
    assert not (tmp_path / "home" / "exports" / "notes" / "notes").exists()
    # The owner's keyword index follows the move: rows at the root paths, none left at the old ones.
    index = KeywordIndex(config.load(ws.conf).paths.search_index())
    indexed = {uri for uri, _ in index.documents()}
    index.close()
    assert {f"{AREA}/{n}" for n in ("boiler.md", "nas.md", "printer.md")} <= indexed, indexed
    assert not {u for u in indexed if u.startswith(f"{AREA}/notes/") and u != f"{AREA}/notes/router.md"}, indexed

    assert cli("export", "all").returncode == 0
    synced = cli("sync", "all", "--json")
    assert synced.returncode == ExitCode.SYNC_CONFLICT, synced.stderr
    got = json.loads(synced.stdout)[AREA]
    # boiler, printer and nas moved, not rewritten: nas's source is unchanged, so its edit is not even read.
    assert got["written"] == 0 and got["unchanged"] == 3 and got["conflicts"] == ["router.md"], got
    (notes / "nas.md").write_text("# NAS\n\nThe nas snapshot job runs at 02:45.\n")
    assert cli("export", "all").returncode == 0
    changed = cli("sync", "all", "--json")
    assert changed.returncode == ExitCode.SYNC_CONFLICT, changed.stderr
    got = json.loads(changed.stdout)[AREA]
    assert got["edited"] == ["nas.md"] and got["conflicts"] == ["nas.md", "router.md"], got   # still the reader's
    pruned = cli("sync", "all", "--prune", "--json")
    assert pruned.returncode == ExitCode.SYNC_CONFLICT, pruned.stderr
    # The only file pruned is muninn's own unedited copy left at the old path behind the taken root path.
    assert remote_files(client, AREA) == set(NOTES) | {"decision.md"}
    assert client.read(f"{AREA}/nas.md") == EDIT and client.read(f"{AREA}/decision.md") == DIRECT
    assert client.read(f"{AREA}/router.md") == SOMEONE
    again = cli("move-to-root", "--json")
    assert again.returncode == 0 and json.loads(again.stdout) == [{"area": AREA, "moved": [], "kept": [],
                                                                  "changed": []}]
    client.close()


class _ReaderEditsDuringTheMove(OpenViking):
    """The CLI's client, while a reader edits the old file just after its copy is written (a real write)."""

    def __init__(self, *args, edit: tuple[str, str, str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.edit = edit   # (new uri whose copy triggers it, old uri, the reader's text)

    def write(self, uri: str, content: str, mode: str = "replace", wait: bool = False) -> dict:
        done = super().write(uri, content, mode=mode, wait=wait)
        if uri == self.edit[0]:
            super().write(self.edit[1], self.edit[2], wait=True)
        return done


@pytest.mark.integration
def test_an_edit_during_the_move_is_kept_and_a_second_run_moves_only_that(stack, old_workspace: OldWorkspace
                                                                           ) -> None:
    ws, cli, notes, conf, account, key = (old_workspace, old_workspace.cli, old_workspace.notes,
                                          old_workspace.conf, old_workspace.account, old_workspace.key)
    ws.to_root()
    edited = "# Boiler\nThe valve was replaced on 3 November (a reader, mid-move).\n"
    reader = _ReaderEditsDuringTheMove(stack.settings.server.base_url, key,
                                       key_name=credentials.user_key_name(account, "owner"),
                                       edit=(f"{AREA}/boiler.md", f"{AREA}/notes/boiler.md", edited))
    (report,) = area_root.move(config.load(conf), reader)
    assert report.changed == [f"{AREA}/notes/boiler.md"] and report.kept == []
    assert {n for _, n in report.moved} == {f"{AREA}/{n}" for n in NOTES if n != "boiler.md"}
    assert reader.read(f"{AREA}/notes/boiler.md") == edited                      # the edit, not deleted
    assert f"{AREA}/boiler.md" not in {e.uri for e in reader.walk(AREA)}         # its early copy taken back

    again = cli("move-to-root", "--json")      # the export ledger is gone: only what was kept is tried again
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)[0]["moved"] == [{"old": f"{AREA}/notes/boiler.md", "new": f"{AREA}/boiler.md"}]
    assert reader.read(f"{AREA}/boiler.md") == edited

    # The new layout with a folder of the tree named like the kind: notes/notes/inner.md is the source's own.
    (notes / "notes").mkdir()
    (notes / "notes" / "inner.md").write_text("# Inner\n\nA page in a sub-folder called notes.\n")
    assert cli("export", "all").returncode == 0
    assert cli("sync", "all").returncode == 0
    assert "# Inner" in reader.read(f"{AREA}/notes/inner.md")
    third = cli("move-to-root", "--json")
    assert third.returncode == 0 and json.loads(third.stdout)[0]["moved"] == [], third.stdout
    assert "# Inner" in reader.read(f"{AREA}/notes/inner.md")
    assert "inner.md" not in remote_files(reader, AREA)
    reader.close()
