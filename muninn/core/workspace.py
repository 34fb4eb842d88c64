"""Where everything of one muninn install lives: every `<home>/…` path, and the one rule for paths
written in muninn.yaml (relative to muninn.yaml, `~` expanded). Reached as `settings.paths`.

A part never spells `home / "..."` itself: a new file in the workspace gets a property here, so a
later move (or an upgrade step that moves it) has one place to change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from muninn.core import paths


@dataclass(frozen=True)
class Workspace:
    home: Path
    # muninn.yaml, when there is one: relative paths in it are relative to its folder.
    config_file: Path | None = None
    # What muninn.yaml says that the paths follow, as `Settings.paths` (muninn.core.config) hands it over; a
    # bare Workspace(home) has the defaults. Each path setting as written, by "section.key" ("export.out").
    written: Mapping[str, Path] = field(default_factory=dict)
    identity: tuple[str, str] | None = None        # openviking.account, openviking.user
    secret_files: tuple[Path, ...] = ()            # every secret file muninn.yaml names, as written

    def resolve(self, path: Path | str) -> Path:
        """A path as written in muninn.yaml: `~` expanded, relative to muninn.yaml's folder (to the
        current directory when there is no file)."""
        p = Path(path).expanduser()
        if p.is_absolute() or self.config_file is None:
            return p
        return self.config_file.parent / p

    def _override(self, section: str, key: str) -> Path | None:
        value = self.written.get(f"{section}.{key}")
        return self.resolve(value) if value is not None else None

    # The workspace format and the embedding model's record (muninn.core.format_file).
    @property
    def format_file(self) -> Path:
        return self.home / "format.json"

    @property
    def stack(self) -> Path:
        """ov.conf, the server's data and logs, stack.json."""
        return self.home / "stack"

    @property
    def server_data(self) -> Path:
        """OpenViking's data folder for the stack muninn runs: its vectors, made by one embedding model."""
        return self.stack / "data"

    @property
    def billed_tokens(self) -> Path:
        """Tokens the embedding door billed and reserved, call by call (muninn.core.billing)."""
        return self.home / "embed" / "billed.sqlite"

    @property
    def sync_manifests(self) -> Path:
        """What each sync wrote, one manifest per server, identity and area."""
        return self.home / "sync"

    @property
    def exports(self) -> Path:
        """Fact files of `export all` (`export.out`)."""
        return self._override("export", "out") or self.home / "exports"

    @property
    def search_indexes(self) -> Path:
        return self.home / "search"

    def search_index(self, account: str | None = None, user: str | None = None) -> Path:
        """One keyword index per identity: it must hold only what that reader may read (`search.index`
        overrides it for the configured one)."""
        mine = self.identity or ("default", "default")
        account, user = account or mine[0], user or mine[1]
        # The override is the configured identity's alone: another reader's index must never be the
        # same file, or it would hold what that reader cannot read.
        if (account, user) == mine and (override := self._override("search", "index")):
            return override
        return self.search_indexes / f"{account}.{user}.sqlite"

    @property
    def audit_log(self) -> Path:
        """The MCP guard's audit log (`guard.audit_log`)."""
        return self._override("guard", "audit_log") or self.home / "audit" / "mcp.jsonl"

    @property
    def redact_allowlist(self) -> Path:
        """Fingerprints of pattern hits the owner allowed (`export.allowlist`; muninn.guards.redact.allowlist)."""
        return self._override("export", "allowlist") or self.home / "redact" / "allowlist.json"

    @property
    def access_log(self) -> Path:
        return self.home / "logs" / "access.jsonl"

    @property
    def nightly_reports(self) -> Path:
        return self.home / "nightly"

    @property
    def evals(self) -> Path:
        return self.home / "evals"

    @property
    def serve(self) -> Path:
        """The warm search processes' sockets (`muninn serve`)."""
        return self.home / "serve"

    @property
    def vault_store(self) -> Path:
        """The encrypted vault (`vault.store`)."""
        return self._override("vault", "store") or self.home / "vault" / "vault.sqlite"

    @property
    def known_values_cache(self) -> Path:
        """The encrypted cache of values read from Kubernetes Secrets (`known_values.cache`)."""
        return self._override("known_values", "cache") or self.vault_store.with_name("known-values.sqlite")

    @property
    def retired_hashes(self) -> Path:
        """Salted hashes of every value the vault replaced (muninn.guards.known.retired), next to the store."""
        return self.vault_store.with_name("retired-hashes.json")

    @property
    def moved_notes(self) -> Path:
        """Each note as it was before `muninn secret move` put a vault reference in place of a value (0600)."""
        return self.home / "moved-notes"

    @property
    def backups(self) -> Path:
        """Dated tars of what cannot be rebuilt (`muninn nightly`'s backup job)."""
        return self.home / "backups"

    @property
    def restored(self) -> Path:
        """Where a restore puts local state whose own place is gone (an observation log no source names)."""
        return self.home / "restored"

    @property
    def mirror(self) -> Path:
        """The git mirror of the task/roadmap export (`nightly.mirror`)."""
        return self._override("nightly", "mirror") or self.home / "mirror"

    @property
    def approved_skills(self) -> Path:
        """Skills `muninn skills install` approved, pinned by content (read by the skills-drift job)."""
        return self.home / "skills" / "approved.json"

    @property
    def watch_state(self) -> Path:
        """What `muninn watch` last synced: each observation area's export ledger digest."""
        return self.nightly_reports / "watch.json"

    @property
    def nightly_lock(self) -> Path:
        return self.nightly_reports / "lock"

    @property
    def verify_results(self) -> Path:
        """The verify sweep's stored results (`verify.results`)."""
        return self._override("verify", "results") or self.home / "verify" / "results.sqlite"

    @property
    def global_state_lock(self) -> Path:
        """The verify sweep's lane over machine-wide switches (az, gcloud), across processes."""
        return self.home / "locks" / "global-state"

    @property
    def restic_cache(self) -> Path:
        """restic's cache for the off-host backup repository."""
        return self.home / "cache" / "restic"

    @property
    def policy(self) -> Path:
        """policy.yaml: `guard.policy`, else next to the user's muninn.yaml in the XDG config dir."""
        return self._override("guard", "policy") or paths.config_dir() / "policy.yaml"

    def known_secret_files(self, extra: Iterable[Path] = ()) -> list[Path]:
        """Every file whose values are secret, for value redaction and the leak gate alike: the vault's
        YAML, `guard.secret_files`, `export.secret_files`, every `secrets` source, then `extra` (given
        on the command line, so relative to the current directory)."""
        files = [self.resolve(f) for f in self.secret_files] + [Path(f).expanduser() for f in extra]
        return list(dict.fromkeys(files))
