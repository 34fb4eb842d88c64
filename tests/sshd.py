"""A real OpenSSH server on a loopback port for the tests: Debian's `openssh-server` (and its sftp-server
and libwrap0), fetched from the package registry and unpacked, never installed. It runs in a mount
namespace of its own, where its privilege-separation user exists in a passwd file bind-mounted over the
machine's, so nothing on the machine changes. Logins are by key only, as the user running the tests."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("openssh-server", "openssh-sftp-server", "libwrap0")


def unpacked(cache: Path) -> Path:
    """The three packages unpacked under `cache` (downloaded once)."""
    root = cache / "sshd-debs"
    tree = root / "tree"
    if (tree / "usr" / "sbin" / "sshd").exists():
        return tree
    root.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        if not list(root.glob(f"{package}_*.deb")):
            got = subprocess.run(["apt-get", "download", package], cwd=root, capture_output=True, text=True)
            assert got.returncode == 0, f"apt-get download {package}: {got.stderr[-300:]}"
    for deb in root.glob("*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
    return tree


@dataclass
class Sshd:
    port: int
    user: str
    key: Path              # the client's private key (the tests' "agent" gives it to ssh)
    known_hosts: Path      # pins this server's host key
    log: Path

    def ssh_config(self, home: Path) -> None:
        """`~/.ssh/config` for a test HOME: the client key for this server (as a user's own setup would)."""
        ssh = home / ".ssh"
        ssh.mkdir(parents=True, exist_ok=True, mode=0o700)
        (ssh / "config").write_text(f"Host 127.0.0.1\n  IdentityFile {self.key}\n  IdentitiesOnly yes\n")


@contextmanager
def running(base: Path, port: int, cache: Path) -> Iterator[Sshd]:
    tree = unpacked(cache)
    base.mkdir(parents=True, exist_ok=True)
    etc = base / "etc"
    etc.mkdir(exist_ok=True)
    privsep = base / "run-sshd"
    privsep.mkdir(exist_ok=True, mode=0o755)
    passwd = etc / "passwd"
    passwd.write_text(Path("/etc/passwd").read_text() + "sshd:x:64998:65534::/run/sshd:/usr/sbin/nologin\n")
    for name in ("host_key", "client_key"):
        if not (etc / name).exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(etc / name)], check=True)
    shutil.copy(etc / "client_key.pub", etc / "authorized_keys")
    user = getpass.getuser()
    (etc / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {etc / 'host_key'}\nPidFile {base / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {etc / 'authorized_keys'}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nAllowUsers {user}\n"
        f"Subsystem sftp {tree / 'usr/lib/openssh/sftp-server'}\n")
    libs = tree / "usr/lib/x86_64-linux-gnu"
    script = (f"mount --bind {passwd} /etc/passwd && mkdir -p /run/sshd && mount --bind {privsep} /run/sshd && "
              f"LD_LIBRARY_PATH={libs} exec {tree / 'usr/sbin/sshd'} -D -e -f {etc / 'sshd_config'}")
    ns = ["unshare", "--mount", "--propagation", "private"] if os.geteuid() == 0 else \
        ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]
    log = base / "sshd.log"
    proc = subprocess.Popen([*ns, "sh", "-c", script], stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    known = base / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {' '.join((etc / 'host_key.pub').read_text().split()[:2])}\n")
    try:
        for _ in range(100):
            if "Server listening" in log.read_text(errors="replace"):
                break
            assert proc.poll() is None, log.read_text()
            time.sleep(0.1)
        else:
            raise AssertionError(f"sshd did not start: {log.read_text()}")
        yield Sshd(port, user, etc / "client_key", known, log)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
