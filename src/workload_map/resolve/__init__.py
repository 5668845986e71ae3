"""Resolution: a Kubernetes object seen through its Karta definition (components, instances, status, write-back).

    from workload_map.resolve import Workload, resolve

    workload = Workload(karta, obj)
    workload.status.phase                      # "Running" (the primary phase)
    workload.component("worker").scales        # {"": Scale(replicas=None, min_replicas=1, max_replicas=5)}
    resolution = resolve(karta, obj)           # everything that resolves + per-component errors

See docs/resolve.md.
"""

from typing import TYPE_CHECKING, Any

from workload_map.resolve.component import Component
from workload_map.resolve.errors import (
    ComponentNotFound,
    DefinitionNotFound,
    ExtractionError,
    GVKMismatchError,
    InvalidDefinitionError,
    InvalidObjectError,
    ResolveError,
    SuspendNotSupported,
    UpdateError,
)
from workload_map.resolve.replicas import desired_replicas, min_replicas
from workload_map.resolve.resolution import Resolution, ResolvedComponent, ResolvedInstance
from workload_map.resolve.results import (
    ComponentError,
    Condition,
    FragmentedPodSpec,
    ObjectRef,
    Scale,
    WorkloadStatus,
)
from workload_map.resolve.status import primary_phase
from workload_map.resolve.workload import Workload, resolve

if TYPE_CHECKING:
    from workload_map.resolve.tree import ComponentNode, InstanceNode, WorkloadTree

# The structural tree (`Workload.tree()`) is loaded on first use of its names: a view, a plan or a status never
# needs it, and its slotted dataclasses cost ~1 ms of every start (issue 19).
_LAZY = {"ComponentNode", "InstanceNode", "WorkloadTree"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from workload_map.resolve import tree

        value = getattr(tree, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Component",
    "ComponentError",
    "ComponentNode",
    "ComponentNotFound",
    "Condition",
    "DefinitionNotFound",
    "ExtractionError",
    "FragmentedPodSpec",
    "GVKMismatchError",
    "InstanceNode",
    "InvalidDefinitionError",
    "InvalidObjectError",
    "ObjectRef",
    "Resolution",
    "ResolveError",
    "ResolvedComponent",
    "ResolvedInstance",
    "Scale",
    "SuspendNotSupported",
    "UpdateError",
    "Workload",
    "WorkloadStatus",
    "WorkloadTree",
    "desired_replicas",
    "min_replicas",
    "primary_phase",
    "resolve",
]
