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

if TYPE_CHECKING:
    from workload_map.jq import JqLimitError

__all__ = [
    "JQ_MODES",
    "JqPolicy",
    "Stop",
    "current_policy",
    "definition_policy",
    "evaluation_mode",
    "jq_options",
    "raise_if_stopped",
    "stopped_error",
]


@dataclass(frozen=True)
class _StopRecorder:
    """The `stops` of a definition's policy: each evaluation the worker stops goes to the run's state at once."""

    definition: str
    origin: str

    def append(self, error: JqLimitError, /) -> None:
        state().jq_stops.append(Stop(self.definition, self.origin, error))


def definition_policy(definition: str, origin: str) -> EvaluationPolicy:
    """The jq evaluation policy of a definition from `origin` for this run: where its expressions run
    (`evaluation_mode`), the deadline and memory cap in force, and a recorder of the worker's stops for
    `raise_if_stopped`. Give it to the Workload (`Workload(karta, obj, policy=...)`); its view, plan and patch
    evaluate under it."""
    settings = current_policy()
    return EvaluationPolicy(
        evaluation_mode(origin, settings.mode),
        deadline=DEFAULT_DEADLINE if settings.deadline is None else settings.deadline,
        memory_mb=DEFAULT_MEMORY_MB if settings.memory_mb is None else settings.memory_mb,
        stops=_StopRecorder(definition, origin),
    )
