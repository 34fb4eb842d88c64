"""`muninn nightly install --cron|--systemd` and what doctor says about it. The crontab and systemctl are
fakes on PATH (the edge of the process) that keep their state under the test's own dirs; nothing touches
the real crontab or user session. The installed cron line is then run with an empty environment, as cron
would, and must find the config and keyring it was installed with."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.nightly import doctor_check, runner, timers
from muninn.nightly.jobs import JobResult

FAKE_CRONTAB = """#!/bin/sh
# crontab -l / crontab -: the table lives in $FAKE_CRON
if [ "$1" = "-l" ]; then
  [ -f "$FAKE_CRON" ] || { echo "no crontab for $(id -un)" >&2; exit 1; }
  cat "$FAKE_CRON"
elif [ "$1" = "-" ]; then
  cat > "$FAKE_CRON"
else
  exit 2
fi
"""
FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "$FAKE_SYSTEMCTL_LOG"
[ -n "$FAKE_SYSTEMCTL_FAIL" ] && { echo "Failed to connect to bus: No medium found" >&2; exit 1; }
exit 0
"""


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_keyring: Path) -> dict[str, Path]:
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    for name, text in (("crontab", FAKE_CRONTAB), ("systemctl", FAKE_SYSTEMCTL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    cron, log = tmp_path / "crontab.txt", tmp_path / "systemctl.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRON", str(cron))
    monkeypatch.setenv("FAKE_SYSTEMCTL_LOG", str(log))
    # A folder with a space and a percent sign: both need escaping in a crontab and a unit file.
    where = tmp_path / "my conf 100%"
    where.mkdir()
    cfg = where / "muninn.yaml"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"),
                                   "keyring": {"backend": "keyrings.alt.file.PlaintextKeyring"}}))
    return {"cron": cron, "log": log, "config": cfg, "bin": bin_dir, "home": tmp_path / "home"}


def _cli(fakes: dict[str, Path], *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", "--config", str(fakes["config"]), *args],
                          capture_output=True, text=True, timeout=120, env=env or os.environ.copy())


def test_cron_install_adds_two_marked_lines_and_a_reinstall_replaces_them(fakes) -> None:
    fakes["cron"].write_text("0 * * * * /usr/bin/backup-photos\n")
    for at in ("03:15", "04:40"):
        out = _cli(fakes, "nightly", "install", "--cron", "--at", at, "--json")
        assert out.returncode == 0, out.stderr
    lines = fakes["cron"].read_text().splitlines()
    assert lines[0] == "0 * * * * /usr/bin/backup-photos", "the user's own lines are left alone"
    ours = [line for line in lines if "# muninn:" in line]
    assert len(ours) == 2 and ours[0].startswith("40 4 * * * ") and ours[1].startswith("@reboot ")
    assert ours[0].endswith("# muninn:nightly") and ours[1].endswith("# muninn:watch")
    assert " nightly --json " in ours[0] and " watch " in ours[1]
    command = shlex.split(ours[0].split(" ", 5)[5].replace("\\%", "%"))
    env = dict(part.split("=", 1) for part in command[1:] if "=" in part and not part.startswith("-"))
    assert env["MUNINN_CONFIG"] == str(fakes["config"]) and "\\%" in ours[0], "% escaped for cron"
    assert env["PYTHON_KEYRING_BACKEND"] == "keyrings.alt.file.PlaintextKeyring"
    exe = next(part for part in command[1:] if "=" not in part)
    assert Path(exe).is_absolute() and Path(exe).exists()


def test_the_installed_cron_line_runs_with_an_empty_environment(fakes) -> None:
    assert _cli(fakes, "nightly", "install", "--cron").returncode == 0
    line = next(x for x in fakes["cron"].read_text().splitlines() if x.endswith("# muninn:nightly"))
    # What cron runs: the command after the five time fields, % unescaped, in /bin/sh with no environment.
    command = line.split(" ", 5)[5].removesuffix("# muninn:nightly").replace("\\%", "%")
    command = command.replace(" nightly --json ", " nightly --only leak-gate --json ")
    proc = subprocess.run(["env", "-i", "/bin/sh", "-c", command], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    settings = config.load(fakes["config"])
    path, data = runner.last(settings)
    assert data["jobs"][0]["name"] == "leak-gate" and path.is_relative_to(fakes["home"])


def test_systemd_install_writes_units_with_the_environment_and_enables_them(fakes, tmp_path) -> None:
    out = _cli(fakes, "nightly", "install", "--systemd", "--at", "02:05", "--json")
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)
    folder = tmp_path / "config" / "systemd" / "user"
    assert sorted(Path(p).name for p in done["written"]) == sorted(timers.UNITS)
    assert all(Path(p).parent == folder for p in done["written"])
    service = (folder / "muninn-nightly.service").read_text()
    assert f'Environment="MUNINN_CONFIG={str(fakes["config"]).replace("%", "%%")}"' in service
    assert 'Environment="PYTHON_KEYRING_BACKEND=keyrings.alt.file.PlaintextKeyring"' in service
    assert "OnCalendar=*-*-* 02:05:00" in (folder / "muninn-nightly.timer").read_text()
    assert "watch" in (folder / "muninn-watch.service").read_text().split("ExecStart=")[1]
    assert fakes["log"].read_text().splitlines() == [
        "--user daemon-reload", "--user enable --now muninn-nightly.timer muninn-watch.service"]
    assert not done["warnings"]


