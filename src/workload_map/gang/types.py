"""The gang plan's result types: `GangPlan` and its gangs, roles, sub-groups, topologies and pod memberships.

Frozen msgspec Structs; `workload_map.gang.plan` builds them and every export (`workload_map.gang.exports`) reads
them. The JSON plan (`schemaVersion: workloadmap.io/gang/v2`) is declared once, by the `*Document` Structs below:
`to_document()` builds one, `to_dict()` is `msgspec.to_builtins` of it and `workload_map.gang.json_schema()` is
generated from them. `Topology` is its own JSON form; the other types hold what the JSON leaves out or writes
differently (a role's pod template, exact `Fraction` requests, a gang's template name and split keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, Meta, UnsetType

from workload_map.errors import ArgumentTypeError
from workload_map.gang.scale import ScaleMode
from workload_map.gang.summary import GangFormat
from workload_map.resolve import ObjectRef
from workload_map.resolve.results import ObjectRefDocument, given
from workload_map.resources import ResourceList, format_quantity, quantity_kind
from workload_map.resources.quantity import QuantityString

__all__ = [
    "SCHEMA_VERSION",
    "Gang",
    "GangDocument",
    "GangPlan",
    "GangPlanDocument",
    "GangRole",
    "GangRoleDocument",
    "PodMembership",
    "PodMembershipDocument",
    "SubGroupPlan",
    "SubGroupPlanDocument",
    "Topology",
    "format_resources",
]

_Count = Annotated[int, Meta(ge=0)]
_Quantities = Annotated[dict[str, QuantityString], Meta(description="Amounts by resource name, as quantities.")]


def _builtins(document: msgspec.Struct) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(document)
    return out


SCHEMA_VERSION: Final = "workloadmap.io/gang/v2"
"""The `schemaVersion` of `GangPlan.to_dict()`."""


class Topology(msgspec.Struct, frozen=True, omit_defaults=True):
    """A topology constraint: the topology (KAI Topology object) and the required / preferred level (node label),
    each None (left out of the JSON) when not set."""

    topology: Annotated[str, Meta(description="The KAI Topology object.")]
    required_level: Annotated[str | None, Meta(description="The node label the pods must share.")] = msgspec.field(
        default=None, name="requiredTopologyLevel"
    )
    preferred_level: Annotated[str | None, Meta(description="The node label the pods should share.")] = msgspec.field(
        default=None, name="preferredTopologyLevel"
    )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self)


class GangRole(msgspec.Struct, frozen=True):
    """The pods of one (component, instance) in one gang: `min_count` of them are needed, `count` are asked for.

    `requests` are one pod's (None when they cannot be read, see the plan's notes); `template` is the pod template
    (PodTemplateSpec) the spec gives, or one built from a fragmented spec, or None. The template is not part of the
    JSON, nor of equality, hashing or repr.
    """

    name: str
    component: str
    instance: str
    min_count: int
    count: int
    requests: ResourceList | None = None
    template: dict[str, Any] | None = None

    def _compared(self) -> tuple[Any, ...]:
        return (self.name, self.component, self.instance, self.min_count, self.count, self.requests)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, GangRole)
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        return (
            f"GangRole(name={self.name!r}, component={self.component!r}, instance={self.instance!r}, "
            f"min_count={self.min_count!r}, count={self.count!r}, requests={self.requests!r})"
        )

    def to_document(self) -> GangRoleDocument:
        return GangRoleDocument(
            name=self.name,
            component=self.component,
            instance=self.instance,
            min_count=self.min_count,
            count=self.count,
            requests=format_resources(self.requests) if self.requests is not None else UNSET,
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class GangRoleDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """The pods of one (component, instance) in one gang."""

    name: Annotated[str, Meta(description="A DNS label: the component, or component-instance.")]
    component: str
    instance: Annotated[str, Meta(description='The instance id ("" for a single-instance component).')]
    min_count: Annotated[_Count, Meta(description="The pods of this role the gang needs.")]
    count: Annotated[_Count, Meta(description="The pods of this role the spec asks for.")]
    requests: (
        Annotated[_Quantities, Meta(description="One pod's requests; absent when they cannot be read (see notes).")]
        | UnsetType
    ) = UNSET


class SubGroupPlan(msgspec.Struct, frozen=True):
    """One node of a gang's tree: the pods of `component` (or any descendant), of one `instance` and `replica`
    when the tree splits there.

    A leaf requires `min_member` pods; a parent (a node other nodes name as `parent`) requires `min_sub_group` of
    its children instead (never both, as KAI requires). `count` is the pods the spec asks for under it, `roles`
    (leaves) who they are. `deferred` says why the node's pods are created only later (then it is not required
    until they exist); `pods` names its pods (plans with pods only).
    """

    name: str
    component: str
    min_member: int | None = None
    min_sub_group: int | None = None
    parent: str | None = None
    instance: str | None = None
    replica: str | None = None
    count: int = 0
    roles: tuple[GangRole, ...] = ()
    deferred: str | None = None
    topology: Topology | None = None
    pods: tuple[str, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.min_sub_group is None

    def to_document(self) -> SubGroupPlanDocument:
        return SubGroupPlanDocument(
            name=self.name,
            component=self.component,
            instance=given(self.instance),
            replica=given(self.replica),
            min_member=given(self.min_member),
            min_sub_group=given(self.min_sub_group),
            count=self.count,
            parent=given(self.parent),
            roles=[role.to_document() for role in self.roles],
            deferred=given(self.deferred),
            topology=given(self.topology),
            pods=list(self.pods),
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class SubGroupPlanDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """One node of a gang's tree: a leaf requires minMember pods, a parent minSubGroup of its children."""

    name: str
    component: str
    instance: Annotated[str, Meta(description="The instance the node is split on.")] | UnsetType = UNSET
    replica: Annotated[str, Meta(description="The replica index the node is split on.")] | UnsetType = UNSET
    min_member: Annotated[_Count, Meta(description="Leaves: the pods required.")] | UnsetType = UNSET
    min_sub_group: Annotated[_Count, Meta(description="Parents: the children required.")] | UnsetType = UNSET
    count: Annotated[_Count, Meta(description="The pods the spec asks for under this node.")]
    parent: Annotated[str, Meta(description="The enclosing node.")] | UnsetType = UNSET
    roles: Annotated[list[GangRoleDocument], Meta(description="Leaves: whose pods they are.")] = []
    deferred: (
        Annotated[str, Meta(description="Why its pods are created later (not required until they exist).")] | UnsetType
    ) = UNSET
    topology: Topology | UnsetType = UNSET
    pods: Annotated[list[str], Meta(description="Its pods' names (plans with pods only).")]


