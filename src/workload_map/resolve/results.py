"""Typed result objects of the resolve layer. Each is frozen and serialises to JSON with `to_dict()` (camelCase).

Pod template specs, pod specs, metadata and fragmented fields are plain JSON dicts/lists, copied out of the
document: changing them changes nothing until you write them back with an `update_*` method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from workload_map.model import GVK, UNDEFINED
from workload_map.resolve._json import fast_copy, is_empty

ValueKind = Literal["string", "string_map", "object", "object_list"]


@dataclass(frozen=True, slots=True)
class FragmentedField:
    """One of the 11 fields of a fragmented pod spec: attribute, JSON key, path attribute and value type."""

    attr: str
    key: str
    path_attr: str
    kind: ValueKind

    @property
    def path_field(self) -> str:
        """The definition field holding its path, e.g. `labelsPath`."""
        return self.key + "Path"


def _field(attr: str, key: str, kind: ValueKind) -> FragmentedField:
    return FragmentedField(attr, key, attr + "_path", kind)


# Extraction order (the definition's field order) ...
FRAGMENTED_FIELDS: tuple[FragmentedField, ...] = (
    _field("scheduler_name", "schedulerName", "string"),
    _field("labels", "labels", "string_map"),
    _field("annotations", "annotations", "string_map"),
    _field("resources", "resources", "object"),
    _field("resource_claims", "resourceClaims", "object_list"),
    _field("pod_affinity", "podAffinity", "object"),
    _field("node_affinity", "nodeAffinity", "object"),
    _field("containers", "containers", "object_list"),
    _field("container", "container", "object"),
    _field("priority_class_name", "priorityClassName", "string"),
    _field("image", "image", "string"),
)
FRAGMENTED_BY_KEY: dict[str, FragmentedField] = {f.key: f for f in FRAGMENTED_FIELDS}
FRAGMENTED_BY_ATTR: dict[str, FragmentedField] = {f.attr: f for f in FRAGMENTED_FIELDS}
# ... and upstream's fixed write-back order.
FRAGMENTED_WRITE_ORDER: tuple[FragmentedField, ...] = tuple(
    FRAGMENTED_BY_KEY[key]
    for key in (
        "schedulerName",
        "priorityClassName",
        "image",
        "labels",
        "annotations",
        "resources",
        "podAffinity",
        "nodeAffinity",
        "container",
        "resourceClaims",
        "containers",
    )
)


@dataclass(frozen=True, slots=True)
class FragmentedPodSpec:
    """The pod fields a CRD scatters around, gathered for one instance. `None` (or empty) means not set.

    `to_dict()` omits empty fields, as upstream's extracted object does.
    """

    scheduler_name: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    resources: dict[str, Any] | None = None
    resource_claims: list[Any] | None = None
    pod_affinity: dict[str, Any] | None = None
    node_affinity: dict[str, Any] | None = None
    containers: list[Any] | None = None
    container: dict[str, Any] | None = None
    priority_class_name: str | None = None
    image: str | None = None

    def get(self, key: str) -> Any:
        """A field by its JSON key (`schedulerName`) or attribute name (`scheduler_name`)."""
        spec = FRAGMENTED_BY_KEY.get(key) or FRAGMENTED_BY_ATTR.get(key)
        if spec is None:
            raise KeyError(f"{key!r} is not a fragmented pod spec field; fields: {', '.join(FRAGMENTED_BY_KEY)}")
        return getattr(self, spec.attr)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for spec in FRAGMENTED_FIELDS:
            value = getattr(self, spec.attr)
            if value is None or (spec.kind != "object" and is_empty(value)):
                continue
            out[spec.key] = fast_copy(value)
        return out

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> FragmentedPodSpec:
        """From a dict keyed by JSON keys (`schedulerName`) or attribute names; unknown keys are an error."""
        kwargs: dict[str, Any] = {}
        for key, item in value.items():
            spec = FRAGMENTED_BY_KEY.get(key) or FRAGMENTED_BY_ATTR.get(key)
            if spec is None:
                raise ValueError(f"{key!r} is not a fragmented pod spec field; fields: {', '.join(FRAGMENTED_BY_KEY)}")
            kwargs[spec.attr] = item
        return cls(**kwargs)


@dataclass(frozen=True, slots=True)
class Scale:
    """Replica counts of one instance; `None` when the definition has no path for it or the path gave null."""

    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.replicas is not None:
            out["replicas"] = self.replicas
        if self.min_replicas is not None:
            out["minReplicas"] = self.min_replicas
        if self.max_replicas is not None:
            out["maxReplicas"] = self.max_replicas
        return out


@dataclass(frozen=True, slots=True)
class Condition:
    """One extracted condition. `status` is `""` when the item has none; `reason` is None when not read or absent."""

    type: str
    status: str = ""
    reason: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "status": self.status}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.message:
            out["message"] = self.message
        return out


@dataclass(frozen=True, slots=True)
class WorkloadStatus:
    """The status of a workload as its definition reads it.

    - `phase`: the primary phase, the first of Failed > Completed > Suspended > Suspending > Resuming > Degraded >
      Running > Initializing among the matched statuses, else `"Undefined"`.
    - `phases`: every matched status in upstream's evaluation order, or `["Undefined"]`.
    - `raw_phase`: the phase field as the definition's `phaseDefinition` reads it (`""` when the field is
      missing), or None when the definition has no `phaseDefinition`.
    - `conditions`: the extracted conditions, in object order.
    """

    phase: str = UNDEFINED
    phases: tuple[str, ...] = (UNDEFINED,)
    raw_phase: str | None = None
    conditions: tuple[Condition, ...] = ()

    @property
    def undefined(self) -> bool:
        return self.phase == UNDEFINED

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "phases": list(self.phases),
            "rawPhase": self.raw_phase,
            "conditions": [condition.to_dict() for condition in self.conditions],
        }


@dataclass(frozen=True, slots=True)
class ComponentError:
    """A part of the workload that could not be resolved; everything else was.

    `field` is the definition field relative to the component (`specDefinition.podSpecPath`,
    `scaleDefinition.replicasPath`, `statusDefinition.statusMappings.running[0].byExpression.expression`).
    """

    component: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"component {self.component!r}, {self.field}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"component": self.component, "field": self.field, "message": self.message}


def gvk_dict(gvk: GVK | None) -> dict[str, str] | None:
    if gvk is None:
        return None
    return {"group": gvk.group, "version": gvk.version, "kind": gvk.kind}


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Which object was resolved: its apiVersion, kind, namespace, name, uid and creation time (`""` when
    absent). The one place the identity of a workload is read (`resolution.object`)."""

    api_version: str
    kind: str
    name: str = ""
    namespace: str = ""
    uid: str = ""
    creation_timestamp: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name, "namespace": self.namespace}
        if self.uid:
            out["uid"] = self.uid
        if self.creation_timestamp:
            out["creationTimestamp"] = self.creation_timestamp
        return out
