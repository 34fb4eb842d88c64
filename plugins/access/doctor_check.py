"""`muninn doctor` lines for the vault, the inventory, the last verify sweep and the sandbox proofs run in.
Names and counts only."""

from __future__ import annotations

import shlex

from muninn.core.checks import Check
from muninn.core.config import Settings
from muninn.core.credentials import for_home
from muninn.core.errors import ConfigError, CredentialError
from muninn.core.inventory_file import load_files

from . import sandbox
from .store import Store


def vault(settings: Settings) -> list[Check]:
    files = [settings.paths.resolve(f) for f in settings.vault.files]
    missing = [str(f) for f in files if not f.exists()]
    out = []
    if not files:
        out.append(Check("vault files", "warn", "none configured", "list secrets YAML under `vault.files`"))
    elif missing:
        out.append(Check("vault files", "fail", f"missing: {', '.join(missing)}", "fix `vault.files`"))
    else:
        out.append(Check("vault files", "ok", ", ".join(str(f) for f in files)))
    path = settings.paths.vault_store
    if not path.exists():
        out.append(Check("vault store", "warn", f"{path} not created yet",
                         "run `muninn secret add ID` (asks for a value) or `muninn secret load`"))
        return out
    try:
        store = Store(path, for_home(settings), settings.vault.key_name)
        try:
            count = len(store.all_values())  # decrypts every value: proves the key matches the store
        finally:
            store.close()
    except CredentialError as exc:
        return [*out, Check("vault store", "fail", exc.message, exc.fix or "")]
    out.append(Check("vault store", "ok", f"{path}: {count} value(s) decrypt with the keyring key"))
    return out


def secret_files(settings: Settings) -> list[Check]:
    """Every file whose values are secret (vault.files, guard/export secret_files, secrets sources):
    one that group or others may read hands its values to every local account."""
    out = []
    for path in settings.paths.known_secret_files():
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            continue   # `vault files` and `sources` name a missing file
        if mode & 0o077:
            out.append(Check(f"secret file {path}", "warn", f"mode {mode:03o}: group or others may read it",
                             f"chmod 600 {shlex.quote(str(path))}"))
        else:
            out.append(Check(f"secret file {path}", "ok", f"mode {mode:03o}"))
    return out


def inventory(settings: Settings) -> list[Check]:
    files = [settings.paths.resolve(f) for f in settings.inventory.files]
    if not files:
        return [Check("inventory", "warn", "no files configured", "list inventory YAML under "
                             "`inventory.files`")]
    try:
        entries = load_files(files)
    except ConfigError as exc:
        return [Check("inventory", "fail", str(exc), "fix the entry named")]
    prereqs = sum(1 for e in entries.values() if e.entry.is_prerequisite)
    return [Check("inventory", "ok", f"{len(entries)} entries, {prereqs} prerequisite(s)")]


def verify_sandbox(settings: Settings) -> list[Check]:
    kind, detail = sandbox.status(settings.verify.sandbox)
    return [Check("verify sandbox", "ok" if kind else "warn", detail,
                  "" if kind else "apt-get install bubblewrap, or allow unprivileged user namespaces for unshare")]
