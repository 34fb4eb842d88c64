"""Domain errors. Each carries a message that says what is wrong and how to fix it.

Errors are translated only at the edge: the CLI prints `str(err)` to stderr and exits with
`err.exit_code`; the MCP server raises a tool error. Nothing below the edge catches broadly.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Every exit code muninn uses, with its meaning; docs/cli.md's "Exit codes" table is checked
    against this (tests/test_exit_codes.py). A new meaning gets a new code, never a reused one."""

    meaning: str

    def __new__(cls, value: int, meaning: str) -> ExitCode:
        member = int.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    OK = 0, "success"
    CHECK_FAILED = 1, "a check failed (`status`, `doctor`); `guard check` denied the call"
    BAD_INPUT = 2, "bad input: config or data file, with its file and line named"
    LEAK_GATE_DROPPED = 3, "the leak gate dropped a file (export) or refused one (sync: nothing uploaded)"
    KEYRING = 4, "keyring problem (no usable backend, missing key)"
    SERVER = 5, "OpenViking error: down, 401/403 (which key, which URI), 404 (which URI)"
    STACK = 6, "local stack could not be installed or started"
    PREREQUISITE_DOWN = 7, ("a prerequisite is down (`access exec`): "
                            "`prerequisite 'vpn' is down: connect the VPN and retry`")
    REFUSED = 8, ("refused: `secret get` without a real terminal, a multi-part secret without `--part`, "
                  "a call the MCP guard denied, `init` over an existing file (named; nothing written), "
                  "`secret retire` of a value written in a secrets file, a retired secret's id "
                  "(`secret get`/`exec`/`show`, `access exec`, `verify`)")
    SYNC_INCOMPLETE = 9, "sync incomplete: a manifest file missing after wait"
    SEARCH_CONTRACT = 10, ("search: a stage broke its contract (wrong number of scores, a NaN) "
                           "or the keyword index is unreadable")
    UPGRADE_NEEDED = 11, ("the workspace needs an upgrade step muninn cannot take alone (the sentence names "
                          "the command), or was written by a newer muninn")
    WRITE_FAILED = 12, ("a file could not be written (disk full, read-only folder), with the file named; "
                        "nothing half-written is left")
    JOB_FAILED = 13, ("a nightly job could not run (it raised: its reason is in the report); "
                      "the other jobs still ran")
    BUSY = 14, "another `muninn nightly` holds the lock (the sentence names its PID)"
    VAULT_DAMAGED = 15, ("the vault store is unreadable (truncated or corrupt): restore it with `secret load` "
                         "or from a backup")
    EVAL_REGRESSED = 16, ("`muninn eval` lost to the last run of the same sealed set by more than "
                          "`--max-drop` questions at hit@k or `--max-mrr-drop` in MRR")
    MISSING_EXTRA = 17, ("a command needs an optional extra that is not installed (the sentence names it: "
                         "`pip install 'muninn[ml]'`)")
    SYNC_CONFLICT = 19, ("sync or restore kept a file whose server bytes muninn did not write (a reader's edit, "
                         "another's file): named; `--replace` overwrites it")
    MODEL_MISMATCH = 20, ("the workspace's vectors were made by another embedding model than embed.model "
                          "(both named): `muninn embed migrate` re-embeds them, or set embed.model back")
    BACKUP_REFUSED = 22, ("a backup was refused: not sealed (`--allow-unsealed` opens one made before sealing), "
                          "or a file in it names a place outside what the backup was taken from")
    RESTORE_HELD = 23, ("restore held back file(s) the leak gate refused: named, kept sealed in "
                        "<home>/backups/held/, everything else restored")
    OUTSIDE_UNAVAILABLE = 25, ("an outside memory muninn.yaml marks `required: true` is unavailable "
                               "(`status --stores`): named, with why")
    BILLED_CAP = 27, ("an embedding call was refused: it could cross embed.max_billed_tokens (used and cap "
                      "named); what was embedded is kept and a rerun resumes once the cap is raised")
    REMOTE_UNREACHABLE = 28, ("a source's remote tree (`remote: ssh://…`) could not be pulled and there is no "
                              "earlier mirror to export from (the host and ssh's reason named)")
    OFFSITE_FAILED = 29, ("the off-host backup repository could not be reached, opened or checked (restic's "
                          "reason named); nothing local was changed")
    INTERNAL = 70, ("muninn itself failed (a bug): one sentence names the error; `MUNINN_DEBUG=1` shows the "
                    "traceback")
    COMMAND_NOT_FOUND = 127, "the command given to `secret exec` or `access exec` was not found"


class MuninnError(Exception):
    """Base class. `exit_code` is part of the CLI contract (see docs/cli.md, "Exit codes")."""

    exit_code: int = ExitCode.CHECK_FAILED

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message = message
        self.fix = fix
        super().__init__(message if not fix else f"{message} ({fix})")


class ConfigError(MuninnError):
    """Bad input: a config or data file that does not validate. Names the file, the line and the key."""

    exit_code = ExitCode.BAD_INPUT

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, key: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.path, self.line, self.key = path, line, key
        # A flag's or a key's problem without a file is named by the flag or key alone.
        where = ": ".join(x for x in ((path or "") + (f":{line}" if path and line is not None else ""), key) if x)
        super().__init__(f"{where}: {message}" if where else message, fix=fix)


class CredentialError(MuninnError):
    """The keyring is unusable or a key is missing. Never carries a secret value."""

    exit_code = ExitCode.KEYRING


class ServerError(MuninnError):
    """OpenViking answered with an error, or did not answer."""

    exit_code = ExitCode.SERVER

    def __init__(self, message: str, *, status: int | None = None, uri: str | None = None,
                 fix: str | None = None, code: str | None = None) -> None:
        self.status, self.uri, self.code = status, uri, code   # code: OpenViking's, e.g. UNAVAILABLE
        super().__init__(message, fix=fix)


class ServerDown(ServerError):
    """Nothing listens where the server should be."""


class ServerSlow(ServerError):
    """The server did not answer within the call's timeout."""


class ServerBadReply(ServerError):
    """A reply that is not what the call needs (not JSON, no result, a wrong shape)."""


class ServerBusy(ServerError):
    """CONFLICT ("resource is busy"): the area is still indexing an earlier write; worth a retry."""


class AuthError(ServerError):
    """401/403: the key is wrong or lacks the right on this URI."""


class NotFound(ServerError):
    """404: the URI does not exist."""


class StackError(MuninnError):
    """The local stack could not be started, stopped or installed."""

    exit_code = ExitCode.STACK


class Refused(MuninnError):
    """A guard said no: to an agent's call (the reason goes back to it and into the audit log) or to
    a command that would show a secret where it must not."""

    exit_code = ExitCode.REFUSED
