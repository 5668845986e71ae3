"""The typed view of one workload: the single object every front end renders (docs/view.md).

Frozen dataclasses; `to_dict()` gives the JSON document (camelCase keys, `schemaVersion` first), a superset of
upstream's `DescribeView`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final, Protocol

from workload_map.model import GVK
from workload_map.resolve import ComponentError, Scale
from workload_map.resources.formula import ResourceList, is_extended_resource, is_gpu
from workload_map.resources.quantity import format_quantity, quantity_kind

__all__ = [
    "SCHEMA_VERSION",
    "ComponentView",
    "PodView",
    "Replicas",
    "Resources",
    "WorkloadIdentity",
    "WorkloadView",
    "identity_dict",
]

SCHEMA_VERSION: Final = "workloadmap.io/view/v1"
"""The `schemaVersion` of the JSON view; bumped on any incompatible change (docs/view.md)."""


@dataclass(frozen=True, slots=True)
class Resources:
    """Requested resources: every resource name exactly (`requests`), and the figures front ends show.

    - `gpus`: whole GPU devices (`nvidia.com/gpu`, `amd.com/gpu` and any configured names), rounded up;
    - `accelerators`: every other extended resource (MIG slices, TPUs, Neuron, ...) by name, never in `gpus`;
    - `cpu_millis`, `memory_bytes`: CPU in millicores and memory in bytes, rounded up.
    """

    requests: Mapping[str, Fraction] = field(default_factory=dict)
    gpus: int = 0
    cpu_millis: int = 0
    memory_bytes: int = 0
    accelerators: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, requests: Mapping[str, Fraction], gpu_names: Iterable[str] = ()) -> Resources:
        """The figures of a resource list (zero amounts dropped); `gpu_names` are extra whole-GPU names."""
        extra = tuple(gpu_names)
        kept: ResourceList = {}
        gpus: Fraction | int = 0
        accelerators: dict[str, int] = {}
        for name in sorted(requests):
            amount = requests[name]
            if not amount:
                continue
            kept[name] = amount
            if is_gpu(name, extra):
                gpus += amount
            elif is_extended_resource(name):
                accelerators[name] = _ceil(amount)
        return cls(
            requests=MappingProxyType(kept),  # read-only: one Resources may be shared by many pods
            gpus=_ceil(gpus),
            cpu_millis=_ceil(kept.get("cpu", 0), 1000),
            memory_bytes=_ceil(kept.get("memory", 0)),
            accelerators=MappingProxyType(accelerators),
        )

    @property
    def empty(self) -> bool:
        """True when nothing is requested."""
        return not self.requests

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpus": self.gpus,
            "cpuMillis": self.cpu_millis,
            "memoryBytes": self.memory_bytes,
            "accelerators": dict(self.accelerators),
            "requests": {name: format_quantity(amount, quantity_kind(name)) for name, amount in self.requests.items()},
        }


NO_RESOURCES: Final = Resources()


def _ceil(value: Fraction | int, factor: int = 1) -> int:
    """`ceil(value * factor)` (Kubernetes rounds quantities up: `Value()`, `MilliValue()`), without Fraction
    arithmetic on the hot path."""
    if isinstance(value, int):
        return value * factor
    return -((-value.numerator * factor) // value.denominator)


@dataclass(frozen=True, slots=True)
class Replicas:
    """Pod counts. `desired` is what the spec asks for; `current` (pods attributed) and `ready` (pods with
    `Ready=True`) are None in file mode, where nothing live is known."""

    desired: int = 0
    current: int | None = None
    ready: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"desired": self.desired, "current": self.current, "ready": self.ready}


@dataclass(frozen=True, slots=True)
class PodView:
    """One live pod as the view shows it.

    `reason` is set only when the pod is not ready: the `PodScheduled=False` reason (`Unschedulable`), else
    `status.reason` (`Evicted`), else a waiting container's reason (`ImagePullBackOff`, `CrashLoopBackOff`), else
    the `Ready=False` reason (`PodCompleted`, `ContainersNotReady`). `resources` is the pod's own effective request
    from its live spec. `component` is set on unclaimed pods that a component took but no instance matched.
    """

    name: str
    phase: str
    ready: bool
    node: str | None
    reason: str | None = None
    resources: Resources = NO_RESOURCES
    namespace: str = ""
    replica: str | None = None
    component: str | None = None
    errors: tuple[str, ...] = ()

    @property
    def unhealthy(self) -> bool:
        """Not ready and not finished (a Succeeded pod never counts as unhealthy)."""
        return not self.ready and self.phase != "Succeeded"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "phase": self.phase, "ready": self.ready, "node": self.node}
        if self.reason:
            out["reason"] = self.reason
        out["resources"] = self.resources.to_dict()
        if self.replica is not None:
            out["replica"] = self.replica
        if self.component is not None:
            out["component"] = self.component
        if self.errors:
            out["errors"] = list(self.errors)
        return out


@dataclass(frozen=True, slots=True)
class ComponentView:
    """A component, or one instance of a multi-instance component, with everything below it.

    `component` is the component's name in the definition; `name` is what a front end shows: the component name,
    or for an instance node the instance id (then `instance` holds it too).

    `replicas`, `resources` and `nodes` cover the whole subtree; `own_replicas` and `own_resources` only this
    node's own pods (the table's per-component row). `scale` is what the definition declares for this node, per
    replica of its parent; `replicas.desired` is the total across the workload (the scale times every ancestor's).
    """

    name: str
    component: str
    kind: GVK | None
    instance: str | None
    pod_bearing: bool
    scale: Scale | None
    replicas: Replicas
    resources: Resources
    own_replicas: Replicas
    own_resources: Resources
    nodes: tuple[str, ...] = ()
    pods: tuple[PodView, ...] = ()
    children: tuple[ComponentView, ...] = ()

    @property
    def grouping(self) -> bool:
        """A grouping row: no pods or requests of its own, children that hold everything (left out of the
        resources table)."""
        return (
            bool(self.children)
            and not self.pods
            and self.own_resources.empty
            and self.own_replicas.desired == 0
            and not self.pod_bearing
        )

    @property
    def unhealthy_pods(self) -> int:
        """Unhealthy pods in the subtree (not ready and not Succeeded)."""
        return sum(1 for _, node in self.walk() for pod in node.pods if pod.unhealthy)

    @property
    def missing_pods(self) -> int:
        """Desired pods not (or no longer) there: `desired - current`, never negative; 0 in file mode."""
        if self.replicas.current is None:
            return 0
        return max(0, self.replicas.desired - self.replicas.current)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, ComponentView]]:
        """This node and every node below it, depth first, with their depth."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.instance is not None:
            out["component"] = self.component
            out["instance"] = self.instance
        if self.kind is not None:
            out["kind"] = self.kind.kind
            out["apiVersion"] = self.kind.api_version
        out["podBearing"] = self.pod_bearing
        if self.scale is not None:
            out["scale"] = self.scale.to_dict()
        out["replicas"] = self.replicas.to_dict()
        out["resources"] = self.resources.to_dict()
        if self.children:
            out["ownReplicas"] = self.own_replicas.to_dict()
            out["ownResources"] = self.own_resources.to_dict()
        if self.nodes:
            out["nodes"] = list(self.nodes)
        if self.pods:
            out["pods"] = [pod.to_dict() for pod in self.pods]
        if self.children:
            out["children"] = [child.to_dict() for child in self.children]
        return out


class WorkloadIdentity(Protocol):
    """What names a workload and its status: a `WorkloadView`, or a front end's lighter row (`wmap get`)."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def api_version(self) -> str: ...
    @property
    def uid(self) -> str: ...
    @property
    def created_at(self) -> str | None: ...
    @property
    def definition(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def phase(self) -> str: ...
    @property
    def phases(self) -> tuple[str, ...]: ...


def identity_dict(item: WorkloadIdentity) -> dict[str, Any]:
    """The identity and status keys of the JSON view, in its order (name ... phases)."""
    return {
        "name": item.name,
        "namespace": item.namespace,
        "kind": item.kind,
        "apiVersion": item.api_version,
        "uid": item.uid,
        "createdAt": item.created_at,
        "definition": item.definition,
        "origin": item.origin,
        "phase": item.phase,
        "phases": list(item.phases),
    }


@dataclass(frozen=True, slots=True)
class WorkloadView:
    """One workload, rolled up: identity, status, the component tree with pods, totals, and what went wrong.

    `components` are the top-level components (a pod-bearing root first, named after the root component, then the
    root's children); `unclaimed_pods` are pods the workload owns that no component claims.
    """

    name: str
    namespace: str
    kind: str
    api_version: str
    definition: str
    origin: str
    phase: str
    phases: tuple[str, ...]
    file_mode: bool
    replicas: Replicas
    resources: Resources
    components: tuple[ComponentView, ...] = ()
    unclaimed_pods: tuple[PodView, ...] = ()
    errors: tuple[ComponentError, ...] = ()
    uid: str = ""
    created_at: str | None = None
    schema_version: str = SCHEMA_VERSION

    def walk(self) -> Iterator[tuple[int, ComponentView]]:
        """Every component node, depth first, with its depth (top-level components at 0)."""
        for component in self.components:
            yield from component.walk()

    def find(self, component: str, instance: str | None = None) -> ComponentView | None:
        """The node of a component (its component node), or of one of its instances when `instance` is given."""
        for _, node in self.walk():
            if node.component == component and node.instance == instance:
                return node
        return None

    @property
    def pods(self) -> list[PodView]:
        """Every attributed pod in tree order."""
        return [pod for _, node in self.walk() for pod in node.pods]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": self.schema_version,
            **identity_dict(self),
            "fileMode": self.file_mode,
            "replicas": self.replicas.to_dict(),
            "resources": self.resources.to_dict(),
            "components": [component.to_dict() for component in self.components],
            "unclaimedPods": [pod.to_dict() for pod in self.unclaimed_pods],
            "errors": [error.to_dict() for error in self.errors],
        }
