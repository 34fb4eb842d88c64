"""Notes on another host (issue 50 §5), against a real OpenSSH server on a loopback port (tests/sshd.py:
Debian's openssh-server, unpacked from the package registry): a `remote: ssh://…` source is pulled into a
0700 mirror, incrementally, with the key from an ssh agent and the host key pinned; a wrong host key, a host
that is away and a pull cut off half-way each keep the last mirror whole and prune nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import SESSION_DIR, free_port
from sshd import Sshd, running

from muninn.core import config
from muninn.core.errors import ExitCode
from muninn.export import doctor_check, remote_tree

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Sshd]:
    with running(tmp_path_factory.mktemp("sshd"), free_port(), SESSION_DIR / "cache") as s:
        yield s


@pytest.fixture(scope="module")
def agent(server: Sshd) -> Iterator[dict[str, str]]:
    """An ssh agent holding the client key, as a user's session has one: muninn is handed only its socket."""
    out = subprocess.run(["ssh-agent", "-s"], capture_output=True, text=True, check=True).stdout
    env = dict(line.split(";")[0].split("=", 1) for line in out.splitlines() if line.startswith("SSH_"))
    subprocess.run(["ssh-add", "-q", str(server.key)], env={**os.environ, **env}, check=True, capture_output=True)
    try:
        yield env
    finally:
        subprocess.run(["ssh-agent", "-k"], env={**os.environ, **env}, capture_output=True)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: dict[str, str]) -> Path:
    for k, v in agent.items():
        monkeypatch.setenv(k, v)
    remote = tmp_path / "far" / "notes"
    (remote / "runbooks").mkdir(parents=True)
    (remote / "dns.md").write_text("# DNS\nThe resolver is unbound on ns1, port 5353.\n")
    (remote / "runbooks" / "disk.md").write_text("# Disk full\nRun `ncdu -x /var` first.\n")
    (remote / "photo.jpg").write_bytes(b"\xff\xd8 not a note")
    return remote


def _url(server: Sshd, path: Path) -> str:
    return f"ssh://{server.user}@127.0.0.1:{server.port}{path}"


def test_the_tree_comes_over_incrementally_into_a_private_mirror(server, tree, tmp_path) -> None:
    mirror = tmp_path / "mirror"
    first = remote_tree.pull(_url(server, tree), mirror, known_hosts=server.known_hosts)
    assert sorted(first.fetched) == ["dns.md", "runbooks/disk.md"] and first.removed == []
    assert (mirror / "runbooks" / "disk.md").read_text() == (tree / "runbooks" / "disk.md").read_text()
    assert mirror.stat().st_mode & 0o777 == 0o700 and not (mirror / "photo.jpg").exists()
    again = remote_tree.pull(_url(server, tree), mirror, known_hosts=server.known_hosts)
    assert again.fetched == [] and again.unchanged == 2
    (tree / "dns.md").write_text("# DNS\nThe resolver is unbound on ns2 now, port 5353.\n")
    (tree / "runbooks" / "disk.md").unlink()
    third = remote_tree.pull(_url(server, tree), mirror, known_hosts=server.known_hosts)
    assert third.fetched == ["dns.md"] and third.removed == ["runbooks/disk.md"]
    assert "ns2" in (mirror / "dns.md").read_text() and not (mirror / "runbooks" / "disk.md").exists()


def test_a_host_key_that_does_not_match_is_refused_and_the_mirror_kept(server, tree, tmp_path) -> None:
    mirror = tmp_path / "mirror"
    remote_tree.pull(_url(server, tree), mirror, known_hosts=server.known_hosts)
    before = {p: p.read_bytes() for p in mirror.rglob("*") if p.is_file()}
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    forged = tmp_path / "known_hosts"
    forged.write_text(f"[127.0.0.1]:{server.port} {' '.join(Path(f'{other}.pub').read_text().split()[:2])}\n")
    (tree / "dns.md").write_text("# DNS\nchanged\n")
    with pytest.raises(remote_tree.PullFailed, match="known_hosts|host key|HOST IDENTIFICATION"):
        remote_tree.pull(_url(server, tree), mirror, known_hosts=forged)
    kept = remote_tree.pull_or_keep(_url(server, tree), mirror, known_hosts=forged)
    assert kept.warning and "last mirror" in kept.warning
    assert {p: p.read_bytes() for p in mirror.rglob("*") if p.is_file()} == before


