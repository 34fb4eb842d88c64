"""A new machine, end to end, against real servers and the real CLI: workspace A (a vault secret, a file
a reader wrote, a policy) is backed up; workspace B on a fresh server takes the backup key, restores
everything, mints readers' keys with `policy apply` and takes the vault's key; a reader on a third host
C receives its key as a passphrase-sealed file, proven on import, and finds and reads the restored file.
Every refusal on the way (a wrong passphrase, a changed file, a reader not in the policy, a key the
server rejects) stores nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import uuid
from pathlib import Path

import pytest
import yaml
from test_backup import RAVEN, RAVEN_URI, cli, make_workspace, reader

from muninn.core import config, credentials
from muninn.core import policy as policy_mod
from muninn.plugins.access.vault import Vault
from muninn.plugins.stack import policy_apply

pytestmark = pytest.mark.integration

PASS = "quartz meadow tonic ladder"
SECRET_ID = "jira-api-token"


def _value(config_path: Path) -> str:
    entries = yaml.safe_load((config_path.parent / "secrets.yaml").read_text())
    return next(e["value"] for e in entries if e["id"] == SECRET_ID)


def _sha_of_env(env: dict, name: str) -> tuple[int, str]:
    """`secret exec` as an agent runs it: the child proves it got the value by printing its hash."""
    done = cli(env, "secret", "exec", SECRET_ID, "--env", name, "--", "python3", "-c",
               f"import hashlib, os; print(hashlib.sha256(os.environ[{name!r}].encode()).hexdigest())")
    return done.returncode, done.stdout.strip() + done.stderr


def _reader_host(base: Path, b_config: Path, b_policy: Path, raven: policy_mod.Profile) -> tuple[dict, Path]:
    """Host C: B's server and sidecar, its own home and an empty keyring, raven as its identity."""
    cfg = yaml.safe_load(b_config.read_text())
    cfg.update({"home": str(base / "home"), "openviking": {"account": raven.account, "user": raven.user}})
    base.mkdir(parents=True)
    shutil.copy(b_policy, base / "policy.yaml")
    cfg.setdefault("guard", {})["policy"] = "policy.yaml"
    (base / "muninn.yaml").write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "MUNINN_CONFIG": str(base / "muninn.yaml"), "MUNINN_HOME": cfg["home"],
           "XDG_DATA_HOME": str(base / "xdg"), "XDG_CONFIG_HOME": str(base / "config")}
    return env, base / "muninn.yaml"


