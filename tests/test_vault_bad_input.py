"""Bad input to `secret exec`, `secret get` and `secret command`, fuzzed over their options: every
combination ends with a documented exit code and one sentence, never a crash (exit 70). Real vault,
real child processes, the installed entry point."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from muninn.core.errors import ExitCode

ENTRIES = [
    {"id": "one-part", "service": "jira", "value": "tok_9f8Q2mZxL4vB7nK1pR6w"},
    {"id": "two-part", "service": "postgres", "env": "PG",
     "parts": {"username": "admin", "password": "Db-s3cret-Pw-77xq"}},
]
ENVS = [None, "GOOD_NAME", "A=B", "1X", "", "A B", "a-b", "X=Y=Z", "password=PG_PW", "password=1X",
        "nosuch=X", "password=PW,username", "=X", "password=A,password=B", "A" * 300]
PARTS = [None, "x", "password", "", "username"]
SECRETS = ["one-part", "two-part", "no-such-secret"]
DOCUMENTED = {int(c) for c in ExitCode} - {int(ExitCode.INTERNAL)}


@pytest.fixture
def world(tmp_path: Path, isolated_keyring: Path) -> Path:
    (tmp_path / "secrets.yaml").write_text(yaml.safe_dump(ENTRIES, sort_keys=False))
    cfg = tmp_path / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "vault": {"files": ["secrets.yaml"]},
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    return cfg


def _exec_args(secret: str, env: str | None, stdin: bool, part: str | None) -> list[str]:
    return (["secret", "exec", secret] + (["--env", env] if env is not None else []) + (["--stdin"] if stdin else [])
            + (["--part", part] if part is not None else []) + ["--", "true"])


EXEC_CASES = list(itertools.product(SECRETS[:2], ENVS, [False, True], PARTS))


def _one_sentence(result) -> None:
    assert "Traceback" not in result.stderr
    assert result.exit_code in DOCUMENTED, (result.exit_code, result.stderr)
    if result.exit_code:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert lines and len(lines) <= 12, result.stderr   # a sentence (typer's usage box for its own errors)


def test_every_exec_combination_ends_with_a_sentence(run_muninn, world: Path) -> None:
    sync = run_muninn(["--config", str(world), "vault", "sync"])
    assert sync.exit_code == 0, sync.stderr
    seen: dict[int, int] = {}
    for secret, env, stdin, part in EXEC_CASES:
        result = run_muninn(["--config", str(world), *_exec_args(secret, env, stdin, part)])
        _one_sentence(result)
        seen[result.exit_code] = seen.get(result.exit_code, 0) + 1
    assert seen.get(0) and seen.get(int(ExitCode.BAD_INPUT)), seen


@pytest.mark.parametrize(("argv", "code", "words"), [
    (["secret", "exec", "one-part", "--env", "A=B", "--", "true"], ExitCode.BAD_INPUT, "--env"),   # the issue's
    (["secret", "exec", "one-part", "--stdin", "--part", "x", "--", "true"], ExitCode.BAD_INPUT, "no part"),
    (["secret", "exec", "two-part", "--stdin", "--part", "x", "--", "true"], ExitCode.BAD_INPUT, "its parts"),
    (["secret", "exec", "two-part", "--stdin", "--", "true"], ExitCode.REFUSED, "--part"),
    (["secret", "exec", "two-part", "--env", "nosuch=X", "--", "true"], ExitCode.BAD_INPUT, "part=NAME"),
    (["secret", "exec", "one-part", "--part", "x", "--", "true"], ExitCode.BAD_INPUT, "--stdin"),
    (["secret", "exec", "one-part", "--env", "GOOD", "--stdin", "--", "true"], ExitCode.BAD_INPUT, "--env"),
    (["secret", "exec", "one-part", "--env", "GOOD_NAME", "--", "true"], ExitCode.OK, ""),
    (["secret", "exec", "two-part", "--stdin", "--part", "password", "--", "true"], ExitCode.OK, ""),
    (["secret", "exec", "two-part", "--env", "password=PG_PW", "--", "true"], ExitCode.OK, ""),
])
def test_the_bad_inputs_named(run_muninn, world: Path, argv: list[str], code: int, words: str) -> None:
    assert run_muninn(["--config", str(world), "vault", "sync"]).exit_code == 0
    result = run_muninn(["--config", str(world), *argv])
    _one_sentence(result)
    assert result.exit_code == code, result.stderr
    assert words in result.stderr


@pytest.mark.parametrize(("secret", "part"), list(itertools.product(SECRETS, PARTS)))
def test_get_with_any_part_ends_with_a_sentence(run_muninn, world: Path, secret: str, part: str | None) -> None:
    assert run_muninn(["--config", str(world), "vault", "sync"]).exit_code == 0
    result = run_muninn(["--config", str(world), "secret", "get", secret, *(["--part", part] if part is not None
                                                                             else [])])
    _one_sentence(result)
    assert result.exit_code != 0   # never a terminal here: refused, or bad input said first


@pytest.mark.parametrize(("env", "stdin"), list(itertools.product(ENVS, [False, True])))
def test_command_with_any_env_ends_with_a_sentence(run_muninn, world: Path, env: str | None, stdin: bool) -> None:
    result = run_muninn(["--config", str(world), "secret", "command", "one-part", "curl x",
                         *(["--env", env] if env is not None else []), *(["--stdin"] if stdin else [])])
    _one_sentence(result)
