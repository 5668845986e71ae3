"""Per-invocation state every command shares: `--debug`, colour, the config file, the jq mode, and the warnings to
print.

Warnings are collected while a command runs and printed on stderr (`warning: <message>`) after its output, so a
long tree cannot scroll them away (as upstream's newest `kli` does); an error line, if any, comes last.

The click commands read this state (`state()`); the helpers they call do not: what they want to warn about goes to
the `Reporter` they are given (the command passes `state()`, which is one).
"""

from __future__ import annotations

import os
import sys
from _thread import get_ident  # a thread's id without importing threading at start-up (a builtin module)
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

import msgspec

from workload_map.cli.config import Config, load_config
from workload_map.cli.errors import CLIError

if TYPE_CHECKING:  # for annotations only: a Protocol class is ~0.3 million instructions to make (issue 19)
    from typing import Protocol

    class Reporter(Protocol):
        """Where a helper sends what deserves a warning (printed on stderr after the command's output); `State` is
        one."""

        def warn(self, message: str) -> None: ...


class State(msgspec.Struct):
    """What the root command's options and the environment decided for this run."""

    debug: bool = False
    no_color: bool = False
    config_path: str | None = None
    jq_mode: str | None = None  # --jq-mode / $WMAP_JQ_MODE (None: the config file's, else auto); cli.jqmode
    jq_deadline: float | None = None  # --jq-deadline / $WMAP_JQ_DEADLINE
    jq_memory_mb: int | None = None  # $WMAP_JQ_MEMORY_MB (None: the jq layer's 1024 MiB)
    jq_budget: float | None = None  # --jq-budget / $WMAP_JQ_BUDGET (None: 3 deadlines); cli.jqmode
    jq_stops: list[Any] = msgspec.field(default_factory=list)  # evaluations that were stopped (jqmode.Stop)
    jq_seconds: float = 0.0  # time the jq worker's requests took, for --jq-budget (cli.jqmode)
    warnings: list[str] = msgspec.field(default_factory=list)
    # inputs that could not be read: the run ends with exit 1
    incomplete: list[str] = msgspec.field(default_factory=list)
    _config: Config | None = None
    _scopes: dict[int, str] = msgspec.field(default_factory=dict)  # thread id -> what its warnings are about (`scope`)

    # --- output ---------------------------------------------------------------------------------------------

    @property
    def stdout(self) -> IO[str]:
        return sys.stdout

    @property
    def stderr(self) -> IO[str]:
        return sys.stderr

    def color(self, stream: IO[str] | None = None) -> bool:
        """Colour only on a terminal: never with `--no-color`, `NO_COLOR` or `TERM=dumb`; `FORCE_COLOR` forces it."""
        if self.no_color or os.environ.get("NO_COLOR"):
            return False
        if os.environ.get("FORCE_COLOR"):
            return True
        if os.environ.get("TERM") == "dumb":
            return False
        target: Any = stream if stream is not None else sys.stdout
        try:
            return bool(target.isatty())
        except (AttributeError, ValueError):
            return False

    def width(self, stream: IO[str] | None = None) -> int:
        """The width to lay text out in: the terminal's (at least 60), else `$COLUMNS`, else 80."""
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit() and int(columns) > 0:
            return max(40, int(columns))
        target: Any = stream if stream is not None else sys.stdout
        try:
            if target.isatty():
                return max(60, os.get_terminal_size(target.fileno()).columns)
        except (AttributeError, ValueError, OSError):
            pass
        return 80

    # --- messages -------------------------------------------------------------------------------------------

    def warn(self, message: str) -> None:
        """A warning, printed on stderr after the command's output; inside `scope(prefix)`, in that thread, it
        starts with the prefix."""
        prefix = self._scopes.get(get_ident())
        if prefix is not None:
            message = f"{prefix}: {message}"
        if message not in self.warnings:
            self.warnings.append(message)

    @contextmanager
    def scope(self, prefix: str) -> Iterator[None]:
        """Every warning this thread gives inside the block names `prefix` first (`cluster prod-a`: a
        multi-cluster command asks each cluster in a thread of its own, `cli.clusters`)."""
        ident = get_ident()
        outer = self._scopes.get(ident)
        self._scopes[ident] = prefix if outer is None else f"{outer}: {prefix}"
        try:
            yield
        finally:
            if outer is None:
                del self._scopes[ident]
            else:
                self._scopes[ident] = outer

    def partial(self, message: str) -> None:
        """A part of the input that could not be read (a bad document of a stream): a warning now, and the command
        ends with exit 1 once the rest is printed (`raise_if_incomplete`)."""
        self.warn(message)
        self.incomplete.append(message)

    def raise_if_incomplete(self) -> None:
        """Called after a command succeeded: exit 1 when part of its input could not be read (`partial`)."""
        if self.incomplete:
            count = len(self.incomplete)
            raise CLIError(
                f"{count} input document{'s' * (count != 1)} or file{'s' * (count != 1)} could not be read; "
                "the output shows the others",
                hint="fix the inputs named in the warnings above",
            )

    def note(self, message: str) -> None:
        """A notice for the person at the terminal (stderr, printed now, no prefix)."""
        from workload_map.cli.safe import MESSAGE_LIMIT, safe_lines  # only to print (issue 19: start-up)

        self.stderr.write(safe_lines(message.rstrip("\n"), MESSAGE_LIMIT) + "\n")
        self.stderr.flush()

    def flush_warnings(self) -> None:
        pending, self.warnings = self.warnings, []
        if not pending:
            return
        from workload_map.cli.safe import MESSAGE_LIMIT, safe_text  # only when there is one (issue 19: start-up)

        for message in pending:
            self.stderr.write(f"warning: {safe_text(message, MESSAGE_LIMIT)}\n")  # one line: cli.safe
        self.stderr.flush()

    # --- configuration --------------------------------------------------------------------------------------

    @property
    def config(self) -> Config:
        """The config file (`--config`, `$WMAP_CONFIG`, `~/.config/wmap/config.yaml`), read on first use only, so
        help, completion and commands without defaults never read it (and a broken one cannot block them)."""
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config


_STATE = State()


def state() -> State:
    """The state of the current invocation."""
    return _STATE


def reset(**values: Any) -> State:
    """A fresh state for a new invocation (tests run several in one process)."""
    global _STATE
    _STATE = State(**values)
    return _STATE
