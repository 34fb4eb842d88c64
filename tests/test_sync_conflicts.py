"""Sync keeps what readers changed, against the real server: a reader's edit of an exported file
survives the next sync after its source changes (a conflict, exit 19) and a prune after its source
goes; `--replace` overwrites it; a file muninn did not write is never touched, in any case."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from muninn.core import config, credentials
from muninn.core.client import OpenViking
from muninn.core.errors import ExitCode
from muninn.export.sync import Manifest, remote_files, sync

pytestmark = pytest.mark.integration

FACTS = {
    "tasks/boiler.md": "# Boiler\nThe boiler pressure valve was replaced on 2 November.\n",
    "tasks/nas.md": "# NAS\nThe nas snapshot job runs at 02:30.\n",
    "tasks/printer.md": "# Printer\nThe office printer needs the PCL6 driver.\n",
}
EDIT = "# NAS\nThe nas snapshot job runs at 02:30. (assistant: moved to 03:00 on 12 Nov, see INC-4411)\n"


@pytest.fixture
def area(stack) -> tuple[OpenViking, str]:
    _, client = stack.new_account("cf")
    yield client, f"viking://resources/roadmap{uuid.uuid4().hex[:6]}"
    client.close()


def write_src(src: Path, facts: dict[str, str]) -> Path:
    for rel, text in facts.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    return src


# Every way sync could lose the edit: the source changes, the source goes (with --prune), both at
# once for two files, and the manifest being lost (then the path is simply not muninn's).
CASES = {
    "source changed": lambda src: (src / "tasks/nas.md").write_text("# NAS\nThe nas snapshot job runs at 02:45.\n"),
    "source removed": lambda src: (src / "tasks/nas.md").unlink(),
}


@pytest.mark.parametrize("prune", [False, True])
@pytest.mark.parametrize("change", sorted(CASES))
def test_a_readers_edit_of_an_exported_file_is_kept_named_and_replace_overwrites_it(area, tmp_path, change,
                                                                                     prune) -> None:
    client, to = area
    src = write_src(tmp_path / "src", FACTS)
    m = tmp_path / "m"
    first = sync(client, src, to, manifest_dir=m)
    assert first.written == len(FACTS) and first.conflicts == []
    client.write(f"{to}/tasks/nas.md", EDIT, wait=True)     # the reader's direct edit
    CASES[change](src)
    kept = sync(client, src, to, prune=prune, manifest_dir=m)
    if change == "source removed" and not prune:
        assert kept.conflicts == []         # nothing would touch it: nothing to report
    else:
        assert kept.conflicts == kept.edited == ["tasks/nas.md"]
    assert client.read(f"{to}/tasks/nas.md") == EDIT
    assert kept.missing_after_wait == 0
    # Still a conflict on the next run: nothing is overwritten by asking twice.
    again = sync(client, src, to, prune=prune, manifest_dir=m)
    assert client.read(f"{to}/tasks/nas.md") == EDIT and again.conflicts == kept.conflicts
    forced = sync(client, src, to, prune=prune, manifest_dir=m, replace=True)
    assert forced.conflicts == []
    if change == "source changed":
        assert "02:45" in client.read(f"{to}/tasks/nas.md")
    elif prune:
        assert "tasks/nas.md" not in remote_files(client, to) and forced.removed == 1
    else:
        assert client.read(f"{to}/tasks/nas.md") == EDIT


def test_an_unchanged_source_never_reads_nor_touches_an_edited_file(area, tmp_path) -> None:
    client, to = area
    src = write_src(tmp_path / "src", FACTS)
    sync(client, src, to, manifest_dir=tmp_path / "m")
    client.write(f"{to}/tasks/printer.md", "# Printer\nSwitched to the PS driver.\n", wait=True)
    same = sync(client, src, to, prune=True, manifest_dir=tmp_path / "m")
    assert (same.written, same.unchanged, same.removed, same.conflicts) == (0, len(FACTS), 0, [])
    assert "PS driver" in client.read(f"{to}/tasks/printer.md")


def test_prune_leaves_every_file_muninn_did_not_write_even_inside_an_exported_folder(area, tmp_path) -> None:
    client, to = area
    src = write_src(tmp_path / "src", FACTS)
    sync(client, src, to, manifest_dir=tmp_path / "m")
    direct = {f"{to}/tasks/decision.md": "# Decision\nWe keep the NAS on ZFS.\n",
              f"{to}/assistant/notes.md": "# Notes\nWritten with the assistant's own key.\n"}
    client.batch_write(to, direct, wait=True)
    for rel in FACTS:
        (src / rel).unlink()
    (src / "tasks/kept.md").write_text("# Kept\nOne fact stays so prune may run.\n")
    pruned = sync(client, src, to, prune=True, manifest_dir=tmp_path / "m", replace=True)
    assert pruned.removed == len(FACTS)       # even with --replace: only what the manifest names
    assert {uri: client.read(uri) for uri in direct} == direct


def test_a_pending_write_that_landed_is_ours_not_a_conflict(area, tmp_path) -> None:
    client, to = area
    src = write_src(tmp_path / "src", FACTS)
    m = tmp_path / "m"
    sync(client, src, to, manifest_dir=m)
    manifest = Manifest.for_target(client, to, m)
    # As a kill after the server took a batch leaves it: the new bytes pending, the old ones confirmed.
    new = "# NAS\nThe nas snapshot job runs at 04:00.\n"
    client.write(f"{to}/tasks/nas.md", new, wait=True)
    manifest.pending["tasks/nas.md"] = hashlib.sha256(new.encode()).hexdigest()
    manifest.save()
    (src / "tasks/nas.md").write_text("# NAS\nThe nas snapshot job runs at 05:00.\n")
    rerun = sync(client, src, to, manifest_dir=m)
    assert rerun.conflicts == [] and "05:00" in client.read(f"{to}/tasks/nas.md")


def test_the_cli_exits_19_naming_the_conflict_and_replace_clears_it(stack, tmp_path) -> None:
    account = f"cfc{uuid.uuid4().hex[:8]}"
    key = stack.root.create_account(account, "owner")
    cfg = {**yaml.safe_load(stack.config_path.read_text()), "home": str(tmp_path / "home"),
           "openviking": {"account": account, "user": "owner"}}
    (tmp_path / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    settings = config.load(tmp_path / "muninn.yaml")
    credentials.for_server(settings).set(credentials.user_key_name(account, "owner"), key)
    env = {**stack.env, "MUNINN_CONFIG": str(tmp_path / "muninn.yaml"), "MUNINN_HOME": str(tmp_path / "home")}
    from muninn.export import pipeline

    notes = write_src(tmp_path / "notes", FACTS)
    src = tmp_path / "out"
    pipeline.run("notes", notes, src, [])
    to = "viking://resources/roadmap"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "muninn", "sync", str(src), "--to", to, *args],
                              capture_output=True, text=True, env=env, timeout=300)

    assert run().returncode == 0
    with OpenViking(stack.settings.server.base_url, key, key_name=account) as c:
        (uri,) = [f"{to}/{rel}" for rel in remote_files(c, to) if "nas" in rel]
        c.write(uri, EDIT, wait=True)
    (notes / "tasks/nas.md").write_text("# NAS\nThe nas snapshot job runs at 02:45.\n")
    pipeline.run("notes", notes, src, [])
    kept = run("--json")
    assert kept.returncode == ExitCode.SYNC_CONFLICT == 19, kept.stderr
    assert [f"{to}/{rel}" for rel in json.loads(kept.stdout)["edited"]] == [uri]
    assert uri in kept.stderr and "--replace" in kept.stderr and "Traceback" not in kept.stderr
    done = run("--replace", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == 1
