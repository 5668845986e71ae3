"""`EvaluationPolicy`: what runs in the calling process and the worker's limits, given explicitly by the caller.

The jq layer keeps no process-wide mode and never reads the environment: every `Document` (and `evaluate`,
`paths`, `assign`, `assign_each`, and `resolve.Workload`) takes a policy, and without one evaluates in process.
Choosing a policy (from flags, environment variables, a config file, where a definition came from) is the caller's
business; the CLI's is `workload_map.cli.jqmode`.

    from workload_map.jq import EvaluationPolicy, evaluate

    stops: list[JqLimitError] = []
    contained = EvaluationPolicy("worker", deadline=2.0, memory_mb=512, stops=stops)
    evaluate(expr, obj, policy=contained)          # a JqLimitError past 2 s or 512 MiB, also appended to `stops`
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from workload_map.errors import ArgumentTypeError, ArgumentValueError

if TYPE_CHECKING:
    from workload_map.jq.errors import JqLimitError

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MEMORY_MB",
    "INPROCESS",
    "MODES",
    "EvaluationPolicy",
    "Mode",
    "StopRecorder",
]

Mode = Literal["inprocess", "worker"]
MODES: Final[tuple[Mode, ...]] = ("inprocess", "worker")
DEFAULT_DEADLINE: Final = 10.0
"""Seconds one evaluation may run in the worker (upstream's per-evaluation timeout)."""
DEFAULT_MEMORY_MB: Final = 1024
"""The worker's address-space cap in MiB (`RLIMIT_AS`, POSIX only); 0 means no cap."""


class StopRecorder(Protocol):
    """Where a policy records the evaluations that were stopped (a `list` will do).

    A recorder may also have `refuse(expression) -> JqLimitError | None`, asked before each evaluation under the
    policy (a non-None answer is that evaluation's error, and it does not run: the CLI's refuses a definition
    stopped once, and everything once the command's budget is spent), and `spend(seconds)`, told the time each
    worker request took (the CLI's adds it to the command's budget)."""

    def append(self, error: JqLimitError, /) -> None: ...


class EvaluationPolicy:
    """What runs in the calling process (`mode`), and the limits of the jq worker, where everything else runs.

    libjq itself never runs in the calling process (an expression can crash it): every expression that is neither a
    plain path nor covered by the compiler runs in the worker, under `deadline` and `memory_mb`, in either mode.

    * `mode`: "inprocess" (the default; for definitions you trust): plain paths and the compiled evaluator run in
      process (bounded by the step budget and the output depth), the rest in the worker; or "worker" (for
      definitions you did not write): only plain paths run in process, everything else in the worker;
    * `deadline`: seconds one evaluation may run in the worker (default 10);
    * `memory_mb`: the worker's memory cap in MiB (default 1024; 0: none);
    * `stops`: optional, owned by the caller: every evaluation that is stopped (a `JqLimitError` for the worker's
      deadline, memory cap or death, an `InProcessStopError` for the compiled evaluator's step budget or output
      depth) is appended to it, so a caller can tell "cut off" from an ordinary jq error. Not part of the policy's
      equality. See `StopRecorder` for what else a recorder may do (refuse evaluations, count their time).

    Raises `ArgumentTypeError` (a `TypeError`) for a field of the wrong type, `ArgumentValueError` (a `ValueError`)
    for an unknown mode, a deadline that is not a positive number of seconds, or a negative cap.
    """

    # A plain slotted class rather than a dataclass, with the frozen dataclass's behaviour written out (keyword or
    # positional fields, equality and hash without `stops`, the repr, immutability, copy and pickle): importing
    # `dataclasses` loads `inspect` (and ast, dis, tokenize), ~5 ms of every CLI start (issue 19).
    __slots__ = ("deadline", "memory_mb", "mode", "stops")
    __match_args__ = ("mode", "deadline", "memory_mb", "stops")

    mode: Mode
    deadline: float
    memory_mb: int
    stops: StopRecorder | None

    def __init__(
        self,
        mode: Mode = "inprocess",
        deadline: float = DEFAULT_DEADLINE,
        memory_mb: int = DEFAULT_MEMORY_MB,
        stops: StopRecorder | None = None,
    ) -> None:
        if not isinstance(mode, str):
            raise ArgumentTypeError("the jq evaluation mode", f"a string ({', '.join(MODES)})", mode)
        if mode not in MODES:
            raise ArgumentValueError(f"unknown jq evaluation mode {mode!r}: use one of {', '.join(MODES)}")
        if isinstance(deadline, bool) or not isinstance(deadline, (int, float)):
            raise ArgumentTypeError("the jq deadline", "a number of seconds", deadline)
        if not (math.isfinite(deadline) and deadline > 0):
            raise ArgumentValueError(f"the jq deadline must be positive seconds, got {deadline!r}")
        if isinstance(memory_mb, bool) or not isinstance(memory_mb, int):
            raise ArgumentTypeError("the jq memory cap", "a whole number of MiB", memory_mb)
        if memory_mb < 0:
            raise ArgumentValueError(f"the jq memory cap must be whole MiB >= 0 (0: none), got {memory_mb!r}")
        if stops is not None and not callable(getattr(stops, "append", None)):
            raise ArgumentTypeError("stops", "a StopRecorder (anything with append(), e.g. a list) or None", stops)
        setattr_ = object.__setattr__
        setattr_(self, "mode", mode)
        setattr_(self, "deadline", float(deadline))
        setattr_(self, "memory_mb", memory_mb)
        setattr_(self, "stops", stops)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: an EvaluationPolicy is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: an EvaluationPolicy is frozen")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluationPolicy) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.mode, self.deadline, self.memory_mb) == (other.mode, other.deadline, other.memory_mb)

    def __hash__(self) -> int:
        return hash((self.mode, self.deadline, self.memory_mb))

    def __repr__(self) -> str:
        fields = f"mode={self.mode!r}, deadline={self.deadline!r}, memory_mb={self.memory_mb!r}"
        return f"{type(self).__qualname__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.mode, self.deadline, self.memory_mb, self.stops))

    def replace(self, **changes: Any) -> EvaluationPolicy:
        """A copy with the fields named changed (what `dataclasses.replace` did for the dataclass), validated again."""
        fields = {"mode": self.mode, "deadline": self.deadline, "memory_mb": self.memory_mb, "stops": self.stops}
        return type(self)(**{**fields, **changes})  # an unknown field: the TypeError of a wrong keyword

    def stopped(self, error: JqLimitError) -> JqLimitError:
        """Record a stop in `stops` (when given); returns the error."""
        if self.stops is not None:
            self.stops.append(error)
        return error

    def refusal(self, expression: str) -> JqLimitError | None:
        """Why `expression` is not to be evaluated under this policy at all (the recorder's `refuse`), or None."""
        refuse = getattr(self.stops, "refuse", None)
        if refuse is None:
            return None
        error: JqLimitError | None = refuse(expression)
        return error

    def spent(self, seconds: float) -> None:
        """Tell the recorder (its `spend`, when it has one) the time one worker request took."""
        spend = getattr(self.stops, "spend", None)
        if spend is not None:
            spend(seconds)


INPROCESS: Final = EvaluationPolicy()
"""The default policy: plain paths and compiled expressions in process, the rest in the worker (10 s, 1024 MiB)."""
