"""The jq settings of a run: `--jq-mode auto|inprocess|worker`, `--jq-deadline SECONDS`, `$WMAP_JQ_*` and the
config file, and the evaluations the jq worker stopped.

A definition's expressions are code. Those read from a cluster (`Karta` objects, origin "cluster") were written by
whoever may create a custom resource there, so by default (`auto`) they run in the jq worker process
(`workload_map.jq`, docs/jq.md "Containment") under a deadline (10 s unless `--jq-deadline`, as upstream's
per-evaluation timeout) and a memory cap; local (`--definitions`) and built-in definitions run in this process
as far as the jq compiler covers them (bounded by its step budget), and in the worker for the rest: libjq never
runs in this process. `inprocess` and `worker` choose one place for every definition.

Precedence: the flag, then `$WMAP_JQ_MODE` / `$WMAP_JQ_DEADLINE`, then the config file's
`jq-mode` / `jq-deadline`, then `auto` and the jq layer's deadline. The memory cap has no flag:
`$WMAP_JQ_MEMORY_MB`, else the jq layer's 1024 MiB.

This module is the only reader of those variables, and `auto` exists only here: the jq layer knows nothing of
origins or the environment. The root group (`cli.root`) takes the flags (`jq_options`) and `app.run` ends an
otherwise successful command with exit 1 and one `error:` line naming the definition and the limit when an
evaluation was stopped (`raise_if_stopped`), since its output is incomplete. The `jq.EvaluationPolicy` a workload is
built with is `cli.jqmode.definition_policy`; it is kept there so the root group (`wmap --help`) never imports
`workload_map.jq`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from workload_map.cli.config import JQ_MODES
from workload_map.cli.context import state
from workload_map.cli.errors import CLIError, UsageError

if TYPE_CHECKING:
    from typing import TypeVar

    import click

    from workload_map.jq import JqLimitError

    # annotations only: made at import it is ~0.1 million instructions of every start (issue 19)
    F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "JQ_MODES",
    "JqPolicy",
    "Stop",
    "current_policy",
    "evaluation_mode",
    "jq_options",
    "raise_if_stopped",
    "stopped_error",
    "store_budget",
    "store_deadline",
    "store_mode",
    "store_unflagged",
]

ENV_JQ_MODE = "WMAP_JQ_MODE"
ENV_JQ_DEADLINE = "WMAP_JQ_DEADLINE"
ENV_JQ_MEMORY = "WMAP_JQ_MEMORY_MB"
ENV_JQ_BUDGET = "WMAP_JQ_BUDGET"
UNTRUSTED_ORIGINS: frozenset[str] = frozenset({"cluster"})
_EXPRESSION_SHOWN = 60
BUDGET_DEADLINES = 3  # the default --jq-budget: this many deadlines
MAX_DEADLINE = 86400.0  # seconds: more overflows the worker's timers (1e12 was an OverflowError)


def evaluation_mode(origin: str, mode: str) -> Literal["inprocess", "worker"]:
    """Where the expressions of a definition from `origin` (`local`, `cluster`, `catalog`) run under `mode`:
    `worker` or `inprocess`. `auto` contains the cluster's definitions only."""
    if mode == "auto":
        return "worker" if origin in UNTRUSTED_ORIGINS else "inprocess"
    if mode == "worker":
        return "worker"
    if mode == "inprocess":
        return "inprocess"
    raise ValueError(f"unknown jq mode {mode!r}: use one of {', '.join(JQ_MODES)}")


class JqPolicy(msgspec.Struct, frozen=True):
    """The mode chosen for this run, the worker's deadline and memory cap (None: the jq layer's, 10 s and
    1024 MiB)."""

    mode: str = "auto"
    deadline: float | None = None
    memory_mb: int | None = None
    budget: float | None = None  # --jq-budget (None: BUDGET_DEADLINES deadlines)


def current_policy() -> JqPolicy:
    """The flag (or its environment variable), else the config file, else `auto` and the default deadline; the
    memory cap from `$WMAP_JQ_MEMORY_MB` only."""
    current = state()
    mode, deadline = current.jq_mode, current.jq_deadline
    if mode is None or deadline is None:
        config = current.config  # read only when a flag left something open
        mode = mode or config.jq_mode
        deadline = deadline if deadline is not None else config.jq_deadline
    return JqPolicy(mode or "auto", deadline, current.jq_memory_mb, current.jq_budget)


class Stop(msgspec.Struct, frozen=True):
    """One evaluation that was stopped (by the worker, or the compiled evaluator's bounds): the definition, where it
    came from, and the `JqLimitError`."""

    definition: str
    origin: str
    error: JqLimitError
    seconds: float = 0.0  # what it cost of the command's budget (the deadline): not part of equality

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stop):
            return NotImplemented
        return (self.definition, self.origin, self.error) == (other.definition, other.origin, other.error)

    def __hash__(self) -> int:
        return hash((self.definition, self.origin, self.error))


def _shown(expression: str) -> str:
    text = " ".join(expression.split())
    return text if len(text) <= _EXPRESSION_SHOWN else text[: _EXPRESSION_SHOWN - 3] + "..."


