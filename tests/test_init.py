"""`muninn init` through the real entry point: a config for your own notes that the real loaders read
and `muninn doctor`'s config checks pass, never an overwrite, and one sentence for a notes folder that is
not there."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from conftest import Ended

from muninn.core import config, policy, secrets_file
from muninn.core.errors import ExitCode
from muninn.plugins.stack import init_files

NAMES = ("muninn.yaml", "policy.yaml", "secrets.yaml")
# The doctor lines about the files init writes: each must be ok right after it.
CONFIG_CHECKS = ("config", "source ", "vault files", "secret file ", "guard policy")



@pytest.fixture
def invoke(run_muninn):
    """The installed entry point in this process, with STDIN as its stdin (a pipe)."""

    def run(argv: list[str], stdin: str = "") -> Ended:
        return run_muninn(argv, stdin)

    return run


def _doctor(invoke, cfg: Path) -> dict[str, dict]:
    result = invoke(["--config", str(cfg), "doctor", "--json"])
    assert result.exit_code in (0, 1), result.stderr
    return {c["name"]: c for c in json.loads(result.stdout)["checks"]}


def _config_checks(checks: dict[str, dict]) -> dict[str, dict]:
    return {n: c for n, c in checks.items() if n.startswith(CONFIG_CHECKS)}


def _one_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


# Folder names that YAML would misread unquoted, or that a shell would split.
NOTE_FOLDERS = ["notes", "my notes", "a: b # c", "ünïcode-nötes", "quote's \"here\"", "-dash", "[x]", "null"]


@pytest.mark.parametrize("folder", NOTE_FOLDERS)
def test_init_writes_a_config_the_real_loaders_read_and_doctor_passes(invoke, tmp_path: Path, folder: str) -> None:
    notes = tmp_path / folder
    notes.mkdir()
    (notes / "runbook.md").write_text("# Runbook\n\nRestart the broker with systemctl restart mosquitto.\n")
    cfg = tmp_path / "etc" / "muninn.yaml"
    result = invoke(["--config", str(cfg), "init", "--notes", str(notes), "--yes"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.rstrip().splitlines()[-1] == f"next: muninn --config {cfg} doctor"
    settings = config.load(cfg, environ={})
    assert [s.kind for s in settings.sources] == ["notes", "observations"]
    assert settings.paths.resolve(settings.sources[0].path) == notes.resolve()
    pol = policy.load(settings.paths.policy)
    assert sorted(p.kind for p in pol.profiles.values()) == ["agent", "assistant", "owner"]
    assert settings.sources[0].area in pol.areas.values()
    assert secrets_file.load_files([settings.paths.resolve(f) for f in settings.vault.files]) == []
    checks = _config_checks(_doctor(invoke, cfg))
    assert {n.split(" ")[0] for n in checks} >= {"config", "source", "vault", "secret", "guard"}
    assert all(c["level"] == "ok" for c in checks.values()), checks


def test_the_written_config_exports_the_notes(invoke, tmp_path: Path) -> None:
    """What init writes is enough for the next real step: `export all` reads the notes it names."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "dns.md").write_text("# DNS\n\n## Resolver\n\nThe resolver is unbound on the router.\n")
    cfg = tmp_path / "muninn.yaml"
    assert invoke(["--config", str(cfg), "init", "--notes", str(notes), "--yes"]).exit_code == 0
    result = invoke(["--config", str(cfg), "export", "all", "--json"])
    assert result.exit_code == 0, result.stderr
    reports = json.loads(result.stdout)
    (notes_report,) = [r for name, r in reports.items() if name.endswith("/notes")]
    assert notes_report["facts"] >= 1 and notes_report["written"] >= 1
    # The observation log no hook has written to yet is an empty source, not a missing one.
    (log_report,) = [r for name, r in reports.items() if name.endswith("/observations")]
    assert log_report["facts"] == 0 and not log_report.get("error")


