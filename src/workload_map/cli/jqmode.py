"""The `jq.EvaluationPolicy` each workload is built with: `definition_policy(name, origin)`, where the run's jq
settings (`cli.jqsettings`: `--jq-mode`, `--jq-deadline`, `$WMAP_JQ_*`, the config file) put the expressions of a
definition from that origin, with a recorder of the evaluations the worker stops.

Commands resolve every workload under it (`cli.pipeline` takes it as `policy_for`), so the definition's
expressions (and its view, gang plan and patch, which evaluate under the workload's policy) run where `--jq-mode`
says, and a stopped evaluation ends the run with exit 1 (`jqsettings.raise_if_stopped`). The names of
`cli.jqsettings` are re-exported here.
"""

from __future__ import annotations

import msgspec

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
from workload_map.jq import EvaluationPolicy, JqLimitError
from workload_map.jq.errors import InProcessStopError
from workload_map.jq.policy import DEFAULT_DEADLINE, DEFAULT_MEMORY_MB
from workload_map.resolve import ResolveError

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


class _StopRecorder(msgspec.Struct, frozen=True):
    """The `stops` of a definition's policy: each evaluation that is stopped (the worker's deadline, memory cap or
    death; the compiled evaluator's step budget or output depth) goes to the run's state at once, charged `cost`
    seconds of the command's budget, and the time of every worker request is added to it (`spend`). `refuse` is
    asked before each evaluation under the policy, `admit` before a workload is resolved under it
    (`cli.pipeline.resolve_object`): a definition stopped once is not evaluated again in the command, and nothing is
    once the budget is spent."""

    definition: str
    origin: str
    cost: float
    budget: float

    def append(self, error: JqLimitError, /) -> None:
        cost = 0.0 if isinstance(error, InProcessStopError) else self.cost  # a worker stop costs a deadline
        state().jq_stops.append(Stop(self.definition, self.origin, error, cost))

    def spend(self, seconds: float) -> None:
        state().jq_seconds += seconds

    def refuse(self, expression: str) -> JqLimitError | None:
        """Why `expression` is not evaluated (the definition was stopped earlier, the budget is spent), or None."""
        run = state()
        if not run.jq_stops and run.jq_seconds < self.budget:
            return None  # `_reason`'s common case, one call less: asked 17 times per Deployment `wmap get` lists
        reason = self._reason()
        return None if reason is None else JqLimitError(expression, reason)

    def admit(self) -> None:
        """Raise `NotEvaluated` when this definition was stopped earlier in the command (it is not evaluated
        again), or when the command's budget for contained evaluation is spent."""
        reason = self._reason()
        if reason is not None:
            raise NotEvaluated(reason)

    def _reason(self) -> str | None:
        run = state()
        stops = run.jq_stops
        if not stops and run.jq_seconds < self.budget:
            return None  # the common case, asked before every evaluation (17 per Deployment in `wmap get`)
        earlier = next((s for s in stops if (s.definition, s.origin) == (self.definition, self.origin)), None)
        if earlier is not None:
            return (
                f'definition "{self.definition}" ({self.origin}) was stopped earlier in this command '
                f"({earlier.error.message}); not evaluated again"
            )
        if max(run.jq_seconds, sum(s.seconds for s in stops)) >= self.budget:
            return (
                f"the command's time budget for contained jq evaluation ({self.budget:g} s) is spent; "
                f'definition "{self.definition}" ({self.origin}) not evaluated (allow more with --jq-budget SECONDS)'
            )
        return None


def definition_policy(definition: str, origin: str) -> EvaluationPolicy:
    """The jq evaluation policy of a definition from `origin` for this run: what runs in process
    (`evaluation_mode`), the deadline and memory cap of the worker in force, and a recorder of the stops for
    `raise_if_stopped` (which also keeps a stopped definition from being evaluated again, and the command within
    its budget: `--jq-budget`, default `BUDGET_DEADLINES` deadlines, counting the time of every worker request).
    Give it to the Workload (`Workload(karta, obj, policy=...)`); its view, plan and patch evaluate under it."""
    settings = current_policy()
    mode = evaluation_mode(origin, settings.mode)
    deadline = DEFAULT_DEADLINE if settings.deadline is None else settings.deadline
    budget = settings.budget if settings.budget is not None else BUDGET_DEADLINES * deadline
    return EvaluationPolicy(
        mode,
        deadline=deadline,
        memory_mb=DEFAULT_MEMORY_MB if settings.memory_mb is None else settings.memory_mb,
        stops=_StopRecorder(definition, origin, deadline, budget),
    )
