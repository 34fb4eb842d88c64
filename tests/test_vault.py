"""The vault end to end: YAML in, encrypted SQLite out, exec with injection and masking, the access log.
No server needed; real SQLite, real AES-GCM, real keyring file, real child processes."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import drain_pty

from muninn.core import config
from muninn.core.errors import ConfigError, CredentialError
from muninn.core.secrets_file import derive_env
from muninn.plugins.access import access_log
from muninn.plugins.access.store import Store, UnknownSecret
from muninn.plugins.access.vault import Refused, Vault, exec_command_line

TOKEN = "tok_9f8Q2mZxL4vB7nK1pR6w"
PASSWORD = "Pa55-w0rd-Zq8uXy3"

ENTRIES = [
    {"id": "jira-api-token", "service": "jira", "environment": "prod", "kind": "token",
     "username": "me@example.com", "url": "https://jira.example.com", "tags": ["atlassian", "api"],
     "notes": "Personal bearer token for the Jira REST API; rotate yearly.",
     "use": 'curl -H "Authorization: Bearer $JIRA_API_TOKEN" https://jira.example.com/rest/api/2/myself',
     "value": TOKEN},
    {"id": "vm-sudo", "service": "linux", "environment": "prod", "kind": "password", "notes": "sudo on VMs",
     "value": PASSWORD},
    {"id": "db-admin", "service": "postgres", "kind": "login", "env": "PG",
     "parts": {"username": "admin", "password": "Db-s3cret-Pw-77xq"}},
]


def write_secrets(tmp_path: Path, entries: list[dict], name: str = "secrets.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return path


@pytest.fixture
def vault(tmp_path: Path, isolated_keyring: Path) -> Vault:
    path = write_secrets(tmp_path, ENTRIES)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": [path.name]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    v = Vault.open(config.load(cfg), who="tester")
    v.sync()
    return v


def test_derive_env() -> None:
    assert derive_env("jira-api-token") == "JIRA_API_TOKEN"
    assert derive_env("1password.item") == "_1PASSWORD_ITEM"


def test_sync_reports_and_encrypts(vault: Vault, tmp_path: Path) -> None:
    raw = Path(vault.store.path).read_bytes()
    assert TOKEN.encode() not in raw and PASSWORD.encode() not in raw
    assert oct(os.stat(vault.store.path).st_mode & 0o777) == "0o600"
    changed = [dict(e) for e in ENTRIES[:2]]
    changed[0]["value"] = TOKEN + "X"
    changed.append({"id": "new-one", "value": "fresh-Value-123abc"})
    path = write_secrets(tmp_path, changed)
    report = vault.sync([path])
    assert (report.added, report.changed, report.removed, report.unchanged) == (
        ["new-one"], ["jira-api-token"], ["db-admin"], 1)
    assert vault.store.values("jira-api-token") == {"": TOKEN + "X"}
    assert vault.sync([path]).as_dict() == {"added": [], "changed": [], "removed": [], "unchanged": 3}


def test_a_restored_wider_store_is_set_back_to_0600(vault: Vault, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(vault.store.path)
    vault.store.close()
    path.chmod(0o644)                                   # a backup unpacked under umask 022
    capsys.readouterr()
    store = Store(path, vault.store.keyring, vault.store.key_name)
    try:
        assert store.values("vm-sudo") == {"": PASSWORD}   # still opens: narrowed, not refused
    finally:
        store.close()
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert f"warning: {path} was mode 644" in capsys.readouterr().err and store.narrowed


def test_metadata_change_counts_as_changed(vault: Vault, tmp_path: Path) -> None:
    entries = [dict(e) for e in ENTRIES]
    entries[1]["notes"] = "sudo on every VM"
    assert vault.sync([write_secrets(tmp_path, entries)]).changed == ["vm-sudo"]


@pytest.mark.parametrize("bad, problem", [
    # Issue 20: an entry without a value is metadata only (`secret add` stored the value); with none in the
    # vault either, sync names it and the command that stores one.
    ({"id": "x"}, "muninn secret add x"),
    ({"id": "x", "value": "a", "parts": {"b": "c"}}, "not both"),
    ({"id": "x", "value": 12345}, "quote the value"),
    ({"id": "bad id", "value": "v"}, "an id is"),
    ({"id": "x", "value": "v", "colour": "red"}, "unknown key"),
    ({"id": "x", "value": "v", "env": "1BAD"}, "not a valid environment variable"),
    ("just a string", "must be a mapping"),
])
def test_malformed_entry_names_file_and_line(vault: Vault, tmp_path: Path, bad: object, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    good = yaml.safe_dump(ENTRIES[:1], sort_keys=False)
    path.write_text(good + yaml.safe_dump([bad], sort_keys=False))
    line = good.count("\n") + 1
    with pytest.raises(ConfigError) as err:
        vault.sync([path])
    assert err.value.path == str(path) and problem in str(err.value)
    assert err.value.line is not None and err.value.line >= line
    # nothing half-applied: the store still holds the first sync exactly
    assert vault.store.ids() == sorted(e["id"] for e in ENTRIES)


def test_broken_yaml_names_the_line(vault: Vault, tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("- id: a\n  value: x1y2z3w4v5\n- id: b\n  value: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML") as err:
        vault.sync([path])
    assert err.value.path == str(path) and err.value.line and err.value.line >= 4


def test_duplicate_ids_across_files_refused(vault: Vault, tmp_path: Path) -> None:
    a = write_secrets(tmp_path, ENTRIES[:2], "a.yaml")
    b = write_secrets(tmp_path, [{"id": "vm-sudo", "value": "other-Value-9x"}], "b.yaml")
    with pytest.raises(ConfigError, match="duplicate id 'vm-sudo'") as err:
        vault.sync([a, b])
    assert err.value.path == str(b) and err.value.line == 1
    assert vault.store.ids() == sorted(e["id"] for e in ENTRIES)


def test_failure_mid_transaction_rolls_back(vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [dict(e) for e in ENTRIES] + [{"id": "zz-last", "value": "another-Val-123x"}]
    entries[0]["value"] = "changed-Token-1234"
    calls = {"n": 0}
    real = vault.store._seal

    def seal_then_fail(secret_id: str, values: dict) -> tuple[bytes, bytes]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(secret_id, values)

    monkeypatch.setattr(vault.store, "_seal", seal_then_fail)
    with pytest.raises(OSError):
        vault.sync([write_secrets(tmp_path, entries)])
    assert vault.store.values("jira-api-token") == {"": TOKEN}
    assert "zz-last" not in vault.store.ids()


def test_find_and_show_never_carry_values(vault: Vault) -> None:
    hits = vault.find("token for jira")
    assert hits[0]["id"] == "jira-api-token"
    shown = vault.show("jira-api-token")
    assert shown["use"].startswith("curl") and shown["env_names"] == {"": "JIRA_API_TOKEN"}
    assert "last verified: never" in shown["last_verified"]
    assert vault.show("db-admin")["env_names"] == {"password": "PG_PASSWORD", "username": "PG_USERNAME"}
    text = json.dumps([hits, shown])
    assert TOKEN not in text and PASSWORD not in text
    with pytest.raises(UnknownSecret):
        vault.show("nope")


def run(vault: Vault, secret_id: str, command: list[str] | str, **kw) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.BytesIO()
    result = vault.exec(secret_id, command, stdout=out, stderr=err, **kw)
    return result.exit_code, out.getvalue().decode(), err.getvalue().decode()


def test_exec_injects_masks_and_keeps_exit_code(vault: Vault) -> None:
    code, out, err = run(vault, "jira-api-token",
                         ["sh", "-c", 'echo "t=$JIRA_API_TOKEN"; echo "e=$JIRA_API_TOKEN" >&2; exit 3'])
    assert code == 3
    assert out == "t=[REDACTED:jira-api-token]\n" and err == "e=[REDACTED:jira-api-token]\n"


def test_exec_expands_single_quoted_reference_in_child(vault: Vault) -> None:
    # What `exec_command_line` produces: the agent's shell keeps $JIRA_API_TOKEN literal.
    code, out, _ = run(vault, "jira-api-token", ["printf", "%s|%s", "Bearer $JIRA_API_TOKEN", "$HOME"])
    assert code == 0 and out == "Bearer [REDACTED:jira-api-token]|$HOME"


def test_shell_c_command_expands_its_own_variable(vault: Vault) -> None:
    from muninn.plugins.access.injection import expand_references

    argv = ["bash", "-c", 'echo "$JIRA_API_TOKEN"']
    assert expand_references(argv, {"JIRA_API_TOKEN": "x"}) == argv
    assert run(vault, "jira-api-token", argv)[1] == "[REDACTED:jira-api-token]\n"


def test_exec_multi_part_and_env_override(vault: Vault) -> None:
    _, out, _ = run(vault, "db-admin", ["sh", "-c", 'echo "$PG_USERNAME/$PG_PASSWORD"'])
    assert out == "admin/[REDACTED:db-admin.password]\n"
    _, out, _ = run(vault, "jira-api-token", ["sh", "-c", 'echo "${MY_TOKEN:-unset}"'], env_name="MY_TOKEN")
    assert out == "[REDACTED:jira-api-token]\n"


def test_exec_stdin_for_sudo_style_prompts(vault: Vault) -> None:
    # The child proves it read the value by its hash: a variable holding the value itself is never passed on.
    check = 'read -r pw; [ "$(printf %s "$pw" | sha256sum | cut -d" " -f1)" = "$EXPECT" ] && echo match; echo "$pw"'
    code, out, _ = run(vault, "vm-sudo", ["sh", "-c", check], stdin=True,
                       base_env={**os.environ, "EXPECT": hashlib.sha256(PASSWORD.encode()).hexdigest()})
    assert code == 0 and out == "match\n[REDACTED:vm-sudo]\n"
    with pytest.raises(Refused, match="--part"):
        run(vault, "db-admin", ["cat"], stdin=True)


def test_access_log_records_every_call_without_values(vault: Vault) -> None:
    vault.find("jira")
    vault.show("vm-sudo")
    run(vault, "jira-api-token", ["sh", "-c", "exit 5"])
    with pytest.raises(Refused):
        vault.get("vm-sudo", tty=False)
    assert vault.get("vm-sudo", tty=True) == PASSWORD
    lines = access_log.read(vault.settings.paths.access_log)
    assert [line["action"] for line in lines] == ["find", "show", "exec", "get", "get"]
    execd = lines[2]
    assert execd["who"] == "tester" and execd["id"] == "jira-api-token" and execd["exit_code"] == 5
    assert execd["command"] == "sh -c 'exit 5'" and execd["time"]
    assert lines[3]["exit_code"] == Refused.exit_code
    raw = vault.settings.paths.access_log.read_text()
    assert PASSWORD not in raw and TOKEN not in raw


def test_exec_command_line_quotes_for_the_agent_shell() -> None:
    line = exec_command_line("jira-api-token", ["curl", "-H", "Authorization: Bearer $JIRA_API_TOKEN", "https://x"])
    assert line == ("muninn secret exec jira-api-token -- curl -H 'Authorization: Bearer $JIRA_API_TOKEN' "
                    "https://x")
    assert exec_command_line("vm-sudo", ["sudo", "-S", "true"], stdin=True).startswith(
        "muninn secret exec vm-sudo --stdin -- ")


def test_failing_keyring_is_loud(tmp_path: Path, isolated_keyring: Path) -> None:
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": [str(write_secrets(tmp_path, ENTRIES))]},
                                   "keyring": {"backend": "keyring.backends.fail.Keyring"}}))
    with pytest.raises(CredentialError, match="no usable keyring backend"):
        Vault.open(config.load(cfg)).sync()


def test_lost_key_is_loud_not_silently_regenerated(vault: Vault) -> None:
    vault.store.keyring.delete(vault.settings.vault.key_name)
    fresh = Vault.open(vault.settings)
    with pytest.raises(CredentialError, match="is not in the keyring"):
        fresh.store.values("vm-sudo")
    with pytest.raises(CredentialError, match="holds secrets"):
        fresh.sync()


def test_tampered_row_does_not_decrypt(vault: Vault) -> None:
    db = sqlite3.connect(vault.store.path)
    sealed = db.execute("SELECT nonce, sealed FROM secrets WHERE id='vm-sudo'").fetchone()
    db.execute("UPDATE secrets SET nonce=?, sealed=? WHERE id='jira-api-token'", sealed)
    db.commit()
    with pytest.raises(CredentialError, match="does not decrypt"):
        vault.store.values("jira-api-token")


def test_cli_exec_get_and_exit_codes(vault: Vault, tmp_path: Path) -> None:
    env = {**os.environ, "MUNINN_CONFIG": str(vault.settings.source_file)}
    cmd = [sys.executable, "-m", "muninn"]
    done = subprocess.run([*cmd, "secret", "exec", "jira-api-token", "--", "sh", "-c",
                           'printf %s "$JIRA_API_TOKEN"; exit 4'], capture_output=True, text=True, env=env)
    assert done.returncode == 4 and done.stdout == "[REDACTED:jira-api-token]", done.stderr
    done = subprocess.run([*cmd, "secret", "get", "vm-sudo"], capture_output=True, text=True, env=env)
    assert done.returncode == Refused.exit_code and "real terminal" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    done = subprocess.run([*cmd, "secret", "show", "nope", "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "no secret with id 'nope'" in done.stderr
    done = subprocess.run([*cmd, "secret", "find", "jira", "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and json.loads(done.stdout)[0]["id"] == "jira-api-token"
    done = subprocess.run([*cmd, "vault", "sync", "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["unchanged"] == 3


def test_agent_line_runs_in_a_real_shell(vault: Vault) -> None:
    """The line `exec_command_line` gives an agent, run by a shell that does not hold the value."""
    muninn = f"{sys.executable} -m muninn"
    line = exec_command_line("jira-api-token", 'printf "%s" "Bearer $JIRA_API_TOKEN"', muninn="MUNINN")
    line = line.replace("MUNINN", muninn, 1)
    env = {**os.environ, "MUNINN_CONFIG": str(vault.settings.source_file)}
    env.pop("JIRA_API_TOKEN", None)
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout == "Bearer [REDACTED:jira-api-token]", done.stderr


def test_get_prints_on_a_real_terminal(vault: Vault) -> None:
    import pty

    primary, secondary = pty.openpty()
    env = {**os.environ, "MUNINN_CONFIG": str(vault.settings.source_file)}
    proc = subprocess.Popen([sys.executable, "-m", "muninn", "secret", "get", "vm-sudo"], stdout=secondary,
                            stderr=subprocess.PIPE, env=env)
    os.close(secondary)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    data = drain_pty(primary)
    assert PASSWORD.encode() in data


def test_multi_part_env_mapping_override(vault: Vault) -> None:
    assert vault.injection("db-admin", "password=PGPASSWORD,username=PGUSER") == {
        "PGPASSWORD": "Db-s3cret-Pw-77xq", "PGUSER": "admin"}
    assert set(vault.injection("db-admin", "DB")) == {"DB_USERNAME", "DB_PASSWORD"}


def test_doctor_lines(vault: Vault) -> None:
    from muninn.plugins.access import doctor_check

    lines = {c.name: c for c in doctor_check.vault(vault.settings)}
    assert lines["vault files"].level == "ok" and lines["vault store"].level == "ok"
    assert "3 value(s)" not in lines["vault store"].detail  # counts values, not entries
    assert "4 value(s)" in lines["vault store"].detail
    vault.store.keyring.delete(vault.settings.vault.key_name)
    lines = {c.name: c for c in doctor_check.vault(vault.settings)}
    assert lines["vault store"].level == "fail" and "not in the keyring" in lines["vault store"].detail


def test_reader_going_away_does_not_hang(vault: Vault) -> None:
    muninn = f"{shlex.quote(sys.executable)} -m muninn"
    env = {**os.environ, "MUNINN_CONFIG": str(vault.settings.source_file)}
    done = subprocess.run(["bash", "-c", f"{muninn} secret exec vm-sudo -- yes | head -1"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.stdout == "y\n"


SHORT = "Kx9#q2"                                 # declared, 6 characters: not secret-ish
PHRASE = "amber falcon river quartz"             # a declared phrase
GO_VALUE = "Tk9<x>&y-Zq7w"                        # Go's encoding/json writes \u003c, \u003e, \u0026


@pytest.fixture
def vault_of_others(tmp_path: Path, isolated_keyring: Path) -> Vault:
    entries = [*ENTRIES,
               {"id": "short-pin", "kind": "password", "value": SHORT},
               {"id": "wifi", "kind": "password", "value": PHRASE},
               {"id": "go-token", "kind": "token", "value": GO_VALUE},
               {"id": "svc", "kind": "login", "parts": {"username": "deploy-bot", "password": "Zr8#mQ2w!x"}}]
    path = write_secrets(tmp_path, entries)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"vault": {"files": [path.name]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    v = Vault.open(config.load(cfg), who="tester")
    v.sync()
    return v


def test_exec_masks_every_declared_value_of_other_entries(vault_of_others: Vault) -> None:
    # Issue 31 §7: export redacts these as declared; a child that prints them (a config dump) must not
    # show them either. A user name of another entry names who, not what: left as it is.
    script = f"echo '{SHORT}'; echo '{PHRASE}'; echo deploy-bot; echo admin"
    _, out, _ = run(vault_of_others, "jira-api-token", ["sh", "-c", script])
    assert out == "[REDACTED:short-pin]\n[REDACTED:wifi]\ndeploy-bot\nadmin\n"


def test_exec_masks_json_escapes_of_common_writers(vault_of_others: Vault) -> None:
    go = GO_VALUE.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    dotnet = GO_VALUE.replace("<", "\\u003C").replace(">", "\\u003E").replace("&", "\\u0026")
    script = f"printf '%s\\n' '{{\"t\":\"{go}\"}}' '{{\"t\":\"{dotnet}\"}}'"
    _, out, _ = run(vault_of_others, "go-token", ["sh", "-c", script])
    assert out == '{"t":"[REDACTED:go-token]"}\n' * 2


def test_secret_bearing_variables_never_reach_the_child_and_the_workspace_ones_do(vault: Vault) -> None:
    """The child gets its injected variable and muninn's workspace (so `secret exec -- muninn ...` works),
    never muninn's own secrets nor a variable holding a stored value, in any form masking knows."""
    env = {**os.environ, "MUNINN_CONFIG": str(vault.settings.source_file),
           "MUNINN_PASSPHRASE": "velvet otter lantern", "MUNINN_OV_ROOT_KEY": "root-key-value-123",
           "STRAY_PLAIN": PASSWORD, "STRAY_B64": base64.b64encode(PASSWORD.encode()).decode(),
           "STRAY_URL": f"https://me:{TOKEN}@jira.example.com", "ORDINARY": "nothing secret here"}
    show = "import json, os; print(json.dumps(sorted(os.environ)))"
    done = subprocess.run([sys.executable, "-m", "muninn", "secret", "exec", "jira-api-token", "--",
                           sys.executable, "-c", show], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    seen = set(json.loads(done.stdout))
    assert {"JIRA_API_TOKEN", "MUNINN_CONFIG", "ORDINARY"} <= seen
    assert not seen & {"MUNINN_PASSPHRASE", "MUNINN_OV_ROOT_KEY", "STRAY_PLAIN", "STRAY_B64", "STRAY_URL"}
    nested = subprocess.run([sys.executable, "-m", "muninn", "secret", "exec", "jira-api-token", "--",
                             sys.executable, "-m", "muninn", "secret", "find", "jira", "--json"],
                            capture_output=True, text=True, env=env)
    assert nested.returncode == 0 and json.loads(nested.stdout)[0]["id"] == "jira-api-token", nested.stderr
