"""`muninn secret add ID` through the real entry point: the value is asked for without echo (or read with
--stdin, never from the command line), sealed in the vault, and only metadata reaches the secrets YAML.
Then the vault is a source of known values for every consumer through the one collector
(`secret_values.known`): export redaction, the leak gates (export, nightly), the server leak scan and MCP
redaction. Short and ordinary-word values follow the declared-value rule of the security issue: stored and
injected, not redacted, and the owner is told."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import shlex
import signal
import stat
import sys
import termios
import time
from pathlib import Path

import pytest
import yaml
from conftest import Ended

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.guards.known import secret_values
from muninn.nightly.server_scan import Scanner
from muninn.plugins.access.vault import Vault
from muninn.plugins.mcp.redaction import ValueRedactor

TEMPLATE = "# my secrets' metadata\n# - id: example\n"



@pytest.fixture
def world(tmp_path: Path, isolated_keyring: Path) -> Path:
    """A config with one secrets file (comments only, 0600) and a notes source."""
    notes = tmp_path / "notes"
    notes.mkdir()
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(TEMPLATE)
    os.chmod(secrets, 0o600)
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({
        "vault": {"files": ["secrets.yaml"]},
        "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
        "sources": [{"kind": "notes", "path": "notes", "area": "viking://resources/notes"}],
    }))
    return cfg


@pytest.fixture
def invoke(run_muninn, world: Path):
    """`muninn --config CFG ARGV...` through the installed entry point, with STDIN as its stdin (a pipe)."""

    def run(argv: list[str], stdin: str = "") -> Ended:
        result = run_muninn(["--config", str(world), *argv], stdin)
        assert "Traceback" not in result.stderr
        return result

    return run


def _settings(world: Path) -> config.Settings:
    return config.load(world)


def _stored(world: Path, secret_id: str) -> dict[str, str]:
    vault = Vault.open(_settings(world))
    try:
        return vault.store.values(secret_id)
    finally:
        vault.close()


def _error(result: Ended) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# Values of every shape a secret has: what --stdin must store exactly (one trailing newline dropped).
VALUES = [
    ("token", "jt9Xq2vLr7Pz4Kw8Mn3Bd6Fh"),
    ("short-random", "Zq7#kP2x"),
    ("phrase", "correct horse battery staple"),
    ("quotes-and-shell", "a'b\"c$(rm -rf ~)`x`;|&"),
    ("unicode", "pässwörd-Ωmega-77"),
    ("leading-space", "  spaced-Value-9"),
    ("pem", "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END KEY-----"),
]


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"])
@pytest.mark.parametrize("name, value", VALUES, ids=[n for n, _ in VALUES])
def test_stdin_value_is_sealed_and_only_metadata_reaches_the_yaml(invoke, world: Path, name: str, value: str,
                                                                   ending: str) -> None:
    result = invoke(["secret", "add", "my-secret", "--stdin", "--service", "jira", "--tag", "api"],
                    stdin=value + ending)
    assert result.exit_code == 0, result.stderr
    assert _stored(world, "my-secret") == {"": value}
    secrets = world.parent / "secrets.yaml"
    text = secrets.read_text()
    assert text.startswith(TEMPLATE)   # comments kept as written
    for line in value.splitlines():
        assert line.strip() not in text
    (entry,) = yaml.safe_load(text)
    assert entry == {"id": "my-secret", "service": "jira", "tags": ["api"]}
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert value not in result.stdout + result.stderr


@pytest.mark.parametrize("layout, expect_list", [
    ("", True),                                           # empty file
    ("# comments only\n", True),
    ("- id: other\n  value: Oth3r-v4lue\n", True),               # a top-level list
    ("secrets:\n  - id: other\n    value: Oth3r-v4lue\n", False),  # `secrets:` with indented items
    ("secrets:\n- id: other\n  value: Oth3r-v4lue\n", False),      # `secrets:` with items at column 0
    ("- id: other\n  value: Oth3r-v4lue", True),                 # no final newline
    (None, True),                                         # no file yet: created 0600
])
def test_the_entry_is_appended_to_every_block_layout(invoke, world: Path, layout: str | None,
                                                     expect_list: bool) -> None:
    secrets = world.parent / "secrets.yaml"
    if layout is None:
        secrets.unlink()
    else:
        secrets.write_text(layout)
    result = invoke(["secret", "add", "new-one", "--stdin", "--kind", "token"], stdin="nv8Kq2Lm9Px4Rt")
    assert result.exit_code == 0, result.stderr
    data = yaml.safe_load(secrets.read_text())
    items = data if expect_list else data["secrets"]
    assert items[-1] == {"id": "new-one", "kind": "token"}
    assert layout is None or secrets.read_text().startswith(layout)
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert invoke(["vault", "sync", "--json"]).exit_code == 0   # the real loader reads what was appended
    assert _stored(world, "new-one") == {"": "nv8Kq2Lm9Px4Rt"}


def test_a_flow_style_file_is_refused_by_name_with_nothing_written(invoke, world: Path) -> None:
    secrets = world.parent / "secrets.yaml"
    secrets.write_text("[{id: other, service: x}]\n")
    result = invoke(["secret", "add", "new-one", "--stdin"], stdin="nv8Kq2Lm9Px4Rt")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert str(secrets) in _error(result) and "by hand" in result.stderr
    assert secrets.read_text() == "[{id: other, service: x}]\n"
    assert not Vault.open(_settings(world)).store.has("new-one")


# (case, setup YAML entries, vault holds a value, argv extra, exit code, words in the sentence)
STATES = [
    ("value-in-yaml", [{"id": "s", "value": "inYaml-Kq29xZ"}], False, [], ExitCode.BAD_INPUT, ["value", ":"]),
    ("parts-in-yaml", [{"id": "s", "parts": {"u": "a", "p": "b"}}], False, [], ExitCode.BAD_INPUT, ["parts"]),
    ("already-stored", [], True, [], ExitCode.REFUSED, ["--replace"]),
    ("metadata-for-existing-entry", [{"id": "s", "service": "x"}], True, ["--replace", "--service", "y"],
     ExitCode.BAD_INPUT, ["already has an entry"]),
    ("bad-id-space", [], False, [], ExitCode.BAD_INPUT, ["id"]),
    ("bad-id-path", [], False, [], ExitCode.BAD_INPUT, ["id"]),
]


@pytest.mark.parametrize("case, entries, stored, extra, code, words", STATES, ids=[s[0] for s in STATES])
def test_states_it_refuses_with_one_sentence(invoke, world: Path, case: str, entries: list, stored: bool,
                                              extra: list[str], code: int, words: list[str]) -> None:
    secrets = world.parent / "secrets.yaml"
    if stored:
        assert invoke(["secret", "add", "s", "--stdin"], stdin="first-Value-x9Q").exit_code == 0
    if entries:
        secrets.write_text(yaml.safe_dump(entries))
    before = secrets.read_text()
    secret_id = {"bad-id-space": "bad id", "bad-id-path": "../escape"}.get(case, "s")
    result = invoke(["secret", "add", secret_id, "--stdin", *extra], stdin="second-Value-y8R")
    assert result.exit_code == code, result.stderr
    line = _error(result)
    for word in words:
        assert word in line, line
    assert "second-Value-y8R" not in line
    assert secrets.read_text() == before
    if stored:
        assert _stored(world, "s") == {"": "first-Value-x9Q"}


def test_replace_changes_the_value_and_keeps_the_old_one_for_leak_scans(invoke, world: Path) -> None:
    assert invoke(["secret", "add", "s", "--stdin"], stdin="first-Value-x9Q").exit_code == 0
    result = invoke(["secret", "add", "s", "--stdin", "--replace"], stdin="second-Value-y8R")
    assert result.exit_code == 0, result.stderr
    assert _stored(world, "s") == {"": "second-Value-y8R"}
    scanner = Scanner(_settings(world))
    assert [f["secret_id"] for f in scanner.scan("viking://resources/x.md", "old first-Value-x9Q here")] == ["s"]
    assert len(yaml.safe_load((world.parent / "secrets.yaml").read_text())) == 1


def test_a_metadata_only_entry_written_by_hand_gets_its_value(invoke, world: Path) -> None:
    secrets = world.parent / "secrets.yaml"
    secrets.write_text("- id: hand\n  service: grafana  # keep me\n")
    assert invoke(["vault", "sync"]).exit_code == ExitCode.BAD_INPUT   # no value anywhere yet: says so
    assert invoke(["secret", "add", "hand", "--stdin"], stdin="Gr4f-adm1n-77").exit_code == 0
    assert secrets.read_text() == "- id: hand\n  service: grafana  # keep me\n"
    assert _stored(world, "hand") == {"": "Gr4f-adm1n-77"}


def test_vault_sync_keeps_an_added_value_and_takes_metadata_edits(invoke, world: Path) -> None:
    assert invoke(["secret", "add", "s", "--stdin", "--service", "a"], stdin="kept-Value-x9Q").exit_code == 0
    assert json.loads(invoke(["vault", "sync", "--json"]).stdout)["unchanged"] == 1
    secrets = world.parent / "secrets.yaml"
    secrets.write_text(secrets.read_text().replace("service: a", "service: b"))
    report = json.loads(invoke(["vault", "sync", "--json"]).stdout)
    assert report["changed"] == ["s"] and report["removed"] == []
    assert _stored(world, "s") == {"": "kept-Value-x9Q"}
    assert json.loads(invoke(["secret", "show", "s", "--json"]).stdout)["service"] == "b"


@pytest.mark.parametrize("argv", [["s", "Zq7kP2xW9mL4"], ["s", "--value", "Zq7kP2xW9mL4"], ["s=Zq7kP2xW9mL4"]])
def test_a_value_is_never_taken_from_the_command_line(invoke, world: Path, argv: list[str]) -> None:
    result = invoke(["secret", "add", *argv])
    assert result.exit_code == ExitCode.BAD_INPUT
    _error(result)
    assert "Zq7kP2xW9mL4" not in (world.parent / "secrets.yaml").read_text()
    assert not Vault.open(_settings(world)).store.ids()


def test_a_pipe_without_stdin_flag_is_refused(invoke, world: Path) -> None:
    result = invoke(["secret", "add", "s"], stdin="Zq7kP2xW9mL4\nZq7kP2xW9mL4\n")
    assert result.exit_code == ExitCode.BAD_INPUT and "--stdin" in _error(result)
    assert not Vault.open(_settings(world)).store.has("s")


def _answer_prompts(argv: list[str], answers: list[str], cwd: Path, timeout: float = 60) -> str:
    """Run argv under a real pty (its controlling terminal) and type one answer after each prompt, as a
    person would: into the master side. Returns everything the terminal showed."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover (the child execs at once)
        os.chdir(cwd)
        os.execvpe(argv[0], argv, dict(os.environ))
    shown, typed, deadline = b"", 0, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:   # EIO: the child has gone
                    break
                if not chunk:
                    break
                shown += chunk
            prompts = shown.count(b"Value for") + shown.count(b"Again, to confirm")
            # Typed only once the prompt has turned echo off, as a person types after the prompt shows:
            # earlier, the terminal itself would echo it (before getpass's termios call), not muninn.
            echo_off = not termios.tcgetattr(fd)[3] & termios.ECHO
            if typed < min(prompts, len(answers)) and echo_off:
                os.write(fd, answers[typed].encode() + b"\r")
                typed += 1
    finally:
        os.close(fd)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return shown.decode(errors="replace")