def stopped_error() -> CLIError | None:
    """The error that ends a run in which the worker stopped an evaluation (None when it stopped none)."""
    stops = state().jq_stops
    if not stops:
        return None
    first = stops[0]
    more = len(stops) - 1
    tail = f" (and {more} more stopped evaluation{'s' * (more != 1)})" if more else ""
    message = (
        f'definition "{first.definition}" ({first.origin}): {first.error.message} in '
        f"'{_shown(first.error.expression)}'{tail}"
    )
    from workload_map.jq.errors import InProcessStopError  # here: `wmap --help` never imports workload_map.jq

    if isinstance(first.error, InProcessStopError):
        hint = "the output is incomplete; the definition's expression exceeded an in-process jq bound: fix it"
    elif "worker process died" in first.error.message:
        hint = "the output is incomplete; the definition's expression crashed the jq worker: fix the expression"
    elif "memory cap" in first.error.message:
        hint = "the output is incomplete; raise the cap with WMAP_JQ_MEMORY_MB=<MiB>, or fix the expression"
    else:
        hint = "the output is incomplete; allow more time with --jq-deadline SECONDS, or fix the expression"
    return CLIError(message, hint=hint)


def raise_if_stopped() -> None:
    """Called after a command succeeded: exit 1 when an evaluation was stopped on the way."""
    error = stopped_error()
    if error is not None:
        raise error


# --- the root options -----------------------------------------------------------------------------------------


def _given(value: str | None, flag: str, env: str) -> tuple[str | None, str]:
    """The value (the flag's, else the environment variable's; None when neither is set) and where it came from,
    for messages. The environment is read here rather than by click, so a message names the variable."""
    if value is not None:
        return value, flag
    return os.environ.get(env, "").strip() or None, f"${env}"


def store_mode(value: str | None) -> None:
    """`--jq-mode` (None: not given), else `$WMAP_JQ_MODE`, into the run's state; a bad value is a usage error."""
    given, where = _given(value, "--jq-mode", ENV_JQ_MODE)
    mode = given.strip().lower() if given else None
    if mode and mode not in JQ_MODES:
        raise UsageError(f"{where} is {given!r}; use one of {', '.join(JQ_MODES)}")
    state().jq_mode = mode or None


def _seconds(given: str | None, where: str) -> float | None:
    """A positive number of seconds, at most a day (more overflows timers), or a usage error naming `where`."""
    if given is None:
        return None
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{where} is {given!r}; give a positive number of seconds (e.g. 10 or 2.5)")
    if seconds > MAX_DEADLINE:
        raise UsageError(f"{where} is {given!r}; give at most {MAX_DEADLINE:g} seconds (a day)")
    return seconds


def store_deadline(value: str | None) -> None:
    """`--jq-deadline`, else `$WMAP_JQ_DEADLINE`, and `$WMAP_JQ_MEMORY_MB`, into the run's state."""
    state().jq_deadline = _seconds(*_given(value, "--jq-deadline", ENV_JQ_DEADLINE))
    _store_memory_cap()


def store_budget(value: str | None) -> None:
    """`--jq-budget`, else `$WMAP_JQ_BUDGET`, into the run's state."""
    state().jq_budget = _seconds(*_given(value, "--jq-budget", ENV_JQ_BUDGET))


def store_unflagged() -> None:
    """What the root's jq options store when none of them is on the command line (only the environment), in the
    order click processes them: the run without click (`cli.quick`) calls this where the root group would."""
    store_mode(None)
    store_deadline(None)
    store_budget(None)


def _store_memory_cap() -> None:
    """`$WMAP_JQ_MEMORY_MB` (no flag): read with the deadline, so a bad value is a usage error up front too."""
    given = os.environ.get(ENV_JQ_MEMORY, "").strip()
    if given and not (given.isascii() and given.isdigit()):
        raise UsageError(f"${ENV_JQ_MEMORY} is {given!r}; give a whole number of MiB (e.g. 512; 0: no cap)")
    state().jq_memory_mb = int(given) if given else None


def _store_mode(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if not ctx.resilient_parsing:  # completing: never fail
        store_mode(value)


def _store_deadline(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if not ctx.resilient_parsing:
        store_deadline(value)


def _store_budget(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if not ctx.resilient_parsing:
        store_budget(value)


def _complete_mode(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [mode for mode in JQ_MODES if mode.startswith(incomplete)]


def jq_options(f: F) -> F:
    """`--jq-mode`, `--jq-deadline` and `--jq-budget` on the root command (their values go to the run's state)."""
    import click  # here: the run without click (`cli.quick`) imports this module, never the root group

    f = click.option(
        "--jq-budget",
        default=None,
        metavar="SECONDS",
        expose_value=False,
        callback=_store_budget,
        help="How much time the jq worker's stopped evaluations may cost one command before no more workloads "
        f"are evaluated in it [default: {BUDGET_DEADLINES} deadlines; ${ENV_JQ_BUDGET}].",
    )(f)
    f = click.option(
        "--jq-deadline",
        default=None,
        metavar="SECONDS",
        expose_value=False,
        callback=_store_deadline,
        help="How long one jq evaluation may run in the worker before it is stopped [default: 10; "
        f"${ENV_JQ_DEADLINE}].",
    )(f)
    return click.option(
        "--jq-mode",
        default=None,
        metavar="[" + "|".join(JQ_MODES) + "]",
        expose_value=False,
        callback=_store_mode,
        shell_complete=_complete_mode,
        help="Where definitions' jq expressions run: auto (cluster definitions in a worker process with a "
        f"deadline, local and built-in ones in process), inprocess, or worker [default: auto; ${ENV_JQ_MODE}].",
    )(f)
