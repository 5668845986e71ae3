"""The typed view of one workload: the single object every front end renders (docs/view.md).

Frozen msgspec Structs. The JSON document (camelCase keys, `schemaVersion` first, a superset of upstream's
`DescribeView`) is declared once, by the `*Document` Structs below: `to_document()` builds one from the view,
`to_dict()` is `msgspec.to_builtins` of it, and `workload_map.view.json_schema()` is generated from them. `Replicas`
is its own JSON form; the other types hold what the JSON leaves out or writes differently (exact `Fraction`
requests, a pod's namespace, a node's `GVK`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Annotated, Any, Final, Protocol

import msgspec
from msgspec import UNSET, Meta, UnsetType

from workload_map.model import GVK
from workload_map.resolve import ComponentError, Scale
from workload_map.resolve.results import given
from workload_map.resources import quantity
from workload_map.resources.formula import ResourceList, is_extended_resource, is_gpu
from workload_map.resources.quantity import format_quantity, quantity_kind

__all__ = [
    "SCHEMA_VERSION",
    "ComponentView",
    "ComponentViewDocument",
    "PodView",
    "PodViewDocument",
    "Replicas",
    "Resources",
    "ResourcesDocument",
    "WorkloadIdentity",
    "WorkloadView",
    "WorkloadViewDocument",
    "identity_dict",
]

_Count = Annotated[int, Meta(ge=0)]

SCHEMA_VERSION: Final = "workloadmap.io/view/v1"
"""The `schemaVersion` of the JSON view; bumped on any incompatible change (docs/view.md)."""


class Resources(msgspec.Struct, frozen=True):
    """Requested resources: every resource name exactly (`requests`), and the figures front ends show.

    - `gpus`: whole GPU devices (`nvidia.com/gpu`, `amd.com/gpu` and any configured names), rounded up;
    - `accelerators`: every other extended resource (MIG slices, TPUs, Neuron, ...) by name, never in `gpus`;
    - `cpu_millis`, `memory_bytes`: CPU in millicores and memory in bytes, rounded up.
    """

    requests: Mapping[str, Fraction] = msgspec.field(default_factory=dict)
    gpus: int = 0
    cpu_millis: int = 0
    memory_bytes: int = 0
    accelerators: Mapping[str, int] = msgspec.field(default_factory=dict)

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

    def to_document(self) -> ResourcesDocument:
        return ResourcesDocument(
            gpus=self.gpus,
            cpu_millis=self.cpu_millis,
            memory_bytes=self.memory_bytes,
            accelerators=dict(self.accelerators),
            requests={name: format_quantity(amount, quantity_kind(name)) for name, amount in self.requests.items()},
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class ResourcesDocument(msgspec.Struct, frozen=True, rename="camel"):
    """Requested resources. All five keys are always present; zero amounts are left out of requests and
    accelerators."""

    gpus: Annotated[_Count, Meta(description="Whole GPU devices (nvidia.com/gpu, amd.com/gpu, ...), rounded up.")]
    cpu_millis: Annotated[_Count, Meta(description="CPU in millicores, rounded up.")]
    memory_bytes: Annotated[_Count, Meta(description="Memory in bytes, rounded up.")]
    accelerators: Annotated[
        dict[str, _Count],
        Meta(description="Every other extended resource (MIG slices, TPUs, Neuron, ...) by name; never in gpus."),
    ]
    # `quantity.QuantityString` is made when msgspec first resolves this annotation (a decode or the schema), not
    # when this module is imported: its pattern is compiled then (issue 19)
    requests: Annotated[
        dict[str, quantity.QuantityString],
        Meta(description="Every requested resource by name, as a canonical quantity."),
    ]


def _builtins(document: msgspec.Struct) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(document)
    return out


NO_RESOURCES: Final = Resources()


def _ceil(value: Fraction | int, factor: int = 1) -> int:
    """`ceil(value * factor)` (Kubernetes rounds quantities up: `Value()`, `MilliValue()`), without Fraction
    arithmetic on the hot path."""
    if isinstance(value, int):
        return value * factor
    return -((-value.numerator * factor) // value.denominator)


class Replicas(msgspec.Struct, frozen=True):
    """Pod counts. `desired` is what the spec asks for; `current` (pods attributed) and `ready` (pods with
    `Ready=True`) are None (JSON null) in file mode, where nothing live is known."""

    desired: Annotated[int, Meta(ge=0, description="The pods the spec asks for.")] = 0
    current: Annotated[int | None, Meta(description="Pods attributed; null in file mode.")] = None
    ready: Annotated[int | None, Meta(description="Pods with Ready=True; null in file mode.")] = None

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self)


class PodView(msgspec.Struct, frozen=True):
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

    def to_document(self) -> PodViewDocument:
        return PodViewDocument(
            name=self.name,
            phase=self.phase,
            ready=self.ready,
            node=self.node,
            reason=self.reason or UNSET,
            resources=self.resources.to_document(),
            replica=given(self.replica),
            component=given(self.component),
            errors=list(self.errors),
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class PodViewDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """A live pod (the pod's namespace is the workload's, so it is not repeated)."""

    name: str
    phase: Annotated[str, Meta(description="status.phase; Pending when the pod has none yet.")]
    ready: Annotated[bool, Meta(description="The Ready condition is True.")]
    node: Annotated[str | None, Meta(description="spec.nodeName; null while unscheduled.")]
    reason: Annotated[str, Meta(description="Why the pod is not ready (only when it is not).")] | UnsetType = UNSET
    resources: Annotated[ResourcesDocument, Meta(description="The pod's own effective request, from its spec.")]
    replica: Annotated[str, Meta(description="The replica key, when a replicaSelector applies.")] | UnsetType = UNSET
    component: (
        Annotated[str, Meta(description="On an unclaimed pod: the component that took it (no instance matched).")]
        | UnsetType
    ) = UNSET
    errors: Annotated[list[str], Meta(description="What could not be read from the pod.")] = []


class ComponentView(msgspec.Struct, frozen=True):
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

    def to_document(self) -> ComponentViewDocument:
        instance = self.instance is not None
        kind = self.kind
        return ComponentViewDocument(
            name=self.name,
            component=self.component if instance else UNSET,
            instance=given(self.instance),
            kind=kind.kind if kind is not None else UNSET,
            api_version=kind.api_version if kind is not None else UNSET,
            pod_bearing=self.pod_bearing,
            scale=given(self.scale),
            replicas=self.replicas,
            resources=self.resources.to_document(),
            own_replicas=self.own_replicas if self.children else UNSET,
            own_resources=self.own_resources.to_document() if self.children else UNSET,
            nodes=list(self.nodes),
            pods=[pod.to_document() for pod in self.pods],
            children=[child.to_document() for child in self.children],
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class ComponentViewDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """A component, or one instance of a multi-instance component, with everything below it. replicas, resources
    and nodes cover the subtree."""

    name: Annotated[str, Meta(description="The component name, or the instance id on an instance node.")]
    component: Annotated[str, Meta(description="On an instance node: the component.")] | UnsetType = UNSET
    instance: Annotated[str, Meta(description="On an instance node: the instance id.")] | UnsetType = UNSET
    kind: Annotated[str, Meta(description="The component's kind; absent on a logical component.")] | UnsetType = UNSET
    api_version: Annotated[str, Meta(description="The apiVersion of kind.")] | UnsetType = UNSET
    pod_bearing: Annotated[bool, Meta(description="The component declares a pod spec.")]
    scale: (
        Annotated[Scale, Meta(description="The scale the definition declares, per replica of the parent.")] | UnsetType
    ) = UNSET
    replicas: Annotated[Replicas, Meta(description="The subtree's pods: desired, current, ready.")]
    resources: Annotated[ResourcesDocument, Meta(description="The subtree's requests.")]
    own_replicas: (
        Annotated[Replicas, Meta(description="This node's own pods (only on a node with children).")] | UnsetType
    ) = UNSET
    own_resources: (
        Annotated[ResourcesDocument, Meta(description="This node's own requests (only on a node with children).")]
        | UnsetType
    ) = UNSET
    nodes: Annotated[list[str], Meta(description="The distinct nodes the subtree's pods run on, sorted.")] = []
    pods: Annotated[list[PodViewDocument], Meta(description="This node's own pods, by name.")] = []
    children: list[ComponentViewDocument] = []


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


class WorkloadView(msgspec.Struct, frozen=True):
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
    # why the primary phase (the status fields behind the mapping that gave it) and which mapping it was
    reason: str | None = None
    reason_source: str | None = None

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

    def to_document(self) -> WorkloadViewDocument:
        return WorkloadViewDocument(
            schema_version=self.schema_version,
            name=self.name,
            namespace=self.namespace,
            kind=self.kind,
            api_version=self.api_version,
            uid=self.uid,
            created_at=self.created_at,
            definition=self.definition,
            origin=self.origin,
            phase=self.phase,
            phases=list(self.phases),
            reason=self.reason,
            reason_source=self.reason_source,
            file_mode=self.file_mode,
            replicas=self.replicas,
            resources=self.resources.to_document(),
            components=[component.to_document() for component in self.components],
            unclaimed_pods=[pod.to_document() for pod in self.unclaimed_pods],
            errors=list(self.errors),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (`schemaVersion: workloadmap.io/view/v1`), plain dicts and lists."""
        return _builtins(self.to_document())


