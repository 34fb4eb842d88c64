"""The CLI's one edge: every way a command can end becomes an exit code and at most one sentence.

Typer in standalone mode draws a rich panel for a usage error and lets any other exception out as a
traceback. Here the root group runs non-standalone and everything is said the same way: `error: <what>
(<fix>)` on stderr, the code from `ExitCode`. `MUNINN_DEBUG=1` re-raises an unexpected exception, for
a bug report.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from typer._click import exceptions as click_exc
from typer._click import utils as click_utils
from typer.exceptions import Abort, Exit

from muninn.core import billing, extras
from muninn.core.errors import ExitCode, MuninnError


def say_error(message: str) -> None:
    """One `error:` line on stderr; never wrapped (a pipe or a narrow terminal keeps it one line)."""
    sys.stderr.write(f"error: {' '.join(message.split())}\n")
    sys.stderr.flush()


def usage_sentence(exc: click_exc.UsageError) -> str:
    what = exc.format_message().strip().rstrip(".")
    where = exc.ctx.command_path if exc.ctx is not None else "muninn"
    return f"{what} (see `{where} --help`)"


def run(main: Callable[..., Any], *args: Any, **kwargs: Any) -> NoReturn:
    """Run a click main non-standalone and exit the way docs/cli.md's exit-code table says."""
    kwargs["standalone_mode"] = False
    try:
        rv = main(*args, **kwargs)
    except click_exc.NoArgsIsHelpError as exc:
        # `muninn` or a group with no command: the help is the answer, on stdout.
        sys.stdout.write(exc.format_message().rstrip("\n") + "\n")
        sys.exit(ExitCode.OK)
    except click_exc.UsageError as exc:
        say_error(usage_sentence(exc))
        sys.exit(ExitCode.BAD_INPUT)
    except click_exc.ClickException as exc:   # a FileError, or a command's own ClickException
        say_error(exc.format_message())
        sys.exit(ExitCode.BAD_INPUT if exc.exit_code == 2 else exc.exit_code)
    except MuninnError as exc:
        # A refusal at the billed-token cap reaches a command as what OpenViking made of it: say the cause.
        exc = billing.refused_during_command() or exc
        say_error(str(exc))
        sys.exit(exc.exit_code)
    except Exit as exc:
        sys.exit(exc.exit_code)
    except (Abort, KeyboardInterrupt):
        say_error("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (`muninn search x | head -1`): nothing left to say to it.
        _quiet_stdout()
        sys.exit(ExitCode.OK)
    except SystemExit as exc:
        # Click answers a closed reader (EPIPE) itself, even non-standalone: it wraps both streams in
        # PacifyFlushWrapper and exits 1. A reader that went away is no failed check: exit 0, as above.
        if exc.code == 1 and _pacified():
            _quiet_stdout()
            sys.exit(ExitCode.OK)
        raise
    except ModuleNotFoundError as exc:
        # A module of an optional extra (torch, onnxruntime...): say which extra, not "a bug".
        missing = extras.missing_extra(exc)
        if missing is None:
            _bug(exc)
        say_error(str(missing))
        sys.exit(missing.exit_code)
    except Exception as exc:   # the edge: anything else is a bug, said in one sentence, never a traceback
        _bug(exc)
    # Non-standalone click returns a typer.Exit's code, else the command's return value. An ExitCode
    # (an IntEnum) is a code too; a bool a command happened to return is not.
    sys.exit(int(rv) if isinstance(rv, int) and not isinstance(rv, bool) else ExitCode.OK)


def _bug(exc: Exception) -> NoReturn:
    if os.environ.get("MUNINN_DEBUG"):
        raise exc
    first = " ".join(str(exc).split())[:300] or "(no message)"
    say_error(f"muninn failed unexpectedly: {type(exc).__name__}: {first} (this is a bug: rerun with "
              "MUNINN_DEBUG=1 for the traceback and report it)")
    sys.exit(ExitCode.INTERNAL)


def _pacified() -> bool:
    wrapper = getattr(click_utils, "PacifyFlushWrapper", None)
    return wrapper is not None and any(isinstance(stream, wrapper) for stream in (sys.stdout, sys.stderr))


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
