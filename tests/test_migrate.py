"""`muninn embed migrate`: bge-small -> MiniLM-L6 (both packaged, no download) on real stacks of their own.

What only the server holds must survive: an account made by hand with a reader's key, the reader's
direct write, and a write made while the migration ran (after a kill in the middle of the reindex). A
migration aborted before that leaves the workspace as it was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Stack, own_stack

from muninn.core import config, format_file
from muninn.core.client import OpenViking
from muninn.plugins.stack import migrate, migrate_steps
from muninn.plugins.stack import migrate_state as st

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BGE = "BAAI/bge-small-en-v1.5"
# Pinned: a new workspace's default model may change, and these tests mean bge -> MiniLM.
PINNED = {"embed": {"model": BGE, "model_name": "bge-small-en-v1.5"}}

FACTS = {
    "postgres.md": "# Postgres failover\nPromote the replica with pg_ctl promote after fencing the old primary.",
    "dns.md": "# DNS\nThe internal resolver forwards corp.example queries to the two bind servers in rack four.",
    "backups.md": "# Backups\nRestic snapshots of the build cache are pruned every Sunday keeping eight weeks.",
    "vpn.md": "# VPN\nWireguard peers for the lab live in the ansible inventory under group lab_vpn.",
}


def _migrate_until(stack: Stack, marker: str, *args: str) -> str:
    """Run `muninn embed migrate` and SIGKILL it once stderr shows `marker`: what it printed until then."""
    proc = subprocess.Popen([sys.executable, "-m", "muninn", "embed", "migrate", *args], env=stack.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = ""
    assert proc.stderr is not None
    for line in proc.stderr:
        seen += line
        if marker in line:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert marker in seen, seen
    return seen


def _found(client: OpenViking, uri: str, text: str) -> bool:
    target = uri.rsplit("/", 1)[0]
    return any(str(h.get("uri", "")).startswith(uri) for h in client.find(text, target_uri=target, limit=10))


def _conf_model(stack: Stack) -> str:
    return json.loads((stack.settings.paths.stack / "ov.conf").read_text())["embedding"]["dense"]["model"]


def test_migrate_aborts_cleanly_keeps_what_only_the_server_holds_and_resumes_after_a_kill(tmp_path: Path) -> None:
    with own_stack(tmp_path / "ws", PINNED, keyring_dir=Path(os.environ["XDG_DATA_HOME"])) as stack:
        owner = OpenViking.user(stack.settings)
        owner.ensure_dir("viking://resources/notes")
        owner.batch_write("viking://resources/notes",
                          {f"viking://resources/notes/{name}": text for name, text in FACTS.items()})
        # An account made by hand with a reader, whose key exists only on the server and here.
        stack.root.create_account("home", "admin")
        reader_key = stack.root.register_user("home", "raven", role="user")
        reader = OpenViking(stack.settings.server.base_url, reader_key, key_name="home:raven")
        reader.ensure_dir("viking://resources/agents")
        reader.ensure_dir("viking://resources/agents/raven")
        direct = "viking://resources/agents/raven/seen.md"
        reader.write(direct, "# Seen\nThe nightly rsync to the cold store stalls when the NAS fan alarm is on.",
                     wait=True)
        assert _conf_model(stack) == "bge-small-en-v1.5"

        # Started, then aborted: the workspace is as it was (one stack serves both stories; each up costs ~15 s).
        before = st.stamps(st.data(stack.settings))
        _migrate_until(stack, "starting a second openviking-server", "--to", MINILM)
        state = st.load(stack.settings)
        assert state is not None and (st.side_data(stack.settings) / "viking").is_dir()
        aborted = stack.cli("embed", "migrate", "--abort")
        assert aborted.returncode == 0, aborted.stderr
        assert not st.folder(stack.settings).exists()
        assert st.stamps(st.data(stack.settings)) == before
        assert all(not migrate_steps.running(state, part) for part in ("server", "embed"))
        assert stack.cli("status").returncode == 0
        assert _conf_model(stack) == "bge-small-en-v1.5"
        assert _found(reader, direct, "rsync to the cold store stalls")

        # Started again and killed in the middle of the reindex: the old server still answers on the old model.
        _migrate_until(stack, "re-embedding", "--to", MINILM)
        state = st.load(stack.settings)
        assert state is not None and state.phase == "reindex"
        assert stack.cli("status").returncode == 0
        assert _conf_model(stack) == "bge-small-en-v1.5"

        # A write in the window, on the old server: it must reach the new data.
        late = "viking://resources/agents/raven/late.md"
        reader.write(late, "# Late\nThe label printer in room two needs the zebra driver from the vendor share.",
                     wait=True)
        owner.rm("viking://resources/notes/vpn.md")       # and a removal

        done = stack.cli("embed", "migrate", "--json", timeout=1200)
        assert done.returncode == 0, done.stderr
        assert "copying" not in done.stderr          # resumed, not started over
        summary = json.loads(done.stdout)
        assert summary["new"] == MINILM and summary["old"] == "BAAI/bge-small-en-v1.5"
        assert "home/viking://resources/agents/raven/late.md" in summary["carried"]
        assert summary["removed"] == ["muninn/viking://resources/notes/vpn.md"]
        assert summary["vectors"] >= summary["files"] >= len(FACTS) + 1
        assert format_file.recorded(stack.settings.workspace).model == MINILM
        assert _conf_model(stack) == "all-MiniLM-L6-v2"
        assert config.load(stack.config_path).embed.model == MINILM      # the owner's muninn.yaml follows
        assert (stack.settings.paths.stack / "data.bge-small-en-v1.5.bak" / "viking").is_dir()
        assert not st.folder(stack.settings).exists()

        # The reader's key still works, and everything is found with the new model.
        with OpenViking(stack.settings.server.base_url, reader_key, key_name="home:raven") as again:
            assert "cold store" in again.read(direct)
            assert _found(again, direct, "rsync to the cold store stalls")
            assert _found(again, late, "label printer zebra driver")
        owner = OpenViking.user(stack.settings)
        for name, text in FACTS.items():
            if name != "vpn.md":
                assert _found(owner, f"viking://resources/notes/{name}", text.splitlines()[1]), name
        assert "viking://resources/notes/vpn.md" not in {e.uri for e in owner.ls("viking://resources/notes")}


@pytest.mark.parametrize("args, code, says", [
    (["--to", "no/such-model"], 2, "muninn models fetch"),
    (["--to", "intfloat/e5-small-v2"], 6, "muninn models fetch"),      # not fetched (an empty models folder)
    (["--to", BGE], 20, "already made with"),
    ([], 2, "--to"),
])
def test_bad_requests_are_one_sentence_with_a_fix(run_muninn, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  args: list[str], code: int, says: str) -> None:
    monkeypatch.setenv("MUNINN_EMBED__MODEL", BGE)
    monkeypatch.setenv("MUNINN_EMBED__MODEL_NAME", "bge-small-en-v1.5")
    monkeypatch.setenv("MUNINN_MODELS", str(tmp_path / "models"))
    ended = run_muninn(["embed", "migrate", *args])
    assert ended.exit_code == code, ended.stderr
    assert says in ended.stderr
    assert "Traceback" not in ended.stderr


def test_abort_without_a_migration_says_so(run_muninn) -> None:
    ended = run_muninn(["embed", "migrate", "--abort", "--json"])
    assert ended.exit_code == 0
    assert "no migration in progress" in ended.stderr
    assert json.loads(ended.stdout) == {"aborted": False}


def test_config_moves_the_model_and_its_name_together(tmp_path: Path) -> None:
    path = tmp_path / "muninn.yaml"
    path.write_text("# mine\nembed:\n  model: BAAI/bge-small-en-v1.5  # the old one\n  port: 9\nsearch:\n  k: 3\n")
    state = st.State(to=MINILM, to_name="all-MiniLM-L6-v2", old="BAAI/bge-small-en-v1.5", old_name="bge-small-en-v1.5")
    said = migrate._config(config.load(path), state)
    loaded = config.load(path)
    assert (loaded.embed.model, loaded.embed.model_name, loaded.embed.port) == (MINILM, "all-MiniLM-L6-v2", 9)
    assert path.read_text().startswith("# mine\n") and str(path) in said


def test_an_earlier_backup_of_the_same_model_is_never_overwritten(tmp_path: Path) -> None:
    assert st.backup_name(tmp_path, "BAAI/bge-small-en-v1.5") == "data.bge-small-en-v1.5.bak"
    (tmp_path / "data.bge-small-en-v1.5.bak").mkdir()
    second = st.backup_name(tmp_path, "BAAI/bge-small-en-v1.5")
    assert second.startswith("data.bge-small-en-v1.5.") and second.endswith(".bak") and not (tmp_path / second).exists()
