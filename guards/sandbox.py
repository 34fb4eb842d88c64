"""Run a proof command with the local filesystem read-only, so that a guard miss cannot write here.

    argv = wrap(script)           # ["bwrap", ...] / ["unshare", ...] / ["bash", "-c", script]
    text = line(script)           # the same as one bash line, for runners that take a script
    kind, detail = status()       # for `muninn doctor`

Two ways, the first that works on this machine (probed once, by checking that a fresh temp
directory is not writable inside):
- bwrap (Debian's bubblewrap): `--ro-bind / /` binds every mount read-only; /dev stays a device
  tree, so `-o /dev/null` still works.
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
while read -r _ _ _ _ mp _; do
  "$MOUNT" -o remount,bind,ro "$(printf '%b' "$mp")" 2>/dev/null
done < /proc/self/mountinfo
while read -r _ _ _ _ mp _; do
  mp=$(printf '%b' "$mp")
  case "$mp" in /proc|/proc/*|/sys|/sys/*) continue ;; esac
  if [ -d "$mp" ] && [ -w "$mp" ]; then
    echo "muninn sandbox: $mp stayed writable: not running the command" >&2; exit 125
  fi
done < /proc/self/mountinfo
exec bash -c "$1"
"""


def _bwrap(script: str) -> list[str]:
    return ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--die-with-parent",
            "bash", "-c", script]


def _unshare(script: str) -> list[str]:
    mount = shutil.which("mount") or "/usr/bin/mount"
    return ["unshare", "--map-current-user", "--mount", "--propagation", "private",
            "env", f"MOUNT={mount}", "sh", "-c", _REMOUNT, "muninn-sandbox", script]


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
    return next((kind for kind in _KINDS if _works(kind)), None)


def wrap(script: str, mode: str = "auto") -> list[str]:
    """argv that runs `script` with bash, inside the sandbox unless mode is 'off' or none works here."""
    kind = available() if mode != "off" else None
    return _KINDS[kind](script) if kind else ["bash", "-c", script]


def line(script: str, mode: str = "auto") -> str:
    """The same as one bash line (`exec` + quoted argv): `script` stays quoted, so the variables the
    sweep injects are expanded by the sandboxed bash, never by the outer one or in any argv."""
    argv = wrap(script, mode)
    return script if argv[:2] == ["bash", "-c"] else "exec " + shlex.join(argv)


def status(mode: str = "auto") -> tuple[str | None, str]:
    """(kind or None, one sentence for doctor)."""
    if mode == "off":
        return None, "off (verify.sandbox: off): proof commands can write locally if the guard misses"
    kind = available()
    if kind is None:
        return None, ("none available: proof commands run without a read-only filesystem (install bubblewrap, "
                      "or allow unprivileged user namespaces for unshare)")
    return kind, f"{kind}: proof commands see the local filesystem read-only (network unchanged)"
