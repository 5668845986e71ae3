"""Typed result objects of the resolve layer: frozen msgspec Structs whose JSON (`to_dict()`, camelCase) comes from
their declaration.

`Scale`, `ComponentError` and `FragmentedPodSpec` are their own JSON form. `Condition`, `WorkloadStatus` and
`ObjectRef` keep Python defaults that their JSON does not omit (`status: ""`, `name: ""`), so each has a
`<Type>Document`, the declaration of its JSON, built by `to_document()`; `to_dict()` is `msgspec.to_builtins` of it.

Pod template specs, pod specs, metadata and fragmented fields are plain JSON dicts/lists, copied out of the
document: changing them changes nothing until you write them back with an `update_*` method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from workload_map.model import GVK, UNDEFINED
from workload_map.resolve._json import is_empty

_T = TypeVar("_T")


def given(value: _T | None) -> _T | UnsetType:
    """`UNSET` (a key left out of the JSON) for None, else the value: for the optional keys of a `*Document`."""
    return UNSET if value is None else value


ValueKind = Literal["string", "string_map", "object", "object_list"]


class FragmentedField(msgspec.Struct, frozen=True):
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
_NOT_OBJECTS: tuple[FragmentedField, ...] = tuple(f for f in FRAGMENTED_FIELDS if f.kind != "object")
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


class FragmentedPodSpec(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    """The pod fields a CRD scatters around, gathered for one instance. `None` (or empty) means not set.

    `to_dict()` omits fields that are not set, as upstream's extracted object does: None, and an empty string, map
    or list (an empty `resources` or affinity object is kept).
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
        """The JSON of the set fields, copied (an empty string, map or list is not set: it is encoded as None is,
        by leaving it out)."""
        unset = {spec.attr: None for spec in _NOT_OBJECTS if _is_blank(getattr(self, spec.attr))}
        value = msgspec.structs.replace(self, **unset) if unset else self
        out: dict[str, Any] = msgspec.to_builtins(value)
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


def _is_blank(value: Any) -> bool:
    return value is not None and is_empty(value)


class Scale(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    """Replica counts of one instance; each None when the definition has no path for it or the path gave null, and
    then left out of the JSON."""

    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


class Condition(msgspec.Struct, frozen=True):
    """One extracted condition. `status` is `""` when the item has none; `reason` is None when not read or absent."""

    type: str
    status: str = ""
    reason: str | None = None
    message: str = ""

    def to_document(self) -> ConditionDocument:
        return ConditionDocument(
            type=self.type, status=self.status, reason=given(self.reason), message=self.message or UNSET
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self.to_document())
        return out


class ConditionDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A condition in JSON: `status` always (`""` when the item has none), `reason` and `message` when set."""

    type: str
    status: str
    reason: str | UnsetType = UNSET
    message: str | UnsetType = UNSET


class WorkloadStatus(msgspec.Struct, frozen=True):
    """The status of a workload as its definition reads it.

    - `phase`: the primary phase, the first of Failed > Completed > Suspended > Suspending > Resuming > Degraded >
      Running > Initializing among the matched statuses, else `"Undefined"`.
    - `phases`: every matched status in upstream's evaluation order, or `["Undefined"]`.
    - `raw_phase`: the phase field as the definition's `phaseDefinition` reads it (`""` when the field is
      missing), or None when the definition has no `phaseDefinition`.
    - `conditions`: the extracted conditions, in object order.
    - `reason`: why the primary phase, in words, from the status fields behind the mapping that gave it: the
      conditions it matched (`Failed=True (BackoffLimitExceeded): Job has reached the specified backoff limit`),
      the phase field (`jobDeploymentStatus Running`), the status fields its expression reads (`jobStatus FAILED`),
      then the matched condition's message or the object's `status.message`. None when nothing matched.
    - `reason_source`: which mapping gave the primary phase, the first matching matcher of that status
      (`statusDefinition.statusMappings.failed[2]`); None when nothing matched.
    """

    phase: str = UNDEFINED
    phases: tuple[str, ...] = (UNDEFINED,)
    raw_phase: str | None = None
    conditions: tuple[Condition, ...] = ()
    reason: str | None = None
    reason_source: str | None = None

    @property
    def undefined(self) -> bool:
        return self.phase == UNDEFINED

    def to_document(self) -> WorkloadStatusDocument:
        return WorkloadStatusDocument(
            phase=self.phase,
            phases=list(self.phases),
            raw_phase=self.raw_phase,
            conditions=[condition.to_document() for condition in self.conditions],
            reason=self.reason,
            reason_source=self.reason_source,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self.to_document())
        return out


class WorkloadStatusDocument(msgspec.Struct, frozen=True, rename="camel"):
    """A workload status in JSON: every key always (`rawPhase` null without a `phaseDefinition`)."""

    phase: str
    phases: list[str]
    raw_phase: str | None
    conditions: list[ConditionDocument]
    reason: str | None
    reason_source: str | None


class ComponentError(msgspec.Struct, frozen=True):
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
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


def gvk_dict(gvk: GVK | None) -> dict[str, str] | None:
    if gvk is None:
        return None
    return {"group": gvk.group, "version": gvk.version, "kind": gvk.kind}


class ObjectRef(msgspec.Struct, frozen=True):
    """Which object was resolved: its apiVersion, kind, namespace, name, uid and creation time (`""` when
    absent). The one place the identity of a workload is read (`resolution.object`)."""

    api_version: str
    kind: str
    name: str = ""
    namespace: str = ""
    uid: str = ""
    creation_timestamp: str = ""

    def to_document(self) -> ObjectRefDocument:
        return ObjectRefDocument(
            api_version=self.api_version,
            kind=self.kind,
            name=self.name,
            namespace=self.namespace,
            uid=self.uid or UNSET,
            creation_timestamp=self.creation_timestamp or UNSET,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self.to_document())
        return out


class ObjectRefDocument(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """The object in JSON: apiVersion, kind, name and namespace always (`""` when absent), uid and
    creationTimestamp when set."""

    api_version: str
    kind: str
    name: str
    namespace: str
    uid: str | UnsetType = UNSET
    creation_timestamp: str | UnsetType = UNSET
