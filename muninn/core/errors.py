"""Domain errors. Each carries a message that says what is wrong and how to fix it.

Errors are translated only at the edge: the CLI prints `str(err)` to stderr and exits with
`err.exit_code`; the MCP server raises a tool error. Nothing below the edge catches broadly.
"""

from __future__ import annotations


class MuninnError(Exception):
    """Base class. `exit_code` is part of the CLI contract (see README, "Exit codes")."""

    exit_code = 1

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.message = message
        self.fix = fix
        super().__init__(message if not fix else f"{message} ({fix})")


class ConfigError(MuninnError):
    """Bad input: a config or data file that does not validate. Names the file, the line and the key."""

    exit_code = 2

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, key: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.path, self.line, self.key = path, line, key
        where = path or "<config>"
        if line is not None:
            where += f":{line}"
        if key:
            where += f": {key}"
        super().__init__(f"{where}: {message}", fix=fix)


class CredentialError(MuninnError):
    """The keyring is unusable or a key is missing. Never carries a secret value."""

    exit_code = 4


class ServerError(MuninnError):
    """OpenViking answered with an error, or did not answer."""

    exit_code = 5

    def __init__(self, message: str, *, status: int | None = None, uri: str | None = None,
                 fix: str | None = None) -> None:
        self.status, self.uri = status, uri
        super().__init__(message, fix=fix)


class ServerDown(ServerError):
    """Nothing listens where the server should be."""


class AuthError(ServerError):
    """401/403: the key is wrong or lacks the right on this URI."""


class NotFound(ServerError):
    """404: the URI does not exist."""


class StackError(MuninnError):
    """The local stack could not be started, stopped or installed."""

    exit_code = 6