@pytest.mark.parametrize("how", ["flag", "prompt", "prompt-default", "yes-default"])
def test_every_way_to_name_the_notes_folder(invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              how: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    default = tmp_path / "user" / "notes"
    given = tmp_path / "elsewhere"
    default.mkdir(parents=True)
    given.mkdir()
    cfg = tmp_path / "muninn.yaml"
    argv, stdin, expect = {
        "flag": (["--notes", str(given)], "", given),
        "prompt": ([], f"{given}\n", given),
        "prompt-default": ([], "\n", default),
        "yes-default": (["--yes"], "", default),
    }[how]
    result = invoke(["--config", str(cfg), "init", *argv], stdin=stdin)
    assert result.exit_code == 0, result.stderr
    assert ("Where do your notes live?" in result.stdout) == how.startswith("prompt")
    settings = config.load(cfg, environ={})
    assert settings.paths.resolve(settings.sources[0].path) == expect.resolve()


@pytest.mark.parametrize("case", ["missing", "a-file", "yes-without-home-notes", "end-of-input", "dangling-link"])
def test_a_notes_folder_that_is_not_there_is_one_sentence_and_nothing_written(
        invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    (tmp_path / "file.md").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    argv, stdin = {
        "missing": (["--notes", str(tmp_path / "nope"), "--yes"], ""),
        "a-file": (["--notes", str(tmp_path / "file.md")], ""),
        "yes-without-home-notes": (["--yes"], ""),
        "end-of-input": ([], ""),
        "dangling-link": (["--notes", str(tmp_path / "link")], ""),
    }[case]
    cfg = tmp_path / "cfg" / "muninn.yaml"
    result = invoke(["--config", str(cfg), "init", *argv], stdin=stdin)
    assert result.exit_code == ExitCode.BAD_INPUT, (result.stdout, result.stderr)
    line = _one_error(result.stderr)
    assert "--notes" in line and "(" in line
    assert not (tmp_path / "cfg").exists() or not any((tmp_path / "cfg").iterdir())


@pytest.mark.parametrize("existing", [*NAMES, "all", "symlink"])
def test_init_never_overwrites_and_names_the_file(invoke, tmp_path: Path, existing: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    folder = tmp_path / "cfg"
    folder.mkdir()
    before: dict[str, str] = {}
    for name in NAMES if existing == "all" else [existing] if existing != "symlink" else []:
        (folder / name).write_text(f"# mine: {name}\n")
        before[name] = f"# mine: {name}\n"
    if existing == "symlink":
        (folder / "policy.yaml").symlink_to(tmp_path / "nowhere.yaml")
    result = invoke(["--config", str(folder / "muninn.yaml"), "init", "--notes", str(notes)])
    assert result.exit_code == ExitCode.REFUSED, result.stderr
    line = _one_error(result.stderr)
    for name in before or ["policy.yaml"]:
        assert str(folder / name) in line
    assert "wrote nothing" in line
    assert sorted(p.name for p in folder.iterdir()) == sorted(before or ["policy.yaml"])
    for name, text in before.items():
        assert (folder / name).read_text() == text


@pytest.mark.parametrize("where", ["xdg-default", "env", "flag-in-empty-cwd"])
def test_output_ends_with_the_doctor_command_that_finds_the_config(
        invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    argv = ["init", "--notes", str(notes)]
    if where == "env":
        monkeypatch.setenv("MUNINN_CONFIG", str(tmp_path / "env" / "muninn.yaml"))
        cfg = tmp_path / "env" / "muninn.yaml"
    elif where == "flag-in-empty-cwd":
        argv = ["--config", "muninn.yaml", *argv]
        cfg = empty / "muninn.yaml"
    else:
        cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "muninn" / "muninn.yaml"
    result = invoke(argv)
    assert result.exit_code == 0, result.stderr
    last = result.stdout.rstrip().splitlines()[-1]
    for name in NAMES:
        assert (cfg.parent / name).exists()
    if where == "flag-in-empty-cwd":
        assert last == f"next: muninn --config {cfg} doctor"
        checks = _doctor(invoke, cfg)
    else:
        assert last == "next: muninn doctor"
        result = invoke(["doctor", "--json"])   # found with no flag, as the line says
        checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["config"]["detail"].startswith(str(cfg))
    assert all(c["level"] == "ok" for c in _config_checks(checks).values())


def test_secrets_template_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    old = os.umask(0o022)
    try:
        written = init_files.write(init_files.plan(tmp_path / "muninn.yaml", notes))
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in written}
    assert modes["secrets.yaml"] == 0o600
    assert modes["muninn.yaml"] == 0o644   # not key material: what the umask gives


def test_the_policy_gives_each_kind_its_reach(tmp_path: Path) -> None:
    """Owner manages everything, the assistant writes notes, the agent reads notes and writes only its own area,
    with no tool an agent may never hold."""
    notes = tmp_path / "notes"
    notes.mkdir()
    init_files.write(init_files.plan(tmp_path / "muninn.yaml", notes))
    pol = policy.load(tmp_path / "policy.yaml")
    by_kind = {p.kind: p for p in pol.profiles.values()}
    area = init_files.NOTES_AREA
    assert set(by_kind["owner"].areas.values()) == {"manage"}
    assert area in by_kind["assistant"].write_prefixes
    agent = by_kind["agent"]
    assert area in agent.read_prefixes and area not in agent.write_prefixes
    assert agent.write_prefixes == (agent.remember_to,) and not agent.trusted
    assert not set(agent.tools) & policy.AGENT_FORBIDDEN


def test_init_config_writes_where_it_points(invoke, tmp_path: Path) -> None:
    """`muninn init --config FILE` is `muninn --config FILE init`: the help names both."""
    (tmp_path / "notes").mkdir()
    target = tmp_path / "here" / "muninn.yaml"
    result = invoke(["init", "--config", str(target), "--notes", str(tmp_path / "notes"), "--yes"])
    assert result.exit_code == 0, result.stderr
    assert all((target.parent / name).is_file() for name in NAMES)
    assert f"next: muninn --config {target} doctor" in result.stdout


def test_init_on_a_host_without_a_usable_keyring_says_so_at_once(invoke, tmp_path: Path, monkeypatch) -> None:
    """A headless box (keyring's `fail` backend): one warning line with the fix, the files still written."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    (tmp_path / "notes").mkdir()
    target = tmp_path / "muninn.yaml"
    result = invoke(["init", "--config", str(target), "--notes", str(tmp_path / "notes"), "--yes"])
    assert result.exit_code == 0 and target.is_file(), result.stderr
    warned = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(warned) == 1 and warned[0].startswith("warning: no usable keyring backend"), result.stderr
    assert "keyrings.alt.file.PlaintextKeyring" in warned[0] and str(target) in warned[0]


def test_init_on_a_host_with_a_keyring_says_nothing_about_it(invoke, tmp_path: Path, isolated_keyring) -> None:
    (tmp_path / "notes").mkdir()
    result = invoke(["init", "--config", str(tmp_path / "m.yaml"), "--notes", str(tmp_path / "notes"), "--yes"])
    assert result.exit_code == 0 and "keyring" not in result.stderr, result.stderr