class WorkloadViewDocument(msgspec.Struct, frozen=True, rename="camel"):
    """One workload rolled up: identity, status, the component tree with pods, totals, and what went wrong."""

    schema_version: str
    name: str
    namespace: str
    kind: str
    api_version: str
    uid: Annotated[str, Meta(description='metadata.uid; "" when absent (a manifest).')]
    created_at: Annotated[str | None, Meta(description="metadata.creationTimestamp; null when absent.")]
    definition: Annotated[str, Meta(description="The Karta definition used.")]
    origin: Annotated[str, Meta(description="Where the definition came from: catalog, cluster or local.")]
    phase: Annotated[str, Meta(description="The primary phase.")]
    phases: Annotated[list[str], Meta(description="The primary phase first, then the other matched phases.")]
    reason: Annotated[
        str | None,
        Meta(
            description="Why the primary phase: the status fields behind the mapping that gave it (conditions, the "
            "phase field, the fields its expression reads), then the status message; null when nothing matched."
        ),
    ]
    reason_source: Annotated[
        str | None,
        Meta(
            description="The mapping that gave the primary phase, e.g. "
            "statusDefinition.statusMappings.failed[2]; null when nothing matched."
        ),
    ]
    file_mode: Annotated[bool, Meta(description="Built without pods: current and ready are null.")]
    replicas: Annotated[Replicas, Meta(description="The sum over the top-level components.")]
    resources: Annotated[ResourcesDocument, Meta(description="The sum over the top-level components.")]
    components: Annotated[list[ComponentViewDocument], Meta(description="The top-level components.")]
    unclaimed_pods: Annotated[
        list[PodViewDocument], Meta(description="Owned pods no component (or no instance) claims, by name.")
    ]
    errors: Annotated[list[ComponentError], Meta(description="Parts that could not be resolved or counted.")]
