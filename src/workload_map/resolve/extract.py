"""Extraction: what one component's paths give on one snapshot of the document (karta-spec §3, §11).

Pure functions over (snapshot, component definition), shared by the strict `Component` getters (which raise) and
the lazy `Resolution` (which records each failure and goes on). Each returns None when the component has no
definition for that part, and raises `ExtractionError` when a path fails or its outputs do not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final, TypeVar

import msgspec

from workload_map.jq.convert import normalize
from workload_map.model import ComponentDefinition
from workload_map.model.extensions import ResourceAliases
from workload_map.resolve.decode import (
    INT32_MAX,
    INT32_MIN,
    DecodeError,
    decode_fragment,
    decode_instance_ids,
    decode_object,
    decode_replicas,
)
from workload_map.resolve.errors import ExtractionError
from workload_map.resolve.results import FRAGMENTED_FIELDS, FragmentedPodSpec, Scale, WorkloadStatus
from workload_map.resolve.snapshot import Snapshot
from workload_map.resolve.status import ErrorSink, extract_status
from workload_map.resolve.status_plan import planned_status
from workload_map.resources import alias_requirements

T = TypeVar("T")

IDS_FIELD = "instanceIdPath"
FRAGMENTED_FIELD = "specDefinition.fragmentedPodSpecDefinition"
_SCALE_PATHS = (
    ("replicas_path", "replicas", "scaleDefinition.replicasPath"),
    ("min_replicas_path", "min_replicas", "scaleDefinition.minReplicasPath"),
    ("max_replicas_path", "max_replicas", "scaleDefinition.maxReplicasPath"),
)


class PlainPart(msgspec.Struct, frozen=True):
    """A part read whole from one path: its SpecDefinition attribute, definition field, upstream's name for it,
    and the Kubernetes type its outputs must be."""

    attr: str
    field: str
    what: str
    wanted: str


TEMPLATE = PlainPart(
    "pod_template_spec_path", "specDefinition.podTemplateSpecPath", "pod template spec", "PodTemplateSpec"
)
SPEC = PlainPart("pod_spec_path", "specDefinition.podSpecPath", "pod spec", "PodSpec")
METADATA = PlainPart("metadata_path", "specDefinition.metadataPath", "pod metadata", "ObjectMeta")


def plain_path(definition: ComponentDefinition, part: PlainPart) -> str | None:
    spec = definition.spec_definition
    path: str | None = getattr(spec, part.attr) if spec is not None else None
    return path or None


def instance_ids(snapshot: Snapshot, definition: ComponentDefinition) -> list[str]:
    """The instance ids in output order; `[""]` for a single-instance component."""
    path = definition.instance_id_path
    if not path:
        return [""]
    values = snapshot.outputs(path, definition.name, IDS_FIELD)
    try:
        return decode_instance_ids(values)
    except DecodeError as exc:
        raise ExtractionError(definition.name, IDS_FIELD, f"failed to extract instance ids: {exc}") from None


class PlainValues:
    """A part read whole from one path, per instance id (pod templates, pod specs, metadata).

    `read` holds the objects as the path gave them; with `in_place` they are the document's own subtrees
    (`Snapshot.objects`), which only the request formula reads (`resources.pod_requests_in_place`), never handed
    out. `normalised()` is what every reader is given: gojq's view (keys sorted, integral floats as ints), a copy
    made on first use when `in_place`, else `read` itself (already the jq Document's normalised outputs)."""

    __slots__ = ("_normalised", "in_place", "read")

    def __init__(self, read: dict[str, dict[str, Any]], in_place: bool) -> None:
        self.read = read
        self.in_place = in_place
        self._normalised: dict[str, dict[str, Any]] | None = None if in_place else read

    @property
    def ready(self) -> bool:
        """Whether `normalised()` has been made (callers that share the part make it under their lock)."""
        return self._normalised is not None

    def normalised(self) -> dict[str, dict[str, Any]]:
        found = self._normalised
        if found is None:
            copied = normalize(self.read)  # one round trip for every instance; its keys come back sorted
            found = self._normalised = {key: copied[key] for key in self.read}
        return found


def plain(snapshot: Snapshot, definition: ComponentDefinition, part: PlainPart, ids: list[str]) -> PlainValues | None:
    """Instance id -> the part's object; None without a path for it."""
    path = plain_path(definition, part)
    if path is None:
        return None
    outputs, in_place = snapshot.objects(path, definition.name, part.field)
    if _DICT_ONLY.issuperset(map(type, outputs)):  # every output an object: decoding hands each back as it is
        values: list[dict[str, Any]] = outputs
    else:
        values = _decode_each(
            definition.name,
            part.field,
            outputs,
            lambda index, value: decode_object(index, value, part.wanted),
        )
    return PlainValues(_zip(definition, part.field, ids, values), in_place)


_DICT_ONLY: Final = frozenset({dict})


def fragmented(
    snapshot: Snapshot, definition: ComponentDefinition, ids: list[str]
) -> dict[str, FragmentedPodSpec] | None:
    """Instance id -> the scattered pod fields; None without `fragmentedPodSpecDefinition`."""
    spec = definition.spec_definition
    fragments = spec.fragmented_pod_spec_definition if spec is not None else None
    if fragments is None:
        return None
    columns: dict[str, list[Any]] = {}
    for item in FRAGMENTED_FIELDS:
        path = getattr(fragments, item.path_attr)
        if not path:
            continue
        field = f"{FRAGMENTED_FIELD}.{item.path_field}"
        columns[item.attr] = _decode_each(
            definition.name, field, snapshot.outputs(path, definition.name, field), partial(decode_fragment, item.kind)
        )
    count = max((len(column) for column in columns.values()), default=0)
    specs = [
        FragmentedPodSpec(**{attr: column[index] for attr, column in columns.items() if index < len(column)})
        for index in range(count)
    ]
    return _zip(definition, FRAGMENTED_FIELD, ids, specs)


def scales(snapshot: Snapshot, definition: ComponentDefinition, ids: list[str]) -> dict[str, Scale] | None:
    """Instance id -> replica counts; None without `scaleDefinition`."""
    scale_definition = definition.scale_definition
    if scale_definition is None:
        return None
    columns: dict[str, list[int | None]] = {}
    for attr, name, field in _SCALE_PATHS:
        path = getattr(scale_definition, attr)
        if not path:
            continue
        try:
            # an int in range is what decoding it gives (a bool is not an int here): no call per count
            columns[name] = [
                value if type(value) is int and INT32_MIN <= value <= INT32_MAX else decode_replicas(index, value)
                for index, value in enumerate(snapshot.outputs(path, definition.name, field))
            ]
        except DecodeError as exc:
            raise ExtractionError(definition.name, field, f"not a replica count: {exc}") from None
    get = columns.get
    replicas, least, most = get("replicas", _NONE), get("min_replicas", _NONE), get("max_replicas", _NONE)
    if not least and not most:  # the common definition, replicas alone: one Scale per count, made in C
        found = list(map(Scale, replicas))
    else:
        count = max(len(replicas), len(least), len(most))
        found = [  # positionally: a shorter column (or none) leaves its field None for the later instances
            Scale(
                replicas[index] if index < len(replicas) else None,
                least[index] if index < len(least) else None,
                most[index] if index < len(most) else None,
            )
            for index in range(count)
        ]
    return _zip(definition, "scaleDefinition", ids, found)


_NONE: list[int | None] = []  # read only: the column of a scale path the definition does not set


def status(snapshot: Snapshot, definition: ComponentDefinition, on_error: ErrorSink | None) -> WorkloadStatus | None:
    """The status the component's `statusDefinition` reads (strict without `on_error`); None without one."""
    status_definition = definition.status_definition
    if status_definition is None:
        return None
    found = planned_status(status_definition, snapshot.document, snapshot.results)  # None: a read failed
    if found is not None:
        return found

    def outputs(expr: str, field: str) -> list[Any]:
        return snapshot.outputs(expr, definition.name, field)

    return extract_status(definition.name, status_definition, outputs, on_error)


def pod_template(
    templates: Mapping[str, dict[str, Any]] | None,
    specs: Mapping[str, dict[str, Any]] | None,
    metadata: Mapping[str, dict[str, Any]] | None,
    fragments: Mapping[str, FragmentedPodSpec] | None,
    instance_id: str,
    *,
    aliases: ResourceAliases | None = None,
) -> dict[str, Any] | None:
    """The pod template one instance's pods are made from: the spec's PodTemplateSpec, else `{metadata, spec}`
    from podSpecPath + metadataPath, else one built from the fragmented fields; None when the instance has none."""
    if templates is not None:
        found = templates.get(instance_id)
        return found if isinstance(found, dict) else None
    if specs is not None:
        spec = specs.get(instance_id)
        if spec is None:
            return None
        return {"metadata": (metadata or {}).get(instance_id) or {}, "spec": spec}
    if fragments is not None and instance_id in fragments:
        return template_from_fragments(fragments[instance_id], aliases)
    return None


def template_from_fragments(fragment: FragmentedPodSpec, aliases: ResourceAliases | None = None) -> dict[str, Any]:
    """A PodTemplateSpec assembled from a fragmented spec: its containers (a `main` container when it names
    none), the resources on the first container when no container carries any (the framework's resource keys
    renamed by the definition's `aliases`), and the pod-level fields."""
    fields = fragment.to_dict()
    containers = [dict(container) for container in fields.get("containers") or () if isinstance(container, dict)]
    single = fields.get("container")
    if isinstance(single, dict):
        containers.append(dict(single))
    if not containers:
        container: dict[str, Any] = {"name": "main"}
        if fields.get("image"):
            container["image"] = fields["image"]
        containers.append(container)
    if fields.get("resources") and not any(container.get("resources") for container in containers):
        containers[0]["resources"] = alias_requirements(fields["resources"], aliases)
    if fields.get("image") and not containers[0].get("image"):
        containers[0]["image"] = fields["image"]
    spec: dict[str, Any] = {"containers": containers}
    for key in ("schedulerName", "priorityClassName", "resourceClaims"):
        if fields.get(key):
            spec[key] = fields[key]
    affinity = {key: fields[key] for key in ("podAffinity", "nodeAffinity") if fields.get(key)}
    if affinity:
        spec["affinity"] = affinity
    metadata = {key: fields[key] for key in ("labels", "annotations") if fields.get(key)}
    return {"metadata": metadata, "spec": spec}


def _decode_each(component: str, field: str, values: list[Any], decode: Callable[[int, Any], T]) -> list[T]:
    try:
        return [decode(index, value) for index, value in enumerate(values)]
    except DecodeError as exc:
        raise ExtractionError(component, field, str(exc)) from None


def _zip(definition: ComponentDefinition, field: str, ids: list[str], values: list[T]) -> dict[str, T]:
    if len(ids) != len(values):
        order = f", in the order of {IDS_FIELD}" if definition.instance_id_path else ""
        raise ExtractionError(
            definition.name,
            field,
            f"instance ids count ({len(ids)}) does not match results count ({len(values)}): the path must "
            f"yield exactly one output per instance{order}",
        )
    # as long as each other (checked above: strict's own check is a cost per item); a later duplicate id overwrites
    return dict(zip(ids, values, strict=False))


__all__ = [
    "FRAGMENTED_FIELD",
    "IDS_FIELD",
    "METADATA",
    "SPEC",
    "TEMPLATE",
    "PlainPart",
    "PlainValues",
    "fragmented",
    "instance_ids",
    "plain",
    "plain_path",
    "pod_template",
    "scales",
    "status",
    "template_from_fragments",
]