def test_a_pull_cut_off_half_way_changes_nothing(server, tree, tmp_path, monkeypatch) -> None:
    mirror = tmp_path / "mirror"
    remote_tree.pull(_url(server, tree), mirror, known_hosts=server.known_hosts)
    before = {p: p.read_bytes() for p in mirror.rglob("*") if p.is_file()}
    (tree / "dns.md").write_text("# DNS\nnew text that must not arrive alone\n")
    (tree / "runbooks" / "disk.md").write_text("# Disk full\nchanged too, and gone before it is fetched\n")
    listed = remote_tree.listing

    def then_vanish(remote, known_hosts):          # the host loses a file between the listing and the copy
        seen = listed(remote, known_hosts)
        (tree / "runbooks" / "disk.md").unlink()
        return seen

    monkeypatch.setattr(remote_tree, "listing", then_vanish)
    with pytest.raises(remote_tree.PullFailed):
        remote_tree.pull(_url(server, tree), mirror, known_hosts=server.known_hosts)
    assert {p: p.read_bytes() for p in mirror.rglob("*") if p.is_file()} == before
    assert not list(mirror.parent.glob(f".{mirror.name}-pull-*"))          # no staging left behind


def _muninn(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "muninn", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_export_reads_the_remote_tree_and_a_host_that_is_away_prunes_nothing(server, tree, tmp_path) -> None:
    cfg = tmp_path / "muninn.yaml"
    source = {"kind": "notes", "remote": _url(server, tree), "path": str(tmp_path / "mirror"),
              "known_hosts": str(server.known_hosts), "area": "viking://resources/far", "name": "."}
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "sources": [source]}))
    env = {**os.environ, "MUNINN_CONFIG": str(cfg)}
    first = _muninn(env, "export", "all", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["viking://resources/far"]["facts"] == 2
    exported = sorted(p.name for p in (tmp_path / "home" / "exports" / "far").rglob("*.md"))
    assert exported and any("dns" in n for n in exported)
    # The host goes away: the export runs from the last mirror, says so, and prunes nothing.
    source["remote"] = f"ssh://{server.user}@127.0.0.1:{free_port()}{tree}"
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "sources": [source]}))
    away = _muninn(env, "export", "all")
    assert away.returncode == 0, away.stderr
    assert "last mirror" in away.stdout + away.stderr
    assert sorted(p.name for p in (tmp_path / "home" / "exports" / "far").rglob("*.md")) == exported
    # With no mirror yet, a host that is away is one sentence and its own exit code.
    shutil.rmtree(tmp_path / "mirror")
    never = _muninn(env, "export", "all")
    assert never.returncode == ExitCode.REMOTE_UNREACHABLE, never.stderr
    assert "Traceback" not in never.stderr and str(tree) in never.stdout + never.stderr


def test_doctor_says_how_old_the_mirror_is(server, tree, tmp_path) -> None:
    cfg = tmp_path / "muninn.yaml"
    source = {"kind": "notes", "remote": _url(server, tree), "path": str(tmp_path / "mirror"),
              "known_hosts": str(server.known_hosts), "area": "viking://resources/far", "name": "."}
    cfg.write_text(yaml.safe_dump({"home": str(tmp_path / "home"), "sources": [source]}))
    env = {**os.environ, "MUNINN_CONFIG": str(cfg)}

    def row():
        (check,) = doctor_check.sources(config.load(cfg))
        return check

    assert row().level == "warn" and "not pulled yet" in row().detail
    assert _muninn(env, "export", "all").returncode == 0
    assert row().level == "ok" and "pulled 0.0 h ago" in row().detail
