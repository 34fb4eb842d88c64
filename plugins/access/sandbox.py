"""Run a proof command with the local filesystem read-only, so that a guard miss cannot write here.

    argv = wrap(script)           # ["bwrap", ...] / ["unshare", ...] / ["bash", "-c", script]
    text = line(script)           # the same as one bash line, for runners that take a script
    text = script(setup_and_command)   # only the last line (the judged command) in the sandbox
    kind, detail = status()       # for `muninn doctor`

Two ways, the first that works on this machine (probed once, by checking that a fresh temp
directory is not writable inside):
- bwrap (Debian's bubblewrap): `--ro-bind / /` binds every mount read-only; `--dev /dev` is a fresh
  device tree (`-o /dev/null` works; its /dev/shm is private and gone when the command ends).
- unshare (util-linux, always on Debian): a new user and mount namespace in which every mount is
  remounted read-only; if one stays writable the wrapper refuses to run the command (exit 125).
The network namespace is shared in both, so the proof still reaches its service. Tools that need
to write a cache (`az`, `kubectl` discovery) see a read-only home: kubectl only warns.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
import tempfile

SANDBOX_EXIT = 125
# Every mount read-only, then check that each one is (a remount can fail on a locked mount): fail closed.
_REMOUNT = r"""
MOUNT=$1 BASH_BIN=$2
unescape() { case $1 in *\\*) printf '%b' "$1" ;; *) printf '%s' "$1" ;; esac; }
while read -r _ _ _ _ mp _; do
  case $mp in *\\*) mp=$(unescape "$mp") ;; esac
  "$MOUNT" -o remount,bind,ro "$mp" 2>/dev/null
done < /proc/self/mountinfo
while read -r _ _ _ _ mp _; do
  case $mp in *\\*) mp=$(unescape "$mp") ;; esac
  case $mp in /proc|/proc/*|/sys|/sys/*) continue ;; esac
  if [ -d "$mp" ] && [ -w "$mp" ]; then
    echo "muninn sandbox: $mp stayed writable: not running the command" >&2; exit 125
  fi
done < /proc/self/mountinfo
exec "$BASH_BIN" -c "$3"
"""


# Absolute paths, found on muninn's own PATH: the proof's environment may carry another PATH.
def _bin(name: str) -> str:
    return shutil.which(name) or f"/usr/bin/{name}"


def _bwrap(script: str) -> list[str]:
    return [_bin("bwrap"), "--ro-bind", "/", "/", "--dev", "/dev", "--die-with-parent",
            _bin("bash"), "-c", script]


def _unshare(script: str) -> list[str]:
    return [_bin("unshare"), "--map-current-user", "--mount", "--propagation", "private",
            _bin("sh"), "-c", _REMOUNT, "muninn-sandbox", _bin("mount"), _bin("bash"), script]


_KINDS = {"bwrap": _bwrap, "unshare": _unshare}


def _works(kind: str) -> bool:
    if not shutil.which(kind):
        return False
    with tempfile.TemporaryDirectory(prefix="muninn-sandbox-") as probe:
        argv = _KINDS[kind](f"test ! -w {probe} && test -w /dev/null")
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0


@functools.cache
def available() -> str | None:
    """'bwrap', 'unshare', or None when neither can make the filesystem read-only here."""
    return next(iter(working()), None)


def working() -> list[str]:
    """Every kind that works here, in order of preference."""
    return [kind for kind in _KINDS if _works(kind)]


def wrap(script: str, mode: str = "auto") -> list[str]:
    """argv that runs `script` with bash: in the first sandbox that works ('auto'), in the one named
    ('bwrap', 'unshare': for tests), or plainly ('off', or 'auto' where none works)."""
    kind = available() if mode == "auto" else mode if mode in _KINDS else None
    return _KINDS[kind](script) if kind else ["bash", "-c", script]


def line(script: str, mode: str = "auto") -> str:
    """The same as one bash line (`exec` + quoted argv): `script` stays quoted, so the variables the
    sweep injects are expanded by the sandboxed bash, never by the outer one or in any argv."""
    argv = wrap(script, mode)
    return script if argv[:2] == ["bash", "-c"] else "exec " + shlex.join(argv)


def script(text: str, mode: str = "auto") -> str:
    """A sweep script (setup steps, then the judged command as its last line) with only that last line in
    the sandbox: the setup steps are the owner's own env scripts and switches (`az account set` writes its
    profile), run as before; the command is what the guard judged, and what a guard miss would be."""
    setup, _, command = text.rpartition("\n")
    wrapped = line(command, mode)
    return f"{setup}\n{wrapped}" if setup else wrapped


def status(mode: str = "auto") -> tuple[str | None, str]:
    """(kind or None, one sentence for doctor)."""
    if mode == "off":
        return None, "off (verify.sandbox: off): proof commands can write locally if the guard misses"
    kind = available()
    if kind is None:
        return None, ("none available: proof commands run without a read-only filesystem (install bubblewrap, "
                      "or allow unprivileged user namespaces for unshare)")
    return kind, f"{kind}: proof commands see the local filesystem read-only (network unchanged)"
