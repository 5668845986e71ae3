"""The gang plan's result types: `GangPlan` and its gangs, roles, sub-groups, topologies and pod memberships.

Frozen dataclasses with `to_dict()` under `schemaVersion: workloadmap.io/gang/v1`; `workload_map.gang.plan` builds
them and every export (`workload_map.gang.exports`) reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from workload_map.gang.scale import ScaleMode
from workload_map.gang.summary import GangFormat
from workload_map.pods import ResourceList, format_quantity, quantity_kind
from workload_map.resolve import ObjectRef

__all__ = [
    "SCHEMA_VERSION",
    "Gang",
    "GangPlan",
    "GangRole",
    "PodMembership",
    "SubGroupPlan",
    "Topology",
    "format_resources",
]

SCHEMA_VERSION: Final = "workloadmap.io/gang/v1"
"""The `schemaVersion` of `GangPlan.to_dict()`."""


@dataclass(frozen=True, slots=True)
class Topology:
    """A topology constraint: the topology (KAI Topology object) and the required / preferred level (node label)."""

    topology: str
    required_level: str | None = None
    preferred_level: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topology": self.topology}
        if self.required_level:
            out["requiredTopologyLevel"] = self.required_level
        if self.preferred_level:
            out["preferredTopologyLevel"] = self.preferred_level
        return out


@dataclass(frozen=True, slots=True)
class GangRole:
    """The pods of one (component, instance) in one gang: `min_count` of them are needed, `count` are asked for.

    `requests` are one pod's (None when they cannot be read, see the plan's notes); `template` is the pod template
    (PodTemplateSpec) the spec gives, or one built from a fragmented spec, or None.
    """

    name: str
    component: str
    instance: str
    min_count: int
    count: int
    requests: ResourceList | None = None
    template: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "component": self.component,
            "instance": self.instance,
            "minCount": self.min_count,
            "count": self.count,
        }
        if self.requests is not None:
            out["requests"] = format_resources(self.requests)
        return out


@dataclass(frozen=True, slots=True)
class SubGroupPlan:
    """A KAI-native sub-group: the pods of `component` (or any descendant), `min_member` of them required."""

    name: str
    component: str
    min_member: int
    parent: str | None = None
    topology: Topology | None = None
    pods: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "component": self.component, "minMember": self.min_member}
        if self.parent is not None:
            out["parent"] = self.parent
        if self.topology is not None:
            out["topology"] = self.topology.to_dict()
        out["pods"] = list(self.pods)
        return out


@dataclass(frozen=True, slots=True)
class Gang:
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
    min_resources: ResourceList = field(default_factory=dict)
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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "podGroup": self.pod_group,
            "members": list(self.members),
            "instance": self.instance,
            "replica": self.replica,
        }
        if self.keys is not None:
            out["keys"] = list(self.keys)
        out["minMember"] = self.min_member
        out["count"] = self.count
        out["roles"] = [role.to_dict() for role in self.roles]
        out["minResources"] = format_resources(self.min_resources)
        if self.topology is not None:
            out["topology"] = self.topology.to_dict()
        if self.sub_groups:
            out["subGroups"] = [group.to_dict() for group in self.sub_groups]
            out["minSubGroup"] = self.min_sub_group
        out["pods"] = list(self.pods)
        return out


@dataclass(frozen=True, slots=True)
class PodMembership:
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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "component": self.component,
            "instance": self.instance,
            "gang": self.gang,
            "podGroup": self.pod_group,
            "member": self.member,
            "keys": list(self.keys),
        }
        if self.sub_groups:
            out["subGroups"] = list(self.sub_groups)
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True, slots=True)
class GangPlan:
    """Every gang of one workload, scheduler-neutral; exports turn it into PodGroups, Workloads, PodSets."""

    workload: ObjectRef
    uid: str
    definition: str
    format: GangFormat
    scale_mode: ScaleMode
    gangs: tuple[Gang, ...]
    pods: tuple[PodMembership, ...] = ()
    notes: tuple[str, ...] = ()
    with_pods: bool = False

    def gang(self, name: str) -> Gang:
        for gang in self.gangs:
            if gang.name == name:
                return gang
        known = ", ".join(gang.name for gang in self.gangs) or "none"
        raise KeyError(f"no gang {name!r} in the plan of {self.workload.name!r}; gangs: {known}")

    @property
    def unplaced(self) -> list[PodMembership]:
        """Pods that are in no gang (with the reason in `error`)."""
        return [pod for pod in self.pods if pod.gang is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "workload": self.workload.to_dict(),
            "definition": self.definition,
            "format": self.format,
            "scaleMode": self.scale_mode,
            "gangs": [gang.to_dict() for gang in self.gangs],
            "pods": [pod.to_dict() for pod in self.pods],
            "notes": list(self.notes),
        }


def format_resources(resources: Mapping[str, Fraction]) -> dict[str, str]:
    """Amounts as Kubernetes quantity strings (`"500m"`, `"16Gi"`, `"8"`), names sorted, zeros dropped."""
    return {name: format_quantity(amount, quantity_kind(name)) for name, amount in sorted(resources.items()) if amount}
