"""Errors of the gang layer: one-line messages naming the component, pod or gang and what to do.

GangError (WorkloadMapError, ValueError)
├── NoGangInstructions       the definition has no optimizationInstructions.gangScheduling
├── InstanceIdError          an empty or unknown instance id given to a scale computation
├── MissingScaleError        a sub-group component whose subtree scale is 0 (no replica scale definition)
├── InvalidPodGroupName      group keys or names that do not make a valid Kubernetes name
├── UnsatisfiableGang        a gang that could never form (a minimum above what will ever exist before it is met)
└── ExportError              a plan that cannot be written in the requested format (e.g. more than 8 PodSets)
"""

from __future__ import annotations

from workload_map.errors import WorkloadMapError


class GangError(WorkloadMapError, ValueError):
    """Base of every error of the gang layer."""


class NoGangInstructions(GangError):  # noqa: N818 (reads as a sentence)
    """The definition says nothing about gang scheduling."""

    def __init__(self, definition: str) -> None:
        self.definition = definition
        super().__init__(
            f"definition {definition!r} has no optimizationInstructions.gangScheduling: nothing to gang-schedule; "
            f"add podGroups (or podGroup) to the definition"
        )


class InstanceIdError(GangError):
    """An empty instance id, or one the component does not have."""


class MissingScaleError(GangError):
    """A sub-group component whose pods cannot be counted."""

    def __init__(self, component: str) -> None:
        self.component = component
        super().__init__(
            f"component {component} must expose a replica scale definition (its subtree scale is 0); add a "
            f"scaleDefinition to it or to its children"
        )


class InvalidPodGroupName(GangError):  # noqa: N818 (upstream's wording)
    """Group-key values or a name that do not make a valid Kubernetes PodGroup name."""


class ExportError(GangError):
    """The plan cannot be written in the requested scheduler format."""


class UnsatisfiableGang(GangError):  # noqa: N818 (reads as a sentence)
    """A gang whose minimum can never be met: more pods or sub-groups than the spec asks for, or members counted
    that the controller creates only after others are ready. The message names the gang and the reason."""
