"""Issue 51 §4, through the real CLI: a second notes folder added by hand exports while no reader may read
its area, and `muninn doctor` says so with the fix; `muninn source add PATH` adds the folder and its area
(each reader's level as on the notes area) in one step, keeping both files' comments, and is safe to rerun."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from muninn.core import config, policy
from muninn.plugins.stack import yaml_insert


@pytest.fixture
def home(cli_home) -> Path:
    home = cli_home.path
    (home / "Work Notes").mkdir()
    (home / "Work Notes" / "vpn.md").write_text("# VPN\nThe office VPN is wg0.\n")
    return home


def _files(home: Path) -> tuple[Path, Path]:
    folder = home / ".config" / "muninn"
    return folder / "muninn.yaml", folder / "policy.yaml"


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#") or " # " in line]


def _doctor(cli_home) -> list[dict]:
    done = cli_home.run("doctor", "--json")
    return json.loads(done.stdout)["checks"]


def _reach(cli_home) -> list[dict]:
    return [c for c in _doctor(cli_home) if c["name"].startswith(("reach ", "source reach"))]


def test_source_add_gives_the_folder_an_area_every_reader_reaches(home: Path, cli_home) -> None:
    cfg, pol_file = _files(home)
    before_cfg, before_pol = cfg.read_text(), pol_file.read_text()
    done = cli_home.run("source", "add", "Work Notes", "--no-apply")
    assert done.returncode == 0, done.stderr
    assert "viking://resources/work-notes" in done.stdout and "muninn policy apply" in done.stderr

    settings = config.load(cfg, environ={})
    added = [s for s in settings.sources if s.area == "viking://resources/work-notes"]
    assert [(s.kind, s.path, s.name) for s in added] == [("notes", (home / "Work Notes").resolve(), ".")]
    pol = policy.load(pol_file)
    assert pol.areas["work-notes"] == "viking://resources/work-notes"
    note = "viking://resources/work-notes/vpn.md"
    for reader in pol.profiles.values():   # each reader as on the notes area
        assert reader.areas.get("work-notes") == reader.areas.get("notes"), reader.name
        assert reader.may("read", note)
    assert not pol.profile("agent").may("write", note)
    # Every comment and line the owner had is still there, in order.
    assert _comments(cfg.read_text()) == _comments(before_cfg)
    assert _comments(pol_file.read_text()) == _comments(before_pol)
    assert [ln for ln in cfg.read_text().splitlines() if ln in before_cfg.splitlines()] == before_cfg.splitlines()

    again = cli_home.run("source", "add", "Work Notes", "--no-apply")
    assert again.returncode == 0 and "already" in again.stdout, again.stderr
    assert policy.load(pol_file).areas == pol.areas and config.load(cfg, environ={}).sources == settings.sources


def test_doctor_warns_on_an_exported_area_no_reader_reaches_and_its_fix_works(home: Path, cli_home) -> None:
    cfg, _ = _files(home)
    assert [c["level"] for c in _reach(cli_home)] == ["ok"]
    # What the user did: a second `sources:` entry by hand, nothing in the policy.
    wiki = home / "wiki"
    wiki.mkdir()
    text = cfg.read_text().replace("  # - {kind: tasks", f"  - {{kind: notes, path: {wiki}, area: "
                                   "viking://resources/wiki, name: .}\n  # - {kind: tasks", 1)
    cfg.write_text(text)
    (warned,) = _reach(cli_home)
    assert warned["level"] == "warn" and "viking://resources/wiki" in warned["detail"], warned
    assert f"muninn source add {wiki}" in warned["fix"]

    fixed = cli_home.run("source", "add", str(wiki), "--no-apply")
    assert fixed.returncode == 0, fixed.stderr
    assert "already has the notes source" in fixed.stdout and "added the area wiki" in fixed.stdout
    assert [c["level"] for c in _reach(cli_home)] == ["ok"]
    assert cfg.read_text() == text       # the source was there: muninn.yaml is not touched


def test_like_copies_another_areas_levels(home: Path, cli_home) -> None:
    done = cli_home.run("source", "add", "Work Notes", "--area", "work", "--like", "sessions", "--no-apply")
    assert done.returncode == 0, done.stderr
    pol = policy.load(_files(home)[1])
    assert {p.name: p.areas.get("work") for p in pol.profiles.values()} == \
        {p.name: p.areas.get("sessions") for p in pol.profiles.values()}


@pytest.mark.parametrize("args, words", [
    (["nowhere"], "does not exist"),
    (["Work Notes/vpn.md"], "is not a folder"),
    (["Work Notes", "--area", "notes"], "already holds"),
    (["Work Notes", "--like", "nope"], "not an area"),
])
def test_a_refusal_is_exit_2_and_writes_nothing(home: Path, args: list[str], words: str, cli_home) -> None:
    cfg, pol_file = _files(home)
    before = cfg.read_text(), pol_file.read_text()
    done = cli_home.run("source", "add", *args, "--no-apply")
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert (cfg.read_text(), pol_file.read_text()) == before


@pytest.mark.parametrize("text, key, value", [
    ("areas:\n  a: 1\n  b: 2   # c\n\nreaders: {}\n", ("areas",), None),
    ("areas:\n  a: 1\n  b:\n    - x\n# after\nz: 3\n", ("areas",), None),
    ("r:\n  areas: {a: read, b: write}\n", ("r", "areas"), None),
    ("r:\n  areas: {}\n", ("r", "areas"), None),
    ("r:\n  areas: {\n    a: read,\n  }\n", ("r", "areas"), None),
])
def test_a_key_is_inserted_in_the_mappings_own_style(text: str, key: tuple, value: None) -> None:
    node = yaml_insert.root(text)
    for part in key:
        node = yaml_insert.value_of(node, part)
    new = yaml_insert.apply(text, [yaml_insert.add_key(text.splitlines(keepends=True), node, "new", "v")])
    want = yaml.safe_load(text)
    inner = want
    for part in key[:-1]:
        inner = inner[part]
    inner[key[-1]] = {**(inner[key[-1]] or {}), "new": "v"}
    assert yaml.safe_load(new) == want, new
    assert _comments(new) == _comments(text)


@pytest.mark.integration
def test_with_the_server_up_the_policy_is_applied_in_the_same_step(stack, tmp_path: Path) -> None:
    import uuid

    account = f"src{uuid.uuid4().hex[:8]}"
    (tmp_path / "notes").mkdir()
    (tmp_path / "wiki").mkdir()
    cfg = yaml.safe_load(stack.config_path.read_text())
    cfg.update(guard={"policy": "policy.yaml"}, openviking={"account": account, "user": "owner"},
               sources=[{"kind": "notes", "path": str(tmp_path / "notes"), "area": f"viking://resources/{account}",
                         "name": "."}])
    path = tmp_path / "muninn.yaml"
    path.write_text(yaml.safe_dump(cfg))
    (tmp_path / "policy.yaml").write_text(
        f"version: 1\nareas:\n  notes: viking://resources/{account}   # the notes\nreaders:\n"
        f"  owner: {{kind: owner, account: {account}, user: owner, areas: {{notes: manage}}, remember_to: notes}}\n"
        f"  agent: {{kind: agent, account: {account}, user: agent, areas: {{notes: read}}}}\n")
    env = {**stack.env, "MUNINN_CONFIG": str(path)}
    done = subprocess.run([sys.executable, "-m", "muninn", "source", "add", str(tmp_path / "wiki"), "--area",
                           f"{account}-wiki"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"viking://resources/{account}-wiki: ok" in done.stderr, done.stderr     # policy apply's read-back
    assert "muninn export all && muninn sync all" in done.stderr
