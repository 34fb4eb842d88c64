"""The verify guard, by class of attack (evals/lab/guard_cases.py), against bash itself and through `muninn verify`.

- every adversarial case of every class is refused, with a reason;
- every real read-only proof is allowed, and the words the guard judged are the words bash passes
  (bash is the oracle: each tool is replaced by a shell function that prints its argv);
- `verify --dry-run` prints the verdict the sweep acts on, for every case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.evals.lab.guard_cases import ALLOWED_PROOFS, INJECTED, REFUSED, generated
from muninn.guards.command import guard as command_guard
from muninn.guards.command.shell_words import ShellRefusal, split
from muninn.plugins.access import sweep

CASES = [(cls, cmd) for cls, cmds in REFUSED.items() for cmd in cmds]
VALUES = {"JIRA_API_TOKEN": "tok en*;$(id)", "GRAFANA_USER": "ops user", "GRAFANA_PASSWORD": "p w|d`id`"}


def test_every_class_has_many_cases() -> None:
    assert all(len(cmds) >= 30 for cmds in REFUSED.values()), {k: len(v) for k, v in REFUSED.items()}
    assert len(ALLOWED_PROOFS) >= 100
    assert not {c for _, c in CASES} & set(ALLOWED_PROOFS)


@pytest.mark.parametrize("cls, command", CASES, ids=[f"{c[:12]}:{m[:50]}" for c, m in CASES])
def test_refused(cls: str, command: str) -> None:
    verdict = command_guard.check(command, INJECTED)
    assert not verdict.allowed, f"{cls}: {command!r} was allowed"
    assert verdict.reason and "guard error" not in verdict.reason


@pytest.mark.parametrize("command", ALLOWED_PROOFS)
def test_real_proofs_are_allowed(command: str) -> None:
    verdict = command_guard.check(command, INJECTED)
    assert verdict.allowed, verdict.reason


def _bash_argv(command: str, tool: str, tmp: Path) -> list[str]:
    """The argv bash passes to `tool` for `command`, with nothing on PATH so nothing else can run."""
    script = f'function {tool} {{ for a in "$@"; do printf "%s\\0" "$a"; done; }}\n{command}\n'
    env = {"PATH": str(tmp), "HOME": os.path.expanduser("~"), **VALUES}
    done = subprocess.run(["/bin/bash", "-c", script], capture_output=True, env=env, timeout=10, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.parametrize("command", ALLOWED_PROOFS)
def test_the_guard_judges_the_words_bash_runs(command: str, tmp_path: Path) -> None:
    verdict = command_guard.check(command, INJECTED)
    judged = list(verdict.argv)
    for name, val in VALUES.items():   # the guard keeps "$NAME"; bash substitutes it, as one word
        judged = [w.replace(f"${name}", val) for w in judged]
    assert _bash_argv(command, judged[0], tmp_path) == judged[1:]


@pytest.mark.parametrize("command, words", [
    ("a 'b c' \"d e\" f''g", ["a", "b c", "d e", "fg"]),
    ("a '' \"\"", ["a", "", ""]),
    ("a 'x#y' x#y", None),
    ("a 'it''s'", ["a", "its"]),
    ("a '$HOME' '`id`' ';|&'", ["a", "$HOME", "`id`", ";|&"]),
    ('a "x: $JIRA_API_TOKEN" "${GRAFANA_USER}:y"', ["a", "x: $JIRA_API_TOKEN", "$GRAFANA_USER:y"]),
    ("a\tb", ["a", "b"]),
    ("a c=b", ["a", "c=b"]),
    ("a ~/x", ["a", os.path.expanduser("~") + "/x"]),
    ("a x~/y", None),
    ("a ~", None),
    ("a \\;", None),
    ("a 'b\nc'", None),
    ('a "$JIRA_API_TOKENX"', None),
    ('a "$HOME"', None),
    ("a é", None),
    ("a 'é'", ["a", "é"]),
])
def test_split_matches_bash(command: str, words: list[str] | None, tmp_path: Path) -> None:
    if words is None:
        with pytest.raises(ShellRefusal):
            split(command, variables=INJECTED)
        return
    got = [w.text for w in split(command, variables=INJECTED)]
    assert got == words
    if "$" not in "".join(words):
        assert _bash_argv(command, "a", tmp_path) == words[1:]


@pytest.mark.parametrize("command", [
    'curl -sf -H "Authorization: Bearer $JIRA_API_TOKEN" https://jira.example.com/rest/api/2/myself',
    'curl -u "${GRAFANA_USER}:$GRAFANA_PASSWORD" https://grafana.example.com/api/user',
])
def test_variables_only_those_the_entry_injects(command: str) -> None:
    assert command_guard.check(command, INJECTED).allowed
    refused = command_guard.check(command, ())
    assert not refused.allowed and "not a variable this entry injects" in refused.reason
    assert not command_guard.check(command, ("OTHER",)).allowed


def test_ssh_remote_command_has_no_variables_or_home() -> None:
    assert command_guard.check("ssh host hostname -f", INJECTED).allowed
    for remote in ("'hostname \"$JIRA_API_TOKEN\"'", "'df ~/'", "'hostname \\'x\\''"):
        assert not command_guard.check(f"ssh host {remote}", INJECTED).allowed, remote


# --- dry run and run: one verdict ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def every_case(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("guardcases")
    commands = [c for _, c in CASES] + ALLOWED_PROOFS
    entries = [{"id": f"case-{n:04d}", "kind": "host", "verify": c} for n, c in enumerate(commands)]
    (home / "inventory.yaml").write_text(yaml.safe_dump(entries, sort_keys=False, allow_unicode=True))
    cfg = home / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(home / "ws"), "inventory": {"files": ["inventory.yaml"]},
                                   "vault": {"key_name": f"vault:key:{home.name}"},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"},
                                   "verify": {"parallel": 4, "timeout": 5}}))
    return config.load(cfg), dict(zip((e["id"] for e in entries), commands, strict=True)), home


def test_dry_run_prints_the_verdict_the_sweep_acts_on(every_case) -> None:
    settings, commands, home = every_case
    env = {**os.environ, "MUNINN_CONFIG": str(settings.source_file)}
    done = subprocess.run([sys.executable, "-m", "muninn", "verify", "--dry-run", "--json"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = {i["id"]: i for i in json.loads(done.stdout)}
    assert set(printed) == set(commands)
    # An `nc -z` entry is a prerequisite: muninn opens the TCP connection itself and runs nothing.
    commands = {i: c for i, c in commands.items() if printed[i]["kind"] != "prerequisite"}
    for entry_id, command in commands.items():
        verdict = command_guard.check(command, ())
        assert (printed[entry_id]["allowed"], printed[entry_id]["verdict"]) == (verdict.allowed, verdict.reason)
    # The run acts on the same plan: refused items are skipped with that reason; nothing is on PATH, so an
    # allowed one comes back `missing`, never run.
    empty = home / "empty-path"
    empty.mkdir(exist_ok=True)
    results = sweep.run(settings, sweep.plan(settings), env={"PATH": str(empty), "HOME": str(home)}, store=False)
    for result in results:
        if result.kind == "prerequisite":
            continue
        item = printed[result.id]
        if item["allowed"]:
            assert result.status == "missing", (result.command, result.reason)
        else:
            assert (result.status, result.reason) == ("skipped", f"guard refused: {item['verdict']}")


# --- generated from the specs: every tool, every listed option ------------------------------------------
GENERATED = generated(command_guard.TOOLS)
PREFIXES, SMUGGLED, UNKNOWN = GENERATED.values()


def test_generated_tables_are_broad() -> None:
    assert len(PREFIXES) > 500 and len(SMUGGLED) > 100 and len(UNKNOWN) > 300


# One test per tool and class (thousands of commands): each must be refused.
@pytest.mark.parametrize("cls, tool", [(c, t) for c in GENERATED for t in command_guard.TOOLS])
def test_generated_cases_are_refused(cls: str, tool: str) -> None:
    commands = [c for c, t in GENERATED[cls] if t == tool]
    allowed = [c for c in commands if command_guard.check(c, INJECTED).allowed]
    assert not allowed, allowed
    if cls == "abbreviated long option":
        assert all("allow-list" in command_guard.check(c, INJECTED).reason for c in commands)
