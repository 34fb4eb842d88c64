"""Keyring names are scoped by server URL and workspace: two stacks on one machine, sharing one
keyring file, keep their own keys (unit cases over every way two setups can differ, and two real
stacks side by side); the workspace upgrade step moves keys stored under the old plain names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import FILE_KEYRING, own_stack

from muninn.core import config, credentials, upgrade
from muninn.plugins.stack.keyring_scope import move_plain_names


def _settings(tmp: Path, home: str, url: str | None) -> config.Settings:
    cfg = {"home": str(tmp / home), "keyring": {"backend": FILE_KEYRING}}
    if url:
        cfg["server"] = {"url": url}
    path = tmp / f"{home}-{abs(hash(url))}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return config.load(path)


# (home, server.url) of two setups on one machine: any difference keeps the keys apart
PAIRS = [
    (("a", None), ("b", None)),                                    # two homes, the default server
    (("a", "http://127.0.0.1:1933"), ("a", "http://10.0.0.5:1933")),  # one home, two servers
    (("a", "http://127.0.0.1:1933"), ("b", "http://10.0.0.5:1933")),  # both differ
    (("a", None), ("a", "http://127.0.0.1:2933")),                  # one home, local then external
]


@pytest.mark.parametrize("first, second", PAIRS)
def test_two_setups_keep_their_own_keys(tmp_path: Path, isolated_keyring: Path, first, second) -> None:
    one, two = _settings(tmp_path, *first), _settings(tmp_path, *second)
    names = [credentials.root_key_name(), credentials.user_key_name("muninn", "owner")]
    for s, tag in ((one, "one"), (two, "two")):
        for name in names:
            credentials.for_server(s).set(name, f"{tag}:{name}")
    for s, tag in ((one, "one"), (two, "two")):
        ring = credentials.for_server(s)
        assert [ring.get(n) for n in names] == [f"{tag}:{n}" for n in names]
        assert sorted(ring.names()) == sorted(names)
    # the vault key belongs to the workspace: one per home, whatever the server
    for s, tag in ((one, "one"), (two, "two")):
        credentials.for_home(s).set(s.vault.key_name, f"vault-{tag}")
    same_home = one.workspace == two.workspace
    assert credentials.for_home(one).get(one.vault.key_name) == ("vault-two" if same_home else "vault-one")
    # nothing under a plain name: no third setup reads these by accident
    assert credentials.Keyring(FILE_KEYRING).get(credentials.root_key_name()) is None


def test_the_same_setup_finds_its_keys_again(tmp_path: Path, isolated_keyring: Path) -> None:
    s = _settings(tmp_path, "a", "http://127.0.0.1:1933/")
    credentials.for_server(s).set(credentials.root_key_name(), "k")
    again = _settings(tmp_path, "a", "http://127.0.0.1:1933")    # the trailing slash is not a new server
    assert credentials.for_server(again).get(credentials.root_key_name()) == "k"


LEGACY = {"openviking:root": "root-key", "openviking:muninn:owner": "owner-key",
          "openviking:home:raven": "raven-key", "vault:key": "vault-key"}


def test_the_upgrade_step_moves_plain_names_into_the_scope(tmp_path: Path, isolated_keyring: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "format.json").write_text(json.dumps({"format": 1}))
    plain = credentials.Keyring(FILE_KEYRING)
    for name, value in LEGACY.items():
        plain.set(name, value)
    plain.set("someone-else:token", "theirs")        # not muninn's kind of name: left alone
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(home), "keyring": {"backend": FILE_KEYRING}}))
    env = {**os.environ, "XDG_DATA_HOME": str(isolated_keyring)}
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "status", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert json.loads((home / "format.json").read_text())["format"] == upgrade.current() >= 2
    s = config.load(cfg)
    server, own = credentials.for_server(s), credentials.for_home(s)
    for name, value in LEGACY.items():
        assert (own if name == "vault:key" else server).get(name) == value, name
        assert plain.get(name) is None, name                     # moved, not copied
    assert plain.get("someone-else:token") == "theirs"
    # a second run has nothing left to move and changes nothing
    before = sorted(plain.stored_names())
    assert move_plain_names(s) == [] and sorted(plain.stored_names()) == before


@pytest.mark.integration
def test_two_real_stacks_side_by_side_share_one_keyring_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "one-keyring"
    monkeypatch.setenv("XDG_DATA_HOME", str(shared))
    with own_stack(tmp_path / "a", keyring_dir=shared) as a, own_stack(tmp_path / "b", keyring_dir=shared) as b:
        keys = []
        for st in (a, b):
            done = subprocess.run([sys.executable, "-m", "muninn", "status", "--json"], capture_output=True,
                                  text=True, env=st.env, timeout=300)
            assert done.returncode == 0, done.stderr
            assert all(c["healthy"] for c in json.loads(done.stdout))
            keys.append(credentials.for_server(st.settings).get(credentials.root_key_name()))
        assert None not in keys and keys[0] != keys[1]
        # each stack still answers its own root key after the other started (nothing was clobbered)
        for st in (a, b):
            assert st.root.list_accounts() is not None


ALLOWED = {"muninn/core/credentials.py", "plugins/stack/keyring_scope.py", "tests/test_keyring.py",
           "tests/test_keyring_scope.py"}


def test_keys_are_reached_only_through_a_scope() -> None:
    """One way to reach a key: credentials.for_server / for_home. A plain `Keyring(backend)` elsewhere
    reads and writes unscoped names, which another stack on the machine overwrites."""
    root = Path(__file__).resolve().parents[1]
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".venv/", "build/")) or rel in ALLOWED:
            continue
        if "Keyring(" in path.read_text(errors="replace"):
            offenders.append(rel)
    assert offenders == [], offenders