@pytest.mark.parametrize("second, stored", [("tty_Zq7kP2xW9mL4vB8n", True), ("tty_typo", False)])
def test_the_prompt_does_not_echo_and_asks_twice(world: Path, second: str, stored: bool) -> None:
    """Under a real pty: what the terminal shows never holds the value; a mismatch asks again."""
    value = "tty_Zq7kP2xW9mL4vB8n"
    answers = [value, second] + ([] if stored else [value, value])
    argv = [sys.executable, "-m", "muninn", "--config", str(world), "secret", "add", "tty-secret"]
    shown = _answer_prompts(argv, answers, world.parent)
    assert "Value for tty-secret" in shown and "Again, to confirm" in shown, shown
    assert "added tty-secret" in shown, shown
    assert value not in shown and "tty_typo" not in shown
    assert _stored(world, "tty-secret") == {"": value}
    assert ("do not match" in shown) == (not stored)


# Values the declared rule redacts (≥ 6 characters, not one ordinary word) in several shapes.
REDACTED = ["Zq7#kP2x", "jt9Xq2vLr7Pz4Kw8Mn3Bd6Fh", "correct horse battery staple", "pässwörd-Ωmega-77"]


@pytest.mark.parametrize("value", REDACTED)
def test_an_added_value_is_known_to_every_consumer(invoke, world: Path, tmp_path: Path, value: str) -> None:
    assert invoke(["secret", "add", "added", "--stdin"], stdin=value).exit_code == 0
    settings = _settings(world)
    # The one collector has it from the vault alone: no file holds it.
    assert secret_values.known(settings).get(value) == "added"
    assert value not in secret_values.known(settings, stores=False)
    # Export redaction: a note that pastes it.
    (tmp_path / "notes" / "ops.md").write_text(f"# Ops\n\n## Login\n\nThe admin login uses {value} today.\n")
    result = invoke(["export", "notes", str(tmp_path / "notes"), "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.stderr
    facts = "".join(p.read_text() for p in (tmp_path / "out").rglob("*.md"))
    assert "[REDACTED:added]" in facts and value not in facts
    # `export all` too (the configured sources).
    assert invoke(["export", "all", "--json"]).exit_code == 0
    exported = "".join(p.read_text() for p in settings.paths.exports.rglob("*.md"))
    assert value not in exported and "[REDACTED:added]" in exported
    # The leak gate: a file planted in the exported tree is a finding naming the id, never the value.
    planted = settings.paths.exports / "planted.md"
    planted.write_text(f"pasted later: {value}\n")
    result = invoke(["nightly", "--only", "leak-gate", "--json"])
    assert result.exit_code == 1, result.stderr
    assert "added" in result.stdout and value not in result.stdout
    # The server leak scan's matcher.
    found = Scanner(settings).scan("viking://resources/x.md", f"x {value} y")
    assert [f["secret_id"] for f in found] == ["added"]
    # MCP outputs and what an agent writes.
    redactor = ValueRedactor.from_settings(settings)
    for scrub in (redactor.scrub, redactor.scrub_all):
        out = scrub(f"the value is {value}.")
        assert value not in out and "[REDACTED:added]" in out


@pytest.mark.parametrize("value", ["abcd", "Q7#x", "k9Zp2", "summer", "Bluefish"])
def test_a_value_too_short_or_ordinary_to_redact_is_stored_and_the_owner_told(invoke, world: Path,
                                                                             value: str) -> None:
    """The security issue's rule for declared values: under 6 characters or one ordinary word is not
    redacted (it would censor prose). `secret add` stores it and says so; it is not silently 'protected'."""
    result = invoke(["secret", "add", "weak", "--stdin"], stdin=value)
    assert result.exit_code == 0, result.stderr
    assert "warning:" in result.stderr and "not redact" in result.stderr and value not in result.stderr
    assert _stored(world, "weak") == {"": value}
    assert value not in secret_values.known(_settings(world))
    ran = invoke(["secret", "exec", "weak", "--", "bash", "-c", 'test "$WEAK" = ' + shlex.quote(value)])
    assert ran.exit_code == 0


def test_no_warning_for_a_value_that_is_redacted(invoke) -> None:
    result = invoke(["secret", "add", "strong", "--stdin"], stdin="Zq7#kP2x")
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_no_secrets_file_configured_names_the_fix(invoke, world: Path) -> None:
    world.write_text(yaml.safe_dump({"keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    result = invoke(["secret", "add", "s", "--stdin"], stdin="Zq7#kP2xW")
    assert result.exit_code == ExitCode.BAD_INPUT and "muninn init" in _error(result)


def test_the_access_log_records_the_add_without_the_value(invoke, world: Path) -> None:
    assert invoke(["secret", "add", "logged", "--stdin"], stdin="Zq7#kP2xLogged").exit_code == 0
    log = _settings(world).paths.access_log.read_text()
    assert '"action": "add"' in log and '"id": "logged"' in log and "Zq7#kP2xLogged" not in log


def test_a_secrets_source_exports_the_added_entry_as_metadata(invoke, world: Path, tmp_path: Path) -> None:
    """The metadata-only entry `secret add` wrote is a fact like any other; its value is in no fact."""
    value = "Src-Zq7kP2xW9mL4"
    assert invoke(["secret", "add", "src-token", "--stdin", "--service", "jira", "--use", "curl $SRC_TOKEN"],
                  stdin=value).exit_code == 0
    result = invoke(["export", "secrets", str(world.parent / "secrets.yaml"), "--out", str(tmp_path / "s"),
                     "--json"])
    assert result.exit_code == 0, result.stderr
    facts = "".join(p.read_text() for p in (tmp_path / "s").rglob("*.md"))
    assert "src-token" in facts and "jira" in facts and value not in facts


@pytest.mark.parametrize("harm, code", [("damaged", ExitCode.VAULT_DAMAGED), ("key-gone", ExitCode.KEYRING)])
def test_a_vault_the_gates_cannot_read_stops_them(invoke, world: Path, tmp_path: Path, harm: str,
                                                  code: int) -> None:
    """Export and the leak gate would miss the vault's values: they stop with its sentence instead."""
    assert invoke(["secret", "add", "gate-token", "--stdin"], stdin="Gate-Zq7kP2xW9mL4").exit_code == 0
    settings = _settings(world)
    if harm == "damaged":
        settings.paths.vault_store.write_bytes(b"SQLite format 3\x00" + b"\x07" * 300)
    else:
        from muninn.core.credentials import for_home

        for_home(settings).delete(settings.vault.key_name)
    (tmp_path / "notes" / "n.md").write_text("# N\n\n## A\n\nGate-Zq7kP2xW9mL4\n")
    settings.paths.exports.mkdir(parents=True, exist_ok=True)
    (settings.paths.exports / "planted.md").write_text("Gate-Zq7kP2xW9mL4\n")
    for argv in (["export", "all"], ["nightly", "--only", "leak-gate", "--json"]):
        result = invoke(argv)
        if argv[0] == "nightly":   # the job fails (exit 13) and its report names why
            assert result.exit_code == ExitCode.JOB_FAILED, result.stderr
        else:
            assert result.exit_code == code, result.stderr
    written = [p for p in settings.paths.exports.rglob("*.md") if p.name != "planted.md"]
    assert not any("Gate-Zq7kP2xW9mL4" in p.read_text() for p in written)
