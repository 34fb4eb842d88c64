"""Memory before a risky act (issue 49 §4), without a server: the classifier's classes and its measured
precision, the hook's pre-filter (a harmless command: no output, exit 0, nothing of muninn loaded) fed the
payloads Claude Code sends, and `mcp install` adding and removing the PreToolUse hook beside a person's own
hooks. The search through the real stack is tests/test_risky_hook_stack.py."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from muninn.guards.command import risky
from muninn.plugins.mcp import client_install, risky_hook, risky_recall
from muninn.plugins.search.types import Hit

ROOT = Path(__file__).resolve().parents[1]


def pre_tool_use(command: str, tool: str = "Bash") -> dict:
    """A PreToolUse payload as Claude Code sends it (the PostToolUse fields muninn observe parses, without
    the response)."""
    return {"session_id": "9c3f0e1a-5b7d-4c2e-8f10-aa11bb22cc33", "transcript_path": "/home/me/.claude/t.jsonl",
            "cwd": "/home/me/src/infra", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": {"command": command, "description": "run it"},
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9"}


@pytest.mark.parametrize(("command", "program", "verb"), [
    ("rm -rf /var/lib/postgresql", "rm", "-rf"),
    ("sudo kubectl --context prod -n api rollout restart deploy/api", "kubectl", "rollout restart"),
    ("cd infra && terraform destroy -auto-approve", "terraform", "destroy"),
    ("git push --force origin main", "git", "push --force"),
    ("psql -h db01 -c 'DROP TABLE users'", "psql", "DROP"),
    ("ls *.tmp | xargs rm -rf", "rm", "-rf"),
    ("ssh db01 'sudo systemctl restart postgresql'", "systemctl", "restart"),
    ("echo 'nameserver 1.1.1.1' > /etc/resolv.conf", "echo", ">"),
    ("aws iam create-access-key --user-name ci", "aws", "iam create-access-key"),
    ("cat <<'SQL' | psql app\nUPDATE users SET active = false;\nSQL", "psql", "UPDATE"),
])
def test_risky_commands_name_program_verb_and_where(command: str, program: str, verb: str) -> None:
    risk = risky.classify(command)
    assert risk is not None and (risk.program, risk.verb) == (program, verb), risk
    assert risk.query().startswith(program)


@pytest.mark.parametrize("command", ["ls -la", "git status", "kubectl get pods -n prod", "terraform plan",
                                     "psql -c 'select 1'", "systemctl status nginx", "docker ps",
                                     "curl -s https://api.example.com/health", "cat /etc/hosts", "", "'unclosed",
                                     "$(", "a" * 50000])
def test_ordinary_and_unreadable_commands_are_not_risky(command: str) -> None:
    assert risky.classify(command) is None


def test_measured_precision_and_recall_hold() -> None:
    from muninn.evals.lab import risky_commands

    for split in (risky_commands.measure(), risky_commands.measure(held_out=True)):
        assert split["precision"] >= 0.95 and split["recall"] >= 0.9 and split["fp_rate"] <= 0.03, split


def test_the_pre_filter_imports_the_standard_library_only() -> None:
    for module in (risky, risky_hook):
        tree = ast.parse(Path(module.__file__).read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert names <= {"__future__", "re", "json", "os", "sys", "muninn", "risky", "site"}, (module, names)


def _hook(payload: object, *args: str) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([sys.executable, "-S", "-X", "importtime", risky_hook.__file__, "--profile", "assistant",
                           *args], input=data, capture_output=True, timeout=60)


@pytest.mark.parametrize("payload", [pre_tool_use("git status"), pre_tool_use("ls -la | grep x && make test"),
                                     pre_tool_use("rm -rf /", tool="Read"), {"hook_event_name": "PreToolUse"},
                                     b"not json", b"", b"[1, 2]"])
def test_a_harmless_call_gets_no_output_and_loads_nothing_of_muninn(payload: object) -> None:
    done = _hook(payload)
    assert done.returncode == 0 and done.stdout == b"", done
    imported = [line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line]
    assert "risky" in imported or payload in (b"not json", b"", b"[1, 2]") or "json" in imported
    # The package's empty __init__ modules when muninn is on PYTHONPATH; nothing else of it, and no site-packages.
    tiny = {"muninn", "muninn.guards", "muninn.guards.command", "muninn.guards.command.risky"}
    assert not [m for m in imported if (m.startswith("muninn") and m not in tiny) or m in ("site", "typer")], imported


def test_a_risky_call_that_cannot_search_is_silent(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-S", risky_hook.__file__, "--profile", "assistant"],
                          input=json.dumps(pre_tool_use("kubectl delete ns prod")).encode(), capture_output=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "MUNINN_CONFIG": str(tmp_path / "no.yaml")},
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def _hit(uri: str, score: float, date: str, text: str) -> Hit:
    return Hit(uri=uri, title="Bash", breadcrumb="", score=score, stage_scores={}, date=date, snippet=text,
               source="sessions")


def test_same_command_only_best_first_then_same_context_then_newest() -> None:
    risk = risky.classify("kubectl --context prod rollout restart deploy/api")
    assert risk is not None
    hits = [_hit("viking://a/old.md", 0.8, "2026-01-01", "kubectl rollout restart deploy/api: timed out"),
            _hit("viking://a/new.md", 0.8, "2026-03-01", "kubectl rollout restart deploy/api: ok"),
            _hit("viking://a/best.md", 0.9, "2025-01-01", "kubectl --context prod rollout restart deploy/api"),
            _hit("viking://a/other.md", 0.95, "2026-04-01", "kubectl get pods -n prod"),
            _hit("viking://a/undated.md", 0.8, "", "ran kubectl rollout restart")]
    assert [h.uri.rsplit("/", 1)[1] for h in risky_recall.ranked(hits, risk)] == ["best.md", "new.md", "old.md"]
    # On a tie, the record naming the same context (here the prod cluster) comes before a newer one.
    hits.append(_hit("viking://a/prod.md", 0.8, "2025-06-01", "kubectl --context prod rollout restart deploy/api"))
    assert [h.uri.rsplit("/", 1)[1] for h in risky_recall.ranked(hits, risk)] == ["best.md", "prod.md", "new.md"]


# --- install and uninstall -----------------------------------------------------------------------------------

PERSONS = {"permissions": {"allow": ["Bash(npm test:*)"]},
           "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]},
                                    {"matcher": "Edit", "hooks": [{"type": "command", "command": "lint.sh"}]}],
                     "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}


def _risky_hooks(settings: dict) -> list[tuple[str, dict]]:
    return [(g.get("matcher"), h) for g in settings.get("hooks", {}).get("PreToolUse", []) for h in g["hooks"]
            if client_install.is_risky_hook(h)]


def test_install_adds_the_hook_beside_the_persons_and_uninstall_takes_only_it(cli_home) -> None:
    target = cli_home.path / ".claude" / "settings.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(PERSONS))
    first = cli_home.run("mcp", "install", "--client", "claude")
    assert first.returncode == 0, first.stderr
    after = json.loads(target.read_text())
    ((matcher, hook),) = _risky_hooks(after)
    assert matcher == "Bash" and hook["timeout"] == risky_hook.HOOK_TIMEOUT_S
    assert " -S " in hook["command"] and "--profile assistant" in hook["command"]
    assert "MUNINN_CONFIG=" in hook["command"] and not client_install.has_hooks(after)   # no recording
    assert "before a risky Bash command" in first.stderr
    mine_out = json.loads(json.dumps(after))
    client_install.drop_risky_hook(mine_out)
    assert mine_out == PERSONS

    again = cli_home.run("mcp", "install", "--client", "claude", "--record")   # both hooks, one file
    assert again.returncode == 0 and len(_risky_hooks(json.loads(target.read_text()))) == 1, again.stderr
    off = cli_home.run("mcp", "install", "--client", "claude", "--no-recall-before-risky")
    assert off.returncode == 0 and not _risky_hooks(json.loads(target.read_text())), off.stderr
    assert client_install.has_hooks(json.loads(target.read_text()))               # recording stays
    kept = cli_home.run("mcp", "install", "--client", "claude")                     # the last choice is kept
    assert kept.returncode == 0 and not _risky_hooks(json.loads(target.read_text()))
    on = cli_home.run("mcp", "install", "--client", "claude", "--recall-before-risky")
    assert on.returncode == 0 and _risky_hooks(json.loads(target.read_text()))

    gone = cli_home.run("mcp", "install", "--client", "claude", "--uninstall")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(target.read_text()) == PERSONS


def test_codex_cannot_take_the_hook(cli_home) -> None:
    done = cli_home.run("mcp", "install", "--client", "codex", "--recall-before-risky")
    assert done.returncode == 2 and "Codex has no hooks" in done.stderr