class Gang(msgspec.Struct, frozen=True):
    """One gang: pods that must be scheduled together, `min_member` of them at least.

    - `pod_group`: the definition's pod group (alpha `podGroups[].name`, or `podGroup.name`);
    - `members`: the member components; `instance` / `replica`: the instance id / replica index the gang is keyed
      on (None when it is not keyed that way); `keys`: the group-key values seen on its pods (None offline);
    - `roles`: per (component, instance), the pods needed and asked for; `min_resources`: `min_count` x per-pod
      requests, summed over the roles;
    - `sub_groups`, `min_sub_group`, `topology`: the KAI-native format's structure (empty / None otherwise);
    - `pods`: the names of its pods (plans with pods only).
    """

    name: str
    pod_group: str
    members: tuple[str, ...]
    min_member: int
    roles: tuple[GangRole, ...] = ()
    min_resources: ResourceList = msgspec.field(default_factory=dict)
    instance: str | None = None
    replica: str | None = None
    keys: tuple[str, ...] | None = None
    topology: Topology | None = None
    sub_groups: tuple[SubGroupPlan, ...] = ()
    min_sub_group: int | None = None
    pods: tuple[str, ...] = ()
    template_name: str = ""
    split_keys: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """The pods the spec asks for in this gang (the sum of the roles' counts)."""
        return sum(role.count for role in self.roles)

    def to_document(self) -> GangDocument:
        return GangDocument(
            name=self.name,
            pod_group=self.pod_group,
            members=list(self.members),
            instance=self.instance,
            replica=self.replica,
            keys=list(self.keys) if self.keys is not None else UNSET,
            min_member=self.min_member,
            count=self.count,
            roles=[role.to_document() for role in self.roles],
            min_resources=format_resources(self.min_resources),
            topology=given(self.topology),
            sub_groups=[group.to_document() for group in self.sub_groups],
            min_sub_group=self.min_sub_group if self.sub_groups else UNSET,
            pods=list(self.pods),
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class GangDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """One gang: pods that must be scheduled together, minMember of them at least."""

    name: str
    pod_group: Annotated[str, Meta(description="The definition's pod group.")]
    members: Annotated[list[str], Meta(description="The member components.")]
    instance: Annotated[str | None, Meta(description="The instance id the gang is keyed on, or null.")]
    replica: Annotated[str | None, Meta(description="The replica index the gang is keyed on, or null.")]
    keys: (
        Annotated[list[str], Meta(description="The group-key values seen on its pods (plans with pods only).")]
        | UnsetType
    ) = UNSET
    min_member: _Count
    count: Annotated[_Count, Meta(description="The pods the spec asks for (the sum of the roles' counts).")]
    roles: list[GangRoleDocument]
    min_resources: Annotated[_Quantities, Meta(description="minCount x one pod's requests, summed over the roles.")]
    topology: Topology | UnsetType = UNSET
    sub_groups: Annotated[list[SubGroupPlanDocument], Meta(description="KAI-native sub-groups.")] = []
    min_sub_group: Annotated[int | None, Meta(description="With subGroups: the sub-groups required.")] | UnsetType = (
        UNSET
    )
    pods: Annotated[list[str], Meta(description="Its pods' names (plans with pods only).")]


class PodMembership(msgspec.Struct, frozen=True):
    """Where one pod falls: its leaf component and instance, its gang (None when it is in none: see `error`), the
    group-key values, and its KAI-native sub-groups (`sub_group` is the deepest)."""

    name: str
    namespace: str = ""
    component: str | None = None
    instance: str | None = None
    gang: str | None = None
    pod_group: str | None = None
    member: str | None = None
    keys: tuple[str, ...] = ()
    sub_groups: tuple[str, ...] = ()
    error: str | None = None

    @property
    def sub_group(self) -> str | None:
        return self.sub_groups[-1] if self.sub_groups else None

    def to_document(self) -> PodMembershipDocument:
        return PodMembershipDocument(
            name=self.name,
            namespace=self.namespace,
            component=self.component,
            instance=self.instance,
            gang=self.gang,
            pod_group=self.pod_group,
            member=self.member,
            keys=list(self.keys),
            sub_groups=list(self.sub_groups),
            error=given(self.error),
        )

    def to_dict(self) -> dict[str, Any]:
        return _builtins(self.to_document())


class PodMembershipDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Where one pod falls: its leaf component and instance, its gang (null when in none: see error), the group-key
    values, and its KAI-native sub-groups."""

    name: str
    namespace: str
    component: str | None
    instance: str | None
    gang: str | None
    pod_group: str | None
    member: Annotated[str | None, Meta(description="The member component the pod counts for.")]
    keys: Annotated[list[str], Meta(description="The group-key values.")]
    sub_groups: Annotated[list[str], Meta(description="Its sub-groups, outermost first.")] = []
    error: Annotated[str, Meta(description="Why the pod is in no gang.")] | UnsetType = UNSET


class GangPlan(msgspec.Struct, frozen=True):
    """Every gang of one workload, scheduler-neutral; exports turn it into PodGroups, Workloads, PodSets."""

    workload: ObjectRef
    uid: str
    definition: str
    format: GangFormat | None
    scale_mode: ScaleMode
    gangs: tuple[Gang, ...]
    pods: tuple[PodMembership, ...] = ()
    notes: tuple[str, ...] = ()
    with_pods: bool = False
    no_gang: str | None = None
    scheduler_annotations: Mapping[str, str] = msgspec.field(default_factory=dict)

    def gang(self, name: str) -> Gang:
        for gang in self.gangs:
            if gang.name == name:
                return gang
        known = ", ".join(gang.name for gang in self.gangs) or "none"
        raise KeyError(f"no gang {name!r} in the plan of {self.workload.name!r}; gangs: {known}")

    @property
    def unplaced(self) -> list[PodMembership]:
        """Pods that are in no gang (with the reason in `error`); none when the object needs no gang."""
        if self.no_gang is not None:
            return []
        return [pod for pod in self.pods if pod.gang is None]

    def to_document(self) -> GangPlanDocument:
        return GangPlanDocument(
            schema_version=SCHEMA_VERSION,
            workload=self.workload.to_document(),
            definition=self.definition,
            format=self.format,
            scale_mode=self.scale_mode,
            gangs=[gang.to_document() for gang in self.gangs],
            pods=[pod.to_document() for pod in self.pods],
            notes=list(self.notes),
            no_gang=given(self.no_gang),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON plan (`schemaVersion: workloadmap.io/gang/v2`), plain dicts and lists."""
        return _builtins(self.to_document())


class GangPlanDocument(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    """Every gang of one workload, scheduler-neutral."""

    schema_version: str
    workload: Annotated[ObjectRefDocument, Meta(description="The planned workload.")]
    definition: Annotated[str, Meta(description="The Karta definition used.")]
    format: Annotated[
        GangFormat | None,
        Meta(description="The definition's gang format: podGroups (alpha) or podGroup; null when it has none."),
    ]
    scale_mode: Annotated[ScaleMode, Meta(description="How counts were read: by-definition or by-leaves.")]
    gangs: list[GangDocument]
    pods: Annotated[list[PodMembershipDocument], Meta(description="One entry per given pod.")]
    notes: Annotated[list[str], Meta(description="What could not be read.")]
    no_gang: Annotated[str, Meta(description="Why this object needs no gang (then gangs is empty).")] | UnsetType = (
        UNSET
    )


def format_resources(resources: Mapping[str, Fraction]) -> dict[str, str]:
    """Amounts as Kubernetes quantity strings (`"500m"`, `"16Gi"`, `"8"`), names sorted, zeros dropped."""
    if not isinstance(resources, Mapping):
        raise ArgumentTypeError("resources", "a mapping of resource names to amounts", resources)
    return {name: format_quantity(amount, quantity_kind(name)) for name, amount in sorted(resources.items()) if amount}