def test_systemd_without_a_session_bus_writes_the_units_and_says_how_to_enable(fakes, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SYSTEMCTL_FAIL", "1")
    out = _cli(fakes, "nightly", "install", "--systemd")
    assert out.returncode == 0 and "No medium found" in out.stderr and "enable them" in out.stderr
    assert timers.installed() == ["systemd"]


@pytest.mark.parametrize("args", [["--cron", "--systemd"], [], ["--cron", "--at", "25:00"],
                                  ["--systemd", "--at", "3pm"]])
def test_bad_install_arguments_are_bad_input_in_one_sentence(fakes, args) -> None:
    out = _cli(fakes, "nightly", "install", *args)
    assert out.returncode == ExitCode.BAD_INPUT and "Traceback" not in out.stderr, out.stderr
    assert not fakes["cron"].exists()


def test_cron_without_a_crontab_command_says_what_to_do(fakes) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    out = subprocess.run([sys.executable, "-m", "muninn", "--config", str(fakes["config"]), "nightly", "install",
                          "--cron"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0 and "no `crontab` command" in out.stderr and "--systemd" in out.stderr


# --- doctor ---------------------------------------------------------------------------------------

def test_doctor_says_whether_a_timer_is_installed(fakes) -> None:
    settings = config.load(fakes["config"])
    (before,) = doctor_check.nightly_timer(settings)
    assert before.level == "warn" and "muninn nightly install" in before.fix
    _cli(fakes, "nightly", "install", "--cron")
    (after,) = doctor_check.nightly_timer(settings)
    assert (after.level, after.detail) == ("ok", "installed (cron)")
    fakes["config"].rename(fakes["config"].with_name("moved.yaml"))
    (gone,) = doctor_check.nightly_timer(settings)
    assert gone.level == "fail" and "does not exist" in gone.detail


def test_doctor_says_when_nightly_last_ran_clean(fakes) -> None:
    settings = config.load(fakes["config"])
    (never,) = doctor_check.nightly_last_run(settings)
    assert never.level == "warn" and never.detail == "never ran"
    clean = runner.save(settings, [JobResult("leak-gate", True, "clean")])
    finished = json.loads(clean.read_text())["finished"]
    (ok,) = doctor_check.nightly_last_run(settings)
    assert (ok.level, ok.detail) == ("ok", f"clean at {finished}")
    runner.save(settings, [JobResult("acl-drift", False, "extra grant")])
    (bad,) = doctor_check.nightly_last_run(settings)
    assert bad.level == "warn" and "exited 1" in bad.detail and f"last clean run: {finished}" in bad.detail
    out = _cli(fakes, "doctor", "--json")
    rows = {r["name"]: r for r in json.loads(out.stdout)["checks"]}
    assert rows["nightly last run"]["level"] == "warn" and rows["nightly timer"]["level"] == "warn"


TRICKY_PATHS = ["/etc/muninn/muninn.yaml", "/home/a b/muninn.yaml", "/x/100%/m.yaml", '/q"uote/m.yaml',
                "/back\\slash/m.yaml", "/it's/m.yaml", "/dollar$HOME/m.yaml", "/semi;colon/m.yaml"]


@pytest.mark.parametrize("path", TRICKY_PATHS)
def test_a_config_path_survives_the_crontab_and_the_unit_file(fakes, path) -> None:
    settings = config.load(fakes["config"])
    (nightly_line, _watch) = timers.cron_lines(settings, Path(path))
    assert timers._cron_config(nightly_line) == path
    assert timers._unit_config(timers.units(settings, Path(path))["muninn-nightly.service"]) == path