def test_a_new_machine_and_a_reader_on_another_host_get_everything_back(stack, tmp_path) -> None:
    from conftest import own_stack

    # --- workspace A: a policy, a vault secret, a file a reader wrote -------------------------
    account = f"kt{uuid.uuid4().hex[:8]}"
    a_path = make_workspace(tmp_path / "a", stack.settings.server.port, account)
    a = config.load(a_path)
    root = credentials.root_key_name()
    credentials.for_server(a).set(root, credentials.for_server(stack.settings).require(root, fix="-"))
    assert policy_apply.apply(a, policy_mod.load_for(a), say=lambda m: None).ok
    Vault(a).sync()
    with reader(a, "raven") as raven_client:
        raven_client.write(RAVEN_URI, RAVEN, wait=True)
    a_env = {**stack.env, "MUNINN_CONFIG": str(a_path), "MUNINN_HOME": str(a.paths.home), "MUNINN_PASSPHRASE": PASS}
    made = cli(a_env, "backup", "create", "--json")
    assert made.returncode == 0, made.stderr
    backup_file = Path(json.loads(made.stdout)["path"])
    keys = tmp_path / "carried"
    keys.mkdir()
    for args in (["backup", "key", "export", str(keys / "backup.key")],
                 ["key", "export", "--vault", "--to", str(keys / "vault.key")],
                 ["key", "export", "--profile", "raven", "--to", str(keys / "a-raven.key")]):
        done = cli(a_env, *args)
        assert done.returncode == 0, (args, done.stderr)
    want = hashlib.sha256(_value(a_path).encode()).hexdigest()
    assert _sha_of_env(a_env, "JIRA") == (0, want)

    # --- workspace B: a fresh server, an empty keyring ----------------------------------------
    with own_stack(tmp_path / "b") as fresh:
        cfg = yaml.safe_load(fresh.config_path.read_text())
        cfg["openviking"] = {"account": account, "user": "owner"}
        fresh.config_path.write_text(yaml.safe_dump(cfg))
        b_env = {**fresh.env, "MUNINN_PASSPHRASE": PASS}
        assert cli(b_env, "backup", "key", "import", str(keys / "backup.key")).returncode == 0
        first = cli(b_env, "backup", "restore", str(backup_file), "--all", "--json")
        assert first.returncode == 1 and "muninn policy apply" in first.stderr, first.stderr
        assert cli(b_env, "policy", "apply").returncode == 0

        # The vault store came back sealed: no value opens until the owner supplies the vault key, and the
        # restore gate, which redacts the vault's values, waits for it too (nothing written ungated).
        code, said = _sha_of_env(b_env, "JIRA")
        assert code == 4 and "vault key" in said and want not in said, said
        waits = cli(b_env, "backup", "restore", str(backup_file), "--all", "--json")
        assert waits.returncode == 4 and "key import" in waits.stderr, waits.stderr
        took = cli(b_env, "key", "import", str(keys / "vault.key"), "--json")
        assert took.returncode == 0, took.stderr
        assert "value(s) opened" in json.loads(took.stdout)["proven_by"]
        assert _sha_of_env(b_env, "JIRA") == (0, want)
        second = cli(b_env, "backup", "restore", str(backup_file), "--all", "--json")
        assert second.returncode == 0, second.stderr
        assert RAVEN_URI in json.loads(second.stdout)["written"]

        # A's raven key was minted by A's server: B's server rejects it, and nothing is stored.
        b = config.load(fresh.config_path)
        raven = policy_mod.load_for(b).profile("raven")
        with pytest.MonkeyPatch.context() as mp:     # B's keyring file, as B's CLI sees it
            mp.setenv("XDG_DATA_HOME", b_env["XDG_DATA_HOME"])
            minted_on_b = credentials.for_server(b).require(raven.key_name, fix="-")
        stale = cli(b_env, "key", "import", str(keys / "a-raven.key"))
        assert stale.returncode == 5 and "rejects the key" in stale.stderr, stale.stderr
        assert "Traceback" not in stale.stderr

        # --- host C: raven's own host, receiving the key B minted ----------------------------
        carried = keys / "raven.key"
        exported = cli(b_env, "key", "export", "--profile", "raven", "--to", str(carried))
        assert exported.returncode == 0 and minted_on_b not in exported.stdout + exported.stderr
        assert stat.S_IMODE(carried.stat().st_mode) == 0o600
        body = carried.read_bytes()
        for clear in (minted_on_b, base64.b64encode(minted_on_b.encode()).decode(), *raven.read_prefixes):
            assert clear.encode() not in body
        c_env, c_path = _reader_host(tmp_path / "c", fresh.config_path, b.paths.policy, raven)
        for env, extra, code, words in (
                ({**c_env, "MUNINN_PASSPHRASE": "not the passphrase"}, [], 4, "does not open with that passphrase"),
                ({**c_env, "MUNINN_PASSPHRASE": PASS}, ["--profile", "nobody"], 2, "no reader named 'nobody'"),
                ({**c_env, "MUNINN_PASSPHRASE": PASS}, ["--profile", "assistant"], 2, "pass the --profile"),
                ({**c_env, "MUNINN_PASSPHRASE": ""}, [], 2, "the passphrase is empty")):
            refused = cli(env, "key", "import", str(carried), *extra)
            assert refused.returncode == code and words in refused.stderr, (extra, refused.stderr)
        doc = json.loads(body)
        sealed = bytearray(base64.b64decode(doc["sealed"]))
        sealed[5] ^= 1
        tampered = keys / "tampered.key"
        tampered.write_text(json.dumps({**doc, "sealed": base64.b64encode(bytes(sealed)).decode()}))
        changed = cli({**c_env, "MUNINN_PASSPHRASE": PASS}, "key", "import", str(tampered))
        assert changed.returncode == 4 and "changed since export" in changed.stderr, changed.stderr
        # Nothing stored yet: raven cannot read on C.
        assert cli(c_env, "read", RAVEN_URI).returncode == 4
        passfile = tmp_path / "pass"
        passfile.write_text(PASS + "\n")
        got = cli(c_env, "key", "import", str(carried), "--passphrase-file", str(passfile), "--json")
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout) == {"kind": "muninn-reader-key", "path": str(carried), "profile": "raven",
                                          "key_name": raven.key_name, "proven_by": f"ls {raven.read_prefixes[0]}"}
        # A different key already stored under that name is replaced, and the import says so.
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("XDG_DATA_HOME", c_env["XDG_DATA_HOME"])
            credentials.for_server(config.load(c_path)).set(raven.key_name, "a-stale-key")
        again = cli(c_env, "key", "import", str(carried), "--passphrase-file", str(passfile))
        assert again.returncode == 0 and "replaced a different key" in again.stderr + again.stdout, again.stderr
        read = cli(c_env, "read", RAVEN_URI)
        assert read.returncode == 0 and "RVN-5120" in read.stdout, read.stderr
        found = cli(c_env, "search", "RVN-5120", "--profile", "raven", "--json", "--no-rerank")
        assert found.returncode == 0, found.stderr
        assert RAVEN_URI in [h["uri"] for h in json.loads(found.stdout)["hits"]]
