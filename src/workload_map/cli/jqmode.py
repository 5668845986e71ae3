"""The `jq.EvaluationPolicy` each workload is built with: `definition_policy(name, origin)`, where the run's jq
settings (`cli.jqsettings`: `--jq-mode`, `--jq-deadline`, `$WMAP_JQ_*`, the config file) put the expressions of a
definition from that origin, with a recorder of the evaluations the worker stops.

Commands resolve every workload under it (`cli.pipeline` takes it as `policy_for`), so the definition's
expressions (and its view, gang plan and patch, which evaluate under the workload's policy) run where `--jq-mode`
says, and a stopped evaluation ends the run with exit 1 (`jqsettings.raise_if_stopped`). The names of
`cli.jqsettings` are re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workload_map.cli.context import state
from workload_map.cli.jqsettings import (
    BUDGET_DEADLINES,
    JQ_MODES,
    JqPolicy,
    Stop,
    current_policy,
    evaluation_mode,
    jq_options,
    raise_if_stopped,
    stopped_error,
)
from workload_map.jq import EvaluationPolicy
from workload_map.jq.policy import DEFAULT_DEADLINE, DEFAULT_MEMORY_MB
from workload_map.resolve import ResolveError

if TYPE_CHECKING:
    from workload_map.jq import JqLimitError

__all__ = [
    "JQ_MODES",
    "JqPolicy",
    "NotEvaluated",
    "Stop",
    "current_policy",
    "definition_policy",
    "evaluation_mode",
    "jq_options",
    "raise_if_stopped",
    "stopped_error",
]


class NotEvaluated(ResolveError):  # noqa: N818 (reads as what happened to the workload)
    """A workload whose definition is not evaluated (again) in this command: it was stopped once already, or the
    command's time budget for contained evaluation is spent. The workload is reported as not resolved."""


@dataclass(frozen=True)
class _StopRecorder:
    """The `stops` of a definition's policy: each evaluation the worker stops (the deadline, the memory cap, a
    death) goes to the run's state at once, charged `cost` seconds of the command's budget; `admit()` is asked
    before a workload is resolved under the policy (`cli.pipeline.resolve_object`)."""

    definition: str
    origin: str
    cost: float
    budget: float | None  # None: in process, no budget

    def append(self, error: JqLimitError, /) -> None:
        state().jq_stops.append(Stop(self.definition, self.origin, error, self.cost))

    def admit(self) -> None:
        """Raise `NotEvaluated` when this definition was stopped earlier in the command (it is not evaluated
        again), or when the command's budget for contained evaluation is spent."""
        stops = state().jq_stops
        earlier = next((s for s in stops if (s.definition, s.origin) == (self.definition, self.origin)), None)
        if earlier is not None:
            raise NotEvaluated(
                f'definition "{self.definition}" ({self.origin}) was stopped earlier in this command '
                f"({earlier.error.message}); not evaluated again"
            )
        if self.budget is not None and sum(s.seconds for s in stops) >= self.budget:
            raise NotEvaluated(
                f"the command's time budget for contained jq evaluation ({self.budget:g} s) is spent; "
                f'definition "{self.definition}" ({self.origin}) not evaluated (allow more with --jq-budget SECONDS)'
            )


def definition_policy(definition: str, origin: str) -> EvaluationPolicy:
    """The jq evaluation policy of a definition from `origin` for this run: where its expressions run
    (`evaluation_mode`), the deadline and memory cap in force, and a recorder of the worker's stops for
    `raise_if_stopped` (which also keeps a stopped definition from being evaluated again, and the command within
    its budget: `--jq-budget`, default `BUDGET_DEADLINES` deadlines). Give it to the Workload (`Workload(karta,
    obj, policy=...)`); its view, plan and patch evaluate under it."""
    settings = current_policy()
    mode = evaluation_mode(origin, settings.mode)
    deadline = DEFAULT_DEADLINE if settings.deadline is None else settings.deadline
    budget = settings.budget if settings.budget is not None else BUDGET_DEADLINES * deadline
    return EvaluationPolicy(
        mode,
        deadline=deadline,
        memory_mb=DEFAULT_MEMORY_MB if settings.memory_mb is None else settings.memory_mb,
        stops=_StopRecorder(definition, origin, deadline, budget if mode == "worker" else None),
    )
