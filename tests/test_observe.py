"""`muninn observe`, Claude Code's hook: real PostToolUse and SessionEnd payloads in, one redacted and capped
line per tool call out, exit 0 whatever happens; then the call is found by search, labelled untrusted."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import inspector_cli
import pytest
from test_first_hour import Person, person_in

from muninn.core import config, policy
from muninn.plugins.stack import init_files

# A known value (put in the vault with `muninn secret add`) and pattern-class values the redactor knows
# by shape: none of them may reach the log file.
KNOWN = "ghp-internal-Zq8xW3vLp0Rt5Yb2"
BY_SHAPE = ["AKIAIOSFODNN7EXAMPLE", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlX3g",
            "password=Hunter2Hunter2Hunter2"]


def _payload(tool: str = "Bash", command: str = "git push origin main", output: str = "error: 403",
             **extra: object) -> dict:
    """A PostToolUse payload as Claude Code sends it (its documented fields; no time)."""
    return {"session_id": "9c3f0e1a-5b7d-4c2e-8f10-aa11bb22cc33", "transcript_path": "/home/me/.claude/t.jsonl",
            "cwd": "/home/me/src/infra", "permission_mode": "default", "hook_event_name": "PostToolUse",
            "tool_name": tool, "tool_input": {"command": command, "description": "push"},
            "tool_response": {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9", **extra}


@pytest.fixture
def initialised(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    cfg = tmp_path / "etc" / "muninn.yaml"
    init_files.write(init_files.plan(cfg, notes))
    return cfg


def _observe(cfg: Path | None, stdin: bytes | str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {**os.environ, **({"MUNINN_CONFIG": str(cfg)} if cfg else {}), **(env or {})}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "muninn", "observe", *args], input=data, capture_output=True,
                          env=base, timeout=120)


def _log(cfg: Path) -> list[dict]:
    path = cfg.parent / "observations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_one_line_per_call_stamped_with_the_time_now(initialised: Path) -> None:
    before = dt.datetime.now(dt.UTC)
    for i in range(3):
        done = _observe(initialised, json.dumps(_payload(command=f"make test-{i}")))
        assert done.returncode == 0 and not done.stderr, done.stderr
    after = dt.datetime.now(dt.UTC)
    rows = _log(initialised)
    assert [json.loads(r["input"])["command"] for r in rows] == ["make test-0", "make test-1", "make test-2"]
    for r in rows:
        assert before <= dt.datetime.fromisoformat(r["ts"].replace("Z", "+00:00")) <= after
        assert r["tool"] == "Bash" and r["session"].startswith("9c3f0e1a") and r["id"].startswith("toolu_")
        assert r["project"] == "infra"
    assert (initialised.parent / "observations.jsonl").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("secret", [KNOWN, *BY_SHAPE])
@pytest.mark.parametrize("where", ["input", "output", "both"])
def test_values_are_redacted_before_anything_is_written(initialised: Path, secret: str, where: str) -> None:
    added = subprocess.run([sys.executable, "-m", "muninn", "--config", str(initialised), "secret", "add",
                            "gh-token", "--stdin"], input=KNOWN + "\n", capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    command = f"curl -H 'x: {secret}' https://git.example.com" if where != "output" else "curl https://git.example.com"
    output = f"the token is {secret} (echoed)" if where != "input" else "ok"
    done = _observe(initialised, json.dumps(_payload(command=command, output=output)))
    assert done.returncode == 0, done.stderr
    text = (initialised.parent / "observations.jsonl").read_text()
    core = secret.split(" ")[-1].split("=")[-1]
    assert core not in text and json.dumps(core)[1:-1] not in text, text
    assert "[REDACTED" in text


def _secret_add(cfg: Path, secret_id: str, value: str, *flags: str) -> None:
    added = subprocess.run([sys.executable, "-m", "muninn", "--config", str(cfg), "secret", "add", secret_id,
                            "--stdin", *flags], input=value + "\n", capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr


def _leaks(text: str, value: str) -> bool:
    return value in text or json.dumps(value)[1:-1] in text


def test_the_sealed_tables_cache_follows_a_rotated_or_added_secret(initialised: Path) -> None:
    from muninn.guards.redact import cache as redact_cache

    rotated, added = "ghp-rotated-Kd7mQ2xP9sLw4Vn8", "glpat-added-Hb3nT6yR1cXz5Jq0"
    _secret_add(initialised, "gh-token", KNOWN)
    assert _observe(initialised, json.dumps(_payload(output=f"token {KNOWN}"))).returncode == 0
    cache = redact_cache.cache_file(config.load(initialised))
    sealed = cache.read_bytes()
    # Sealed: no value in any form a reader of the file could use, at the vault store's own mode.
    assert cache.stat().st_mode & 0o777 == 0o600 and KNOWN.encode() not in sealed
    assert b"ghp-internal" not in sealed and b"Zq8xW3" not in sealed
    assert _observe(initialised, json.dumps(_payload(output=f"again {KNOWN}"))).returncode == 0
    assert cache.read_bytes() == sealed                                   # the same values: opened, not made

    _secret_add(initialised, "gh-token", rotated, "--replace")           # rotated: the old tables must not open
    _secret_add(initialised, "gl-token", added)                           # added
    for value in (rotated, added):
        done = _observe(initialised, json.dumps(_payload(command=f"curl -H 'x: {value}' https://x", output=value)))
        assert done.returncode == 0 and not done.stderr, done.stderr
    assert cache.read_bytes() != sealed
    text = (initialised.parent / "observations.jsonl").read_text()
    assert not _leaks(text, rotated) and not _leaks(text, added) and not _leaks(text, KNOWN), text

    cache.write_bytes(b"\0" * 64)                                        # damaged: made again, never trusted
    done = _observe(initialised, json.dumps(_payload(output=f"again {added}")))
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert not _leaks((initialised.parent / "observations.jsonl").read_text(), added)


@pytest.mark.parametrize("size", [1001, 5000, 200_000])
def test_output_is_capped_at_the_sources_limit(initialised: Path, size: int) -> None:
    done = _observe(initialised, json.dumps(_payload(output="x" * size)))
    assert done.returncode == 0, done.stderr
    (row,) = _log(initialised)
    assert len(row["output"]) < 1100 and "more characters cut" in row["output"]


# Whatever reaches the hook, it exits 0 (a hook exiting 2 feeds its stderr to the model), in one sentence.
BAD_STDIN = [b"", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe\x00", b'{"tool_name": ', b"null"]


@pytest.mark.parametrize("stdin", BAD_STDIN)
def test_bad_stdin_exits_0_in_one_sentence(initialised: Path, stdin: bytes) -> None:
    done = _observe(initialised, stdin)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr and len(done.stderr.decode().strip().splitlines()) <= 1
    assert _log(initialised) == []


def test_faults_around_it_exit_0_too(tmp_path: Path, initialised: Path) -> None:
    payload = json.dumps(_payload())
    no_source = tmp_path / "plain.yaml"
    no_source.write_text("server: {port: 1}\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("server: [\n")
    missing = tmp_path / "nowhere.yaml"
    for cfg, said in ((no_source, "no `observations` source"), (broken, "broken.yaml"), (missing, "not found")):
        done = _observe(cfg, payload)
        assert done.returncode == 0 and said in done.stderr.decode(), done.stderr
        assert b"Traceback" not in done.stderr
    (initialised.parent / "observations.jsonl").mkdir()   # the log's path is a folder: the write fails
    done = _observe(initialised, payload)
    assert done.returncode == 0 and b"observations.jsonl" in done.stderr, done.stderr


def test_session_end_runs_a_watch_cycle_and_still_exits_0_with_no_server(initialised: Path) -> None:
    _observe(initialised, json.dumps(_payload()))
    end = {"session_id": "9c3f0e1a-5b7d-4c2e-8f10-aa11bb22cc33", "transcript_path": "/t.jsonl", "cwd": "/src",
           "hook_event_name": "SessionEnd", "reason": "exit"}
    done = _observe(initialised, json.dumps(end), env={"MUNINN_SERVER__PORT": "1", "MUNINN_SERVER__TIMEOUT": "2"})
    assert done.returncode == 0, done.stderr
    assert b"nothing recorded" in done.stderr or b"session end" in done.stderr
    assert len(_log(initialised)) == 1      # a session end adds no line


def test_init_labels_the_sessions_area_untrusted_for_every_reader(initialised: Path) -> None:
    settings = config.load(initialised, environ={})
    (source,) = [s for s in settings.sources if s.kind == "observations"]
    pol = policy.load(settings.paths.policy)
    uri = f"{source.area}/observations/2026-12-01/bash-abc.md"
    assert pol.untrusted_writers(uri)
    readers = [p for p in pol.profiles.values() if any(uri.startswith(r + "/") for r in p.read_prefixes)]
    assert {p.kind for p in readers} == {"owner", "assistant"}
    note = f"{init_files.NOTES_AREA}/notes/x.md"
    assert not [w for w in pol.untrusted_writers(note) if "tool output" in w]


def test_a_log_not_written_yet_exports_as_empty(initialised: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "muninn", "--config", str(initialised), "export", "all", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "not found" not in done.stdout + done.stderr


@pytest.fixture
def person(tmp_path: Path) -> Iterator[Person]:
    with person_in(tmp_path) as me:
        yield me


def test_hook_payloads_then_the_call_is_found_by_search(person: Person) -> None:
    """The whole loop through the real CLI: the hook command `mcp install` wrote, run under `env -i` as Claude
    Code runs it, then SessionEnd, then an outside MCP client searching as the assistant."""
    person.muninn("init", "--notes", "~/notes", "--yes")
    person.muninn("up")
    person.muninn("secret", "add", "gh-token", "--stdin", input=KNOWN + "\n")
    person.muninn("mcp", "install", "--client", "claude", "--record")
    settings = json.loads((person.home / ".claude" / "settings.json").read_text())
    hook = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == hook

    def run_hook(payload: dict) -> None:
        done = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", hook], input=json.dumps(payload),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and not done.stderr, done.stderr

    run_hook(_payload(command="git push origin main", output=f"remote: Permission to acme/infra.git denied "
                      f"to deploy-bot (token {KNOWN}). fatal: unable to access: The requested URL returned error: 403"))
    run_hook(_payload(tool="Read", command="cat README.md", output="# infra"))
    log = person.home / ".config" / "muninn" / "observations.jsonl"
    assert KNOWN not in log.read_text() and len(log.read_text().splitlines()) == 2
    run_hook({"session_id": "9c3f0e1a-5b7d-4c2e-8f10-aa11bb22cc33", "transcript_path": "/t.jsonl",
              "cwd": str(person.home), "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})

    answer = inspector_cli.search(person.home / ".claude.json", "permission denied on git push 403")
    hits = answer["structuredContent"]["hits"]
    assert hits and "/agents/sessions/" in hits[0]["uri"] and hits[0]["untrusted"], hits
    text = answer["content"][0]["text"]
    assert "<untrusted-data" in text and "git push origin main" in text and KNOWN not in json.dumps(answer)


NUMBER = 738291046512     # a declared value an API returns as a JSON number


@pytest.mark.parametrize("shape", ["a number", "a float", "a number in a list", "a key", "the digits in text"])
def test_a_declared_value_is_redacted_whatever_its_json_type(initialised: Path, shape: str) -> None:
    _secret_add(initialised, "bank-pin", str(NUMBER))
    response = {"a number": {"account": NUMBER}, "a float": {"balance": float(NUMBER)},
                "a number in a list": {"ids": [1, NUMBER, 3]}, "a key": {str(NUMBER): "opened"},
                "the digits in text": {"stdout": f"acct={NUMBER}"}}[shape]
    done = _observe(initialised, json.dumps({**_payload(), "tool_response": response}))
    assert done.returncode == 0, done.stderr
    text = (initialised.parent / "observations.jsonl").read_text()
    assert str(NUMBER) not in text and "[REDACTED:bank-pin]" in text, text


@pytest.mark.parametrize("field", ["tool_name", "session_id", "tool_use_id"])
@pytest.mark.parametrize("value", ["declared", "a token's shape"])
def test_every_field_of_a_payload_goes_through_the_redaction(initialised: Path, field: str, value: str) -> None:
    """A known value or a token's shape in an id or a tool name is redacted; the random ids a client makes
    are kept as they are (test_one_line_per_call_stamped_with_the_time_now)."""
    _secret_add(initialised, "gh-token", KNOWN)
    secret = KNOWN if value == "declared" else "ghp_Zq8uXy3Pa55w0rdTok9f8Q2mZxL4vB7nK1"
    done = _observe(initialised, json.dumps({**_payload(), field: secret if field != "tool_name" else
                                             f"mcp__{secret}__run"}))
    assert done.returncode == 0, done.stderr
    text = (initialised.parent / "observations.jsonl").read_text()
    assert not _leaks(text, secret), text


TOKEN = "ghp_Zq8uXy3Pa55w0rdTok9f8Q2mZxL4vB7nK1"


@pytest.mark.parametrize("dump", [["xxd"], ["hexdump", "-C"], ["od", "-c"], ["od", "-An", "-tx1"]])
@pytest.mark.parametrize("line", [f"export GITHUB_TOKEN={TOKEN}", "password: Pelican-Torch-6610"])
def test_a_dump_of_an_undeclared_token_is_redacted(initialised: Path, dump: list[str], line: str) -> None:
    """What an agent runs to check a token for a stray newline: the dump, not the token, is in the output."""
    shown = subprocess.run(dump, input=(line + "\n").encode(), capture_output=True, check=True).stdout.decode()
    done = _observe(initialised, json.dumps(_payload(command=f"printf %s \"$T\" | {' '.join(dump)}", output=shown)))
    assert done.returncode == 0, done.stderr
    text = json.loads((initialised.parent / "observations.jsonl").read_text().splitlines()[-1])["output"]
    secret = line.split("=")[-1].split(": ")[-1]
    assert "-in-dump]" in text, text
    for spelled in (secret, secret.encode().hex(), " ".join(f"{b:02x}" for b in secret.encode())):
        assert spelled not in text.replace("\n", ""), (spelled, text)


@pytest.mark.parametrize("path", ["/bin/ls", "/etc/passwd"])
def test_a_dump_of_an_ordinary_file_is_left_as_it_was(initialised: Path, path: str) -> None:
    shown = subprocess.run(["xxd", "-l", "2048", path], capture_output=True, check=True).stdout.decode()
    done = _observe(initialised, json.dumps(_payload(command=f"xxd {path}", output=shown)))
    assert done.returncode == 0, done.stderr
    text = json.loads((initialised.parent / "observations.jsonl").read_text().splitlines()[-1])["output"]
    assert "REDACTED" not in text
