"""`EvaluationPolicy`: where libjq runs an evaluation and under which limits, given explicitly by the caller.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, Protocol

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
    """Where a policy records the evaluations the worker stopped (a `list` will do)."""

    def append(self, error: JqLimitError, /) -> None: ...


@dataclass(frozen=True)
class EvaluationPolicy:
    """Where libjq runs (`mode`) and, in mode "worker", the limits of one evaluation.

    * `mode`: "inprocess" (the default: fastest, no limits; for definitions you trust) or "worker" (one reused child
      process per memory cap, minimal environment, killed and replaced when an evaluation passes a limit);
    * `deadline`: seconds one evaluation may run in the worker (default 10);
    * `memory_mb`: the worker's memory cap in MiB (default 1024; 0: none);
    * `stops`: optional, owned by the caller: every evaluation the worker stops (a `JqLimitError` for the deadline
      or the memory cap) is appended to it, so a caller can tell "cut off" from an ordinary jq error. Not part of
      the policy's equality.

    The deadline and the cap apply in mode "worker" only. Raises `ValueError` for an unknown mode, a deadline that
    is not a positive number of seconds, or a negative cap.
    """

    mode: Mode = "inprocess"
    deadline: float = DEFAULT_DEADLINE
    memory_mb: int = DEFAULT_MEMORY_MB
    stops: StopRecorder | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown jq evaluation mode {self.mode!r}: use one of {', '.join(MODES)}")
        deadline = self.deadline
        number = isinstance(deadline, (int, float)) and not isinstance(deadline, bool)
        if not (number and math.isfinite(deadline) and deadline > 0):
            raise ValueError(f"the jq deadline must be positive seconds, got {deadline!r}")
        memory = self.memory_mb
        if isinstance(memory, bool) or not isinstance(memory, int) or memory < 0:
            raise ValueError(f"the jq memory cap must be whole MiB >= 0 (0: none), got {memory!r}")
        object.__setattr__(self, "deadline", float(deadline))

    def stopped(self, error: JqLimitError) -> JqLimitError:
        """Record a deadline or memory-cap stop in `stops` (when given); returns the error."""
        if self.stops is not None:
            self.stops.append(error)
        return error


INPROCESS: Final = EvaluationPolicy()
"""The default policy: libjq runs in the calling process, with no deadline and no memory cap."""
