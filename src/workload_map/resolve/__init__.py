"""Resolution: a Kubernetes object seen through its Karta definition (components, instances, status, write-back).

    from workload_map.resolve import Workload, resolve

    workload = Workload(karta, obj)
    workload.status.phase                      # "Running" (the primary phase)
    workload.component("worker").scales        # {"": Scale(replicas=None, min_replicas=1, max_replicas=5)}
    resolution = resolve(karta, obj)           # everything that resolves + per-component errors

See docs/resolve.md.
"""

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
from workload_map.resolve.results import (
    ComponentError,
    Condition,
    ExtractedInstance,
    FragmentedPodSpec,
    ObjectRef,
    Resolution,
    ResolvedComponent,
    Scale,
    WorkloadStatus,
)
from workload_map.resolve.status import primary_phase
from workload_map.resolve.tree import ComponentNode, InstanceNode, WorkloadTree
from workload_map.resolve.workload import Workload, resolve

__all__ = [
    "Component",
    "ComponentError",
    "ComponentNode",
    "ComponentNotFound",
    "Condition",
    "DefinitionNotFound",
    "ExtractedInstance",
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
    "Scale",
    "SuspendNotSupported",
    "UpdateError",
    "Workload",
    "WorkloadStatus",
    "WorkloadTree",
    "primary_phase",
    "resolve",
]
