"""Exit codes, the CLI's error type, and the one place that turns an exception into `error: ...` and an exit code.

Commands raise `CLIError` (or a subclass naming the exit code) with a one-line message and an optional hint;
`report_exception` prints it on stderr as

    error: <message>
    hint: <hint>

and returns the exit code. Anything else that escapes a command is mapped here too (click usage errors, files that
cannot be read, definitions that cannot be loaded, Ctrl-C, a closed pipe), so no traceback reaches the user unless
`--debug` asks for one. Exit codes follow upstream `kli` (kli-cli.md §1.4); they are listed in `wmap --help`.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

from workload_map.errors import WorkloadMapError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_WORKLOAD_NOT_FOUND = 3
EXIT_NO_DEFINITION = 4
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

EXIT_CODES_HELP = """\
Exit codes:
  0  success
  1  error (a file that cannot be read, an invalid definition, a cluster error,
     a stopped jq evaluation, a partial result: what could be read is still shown)
  2  usage (a bad flag or argument, a manifest that is not YAML or has no kind)
  3  workload not found
  4  no definition covers the workload's type"""


class CLIError(WorkloadMapError):
    """An error the user can act on: a one-line message, an optional hint, and the exit code."""

    exit_code: int = EXIT_ERROR

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CLIError):
    """A bad flag, argument or input shape (exit 2)."""

    exit_code = EXIT_USAGE


class NoDefinition(CLIError):  # noqa: N818 (reads as the condition it reports)
    """No definition covers the workload's type, or no definitions are loaded at all (exit 4)."""

    exit_code = EXIT_NO_DEFINITION


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return " ".join(lines) if lines else ""


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _classify(exc: BaseException) -> tuple[str, str | None, int]:
    """(message, hint, exit code) of any exception that reaches the top."""
    if isinstance(exc, CLIError):
        return exc.message, exc.hint, exc.exit_code
    # click's exceptions are only looked for when click was imported: a run that never loaded it (`describe -f`
    # on the quick path, `cli.quick`) cannot have raised one, and importing it here would cost ~10 ms.
    click = sys.modules.get("click")
    if click is None:
        if isinstance(exc, KeyboardInterrupt):
            return "interrupted", None, EXIT_INTERRUPTED
        return _classify_library(exc)
    if isinstance(exc, click.exceptions.UsageError):
        hint = None
        if exc.ctx is not None:
            hint = f'run "{exc.ctx.command_path} --help" for usage'
        return _lower_first(_first_line(exc.format_message())).rstrip("."), hint, EXIT_USAGE
    if isinstance(exc, click.exceptions.ClickException):
        return _lower_first(_first_line(exc.format_message())), None, exc.exit_code or EXIT_ERROR
    if isinstance(exc, (KeyboardInterrupt, click.exceptions.Abort)):
        return "interrupted", None, EXIT_INTERRUPTED
    return _classify_library(exc)


def _classify_library(exc: BaseException) -> tuple[str, str | None, int]:
    """(message, hint, exit code) of an exception that is neither ours (`CLIError`) nor click's."""
    # Imported here, not at the top: workload_map.model (PyYAML, msgspec) costs ~30 ms, and this module is loaded
    # by the root group, so `wmap --help` would pay for it.
    from workload_map.model import DefinitionError, DocumentError

    if isinstance(exc, DocumentError):
        return str(exc), None, EXIT_USAGE
    if isinstance(exc, DefinitionError):
        return str(exc), 'run "wmap validate FILE" to see every finding', EXIT_ERROR
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"{where}{exc.strerror or exc}", None, EXIT_ERROR
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply", None, EXIT_ERROR
    name = type(exc).__name__
    return (
        f"internal error: {name}: {_first_line(str(exc))}",
        "this is a bug in wmap; rerun with --debug for the traceback and report it",
        EXIT_ERROR,
    )


def report_exception(exc: BaseException, *, debug: bool = False, stderr: IO[str] | None = None) -> int:
    """Print `exc` as `error: ...` (and `hint: ...`) on stderr, with the traceback under `--debug`; the exit code."""
    err: Any = stderr if stderr is not None else sys.stderr
    if isinstance(exc, BrokenPipeError):
        # `wmap describe ... | head`: the reader left; say nothing, exit as a process killed by SIGPIPE would.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    message, hint, code = _classify(exc)
    from workload_map.cli.safe import MESSAGE_LIMIT, safe_text  # on the way out only (issue 19: start-up)

    try:
        if debug and not isinstance(exc, KeyboardInterrupt):
            import traceback  # only for --debug (it imports textwrap, linecache, ...)

            traceback.print_exception(type(exc), exc, exc.__traceback__, file=err)
        # one line each, whatever the message holds (a jq error, a name from a cluster Karta): cli.safe
        err.write(f"error: {safe_text(message, MESSAGE_LIMIT)}\n")
        if hint:
            err.write(f"hint: {safe_text(hint, MESSAGE_LIMIT)}\n")
        err.flush()
    except (BrokenPipeError, ValueError):  # stderr closed as well
        pass
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
