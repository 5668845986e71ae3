"""`Resolution`: one workload object seen through its definition, frozen, each part computed on first use.

A resolution is taken of one snapshot of the document (`snapshot.py`), so it never changes: a later write through
the `Workload` makes a new snapshot and a new resolution. Nothing here raises for a broken path: each failed part is
None (or empty) and its `ComponentError` is in `errors`. The strict `Component` getters read the same parts and
raise the recorded error, so a part is evaluated at most once per snapshot whichever way it is read.

What a consumer reads (the view, the gang plans, pod attribution, the CLI): the components by name, each
instance's pod template, per-replica requests and replica counts (`replicas.py`), the object's identity
(`ObjectRef`: uid, creation time) and the status. A `get` that reads only the status evaluates only the status
(the first read evaluates the definition's expressions in one combined call).
"""

from __future__ import annotations

from _thread import RLock  # what threading.RLock() makes, without importing threading (issue 19: start-up)
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, NoReturn

from workload_map.jq import EvaluationPolicy
from workload_map.model import GVK, ComponentDefinition, Karta
from workload_map.model.extensions import ResourceAliases
from workload_map.resolve import extract
from workload_map.resolve._json import fast_copy
from workload_map.resolve.errors import ComponentNotFound, ExtractionError
from workload_map.resolve.replicas import desired_replicas, min_replicas
from workload_map.resolve.results import (
    ComponentError,
    FragmentedPodSpec,
    ObjectRef,
    Scale,
    WorkloadStatus,
    gvk_dict,
)
from workload_map.resolve.snapshot import Snapshot
from workload_map.resolve.structure import (
    PART_FRAGMENTED,
    PART_IDS,
    PART_METADATA,
    PART_REQUESTS,
    PART_SCALES,
    PART_SPECS,
    PART_STATUS,
    PART_TEMPLATES,
    ComponentSlot,
    Structure,
)
from workload_map.resources import QuantityError, ResourceList, ResourceSpecError, fragmented_requests, pod_requests
from workload_map.resources.formula import pod_requests_in_place

# the parts of a component (the keys of its cache, named in `structure`), in the order their errors are reported
PART_ORDER: Final = (
    PART_IDS,
    PART_TEMPLATES,
    PART_SPECS,
    PART_METADATA,
    PART_FRAGMENTED,
    PART_SCALES,
    PART_REQUESTS,
    PART_STATUS,
)


class _Frozen:
    """Attributes are set once, in `__init__`; lazily computed parts live in private caches."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is frozen: {name!r} cannot be set")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is frozen: {name!r} cannot be deleted")


# sets a slot past `_Frozen.__setattr__`; called once per attribute, without `**kwargs` (a dict per object and a
# loop: a third of making a resolution, which `wmap get` does once per row)
_set = object.__setattr__


class _Failed:
    """A part whose extraction failed: what a strict read raises."""

    __slots__ = ("errors",)

    def __init__(self, errors: Sequence[ExtractionError]) -> None:
        self.errors = tuple(errors)


class ResolvedInstance(_Frozen):
    """One instance of a component: what its paths hold, the pod template its pods are made from, one replica's
    requests, and its replica counts. A field is None when the component has no definition for it or its
    extraction failed (the component's `errors` say which)."""

    __slots__ = ("_component", "instance_id")
    instance_id: str
    _component: ResolvedComponent

    def __init__(self, component: ResolvedComponent, instance_id: str) -> None:
        _set(self, "_component", component)
        _set(self, "instance_id", instance_id)

    def __repr__(self) -> str:
        return f"<ResolvedInstance {self._component.name!r}/{self.instance_id!r}>"

    @property
    def pod_template_spec(self) -> dict[str, Any] | None:
        """The instance's PodTemplateSpec (`{metadata, spec}`) as `podTemplateSpecPath` reads it."""
        return self._component._column(PART_TEMPLATES).get(self.instance_id)

    @property
    def pod_spec(self) -> dict[str, Any] | None:
        """The instance's PodSpec as `podSpecPath` reads it."""
        return self._component._column(PART_SPECS).get(self.instance_id)

    @property
    def pod_metadata(self) -> dict[str, Any] | None:
        """The instance's pod ObjectMeta as `metadataPath` reads it."""
        return self._component._column(PART_METADATA).get(self.instance_id)

    @property
    def fragmented_pod_spec(self) -> FragmentedPodSpec | None:
        """The pod fields a CRD scatters around, gathered (`fragmentedPodSpecDefinition`)."""
        return self._component._column(PART_FRAGMENTED).get(self.instance_id)

    @property
    def scale(self) -> Scale | None:
        """The replica counts the `scaleDefinition` reads for this instance."""
        return self._component._column(PART_SCALES).get(self.instance_id)

    @property
    def desired_replicas(self) -> int:
        """How many replicas the spec asks for (`replicas.desired_replicas`: replicas, else minReplicas, else 1)."""
        return desired_replicas(self.scale)

    @property
    def min_replicas(self) -> int:
        """The least it runs with (`replicas.min_replicas`, upstream's effMin; 0 without a count)."""
        return min_replicas(self.scale)

    @property
    def pod_template(self) -> dict[str, Any] | None:
        """The pod template this instance's pods are made from: the PodTemplateSpec, else `{metadata, spec}` from
        the pod spec and metadata paths, else one built from the fragmented fields; None without any."""
        return self._component._template(self.instance_id)

    @property
    def requests(self) -> ResourceList | None:
        """What one replica requests (the scheduler's formula over the pod template, pod spec or fragmented
        spec); None without a pod definition or when the quantities cannot be read (see `errors`)."""
        found = self._component._requests().get(self.instance_id)
        return found if isinstance(found, dict) else None

    @property
    def requests_error(self) -> ComponentError | None:
        """Why `requests` is None although the instance has a pod definition, if it is."""
        found = self._component._requests().get(self.instance_id)
        return found if isinstance(found, ComponentError) else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"instanceId": self.instance_id}
        if self.pod_template_spec is not None:
            out["podTemplateSpec"] = fast_copy(self.pod_template_spec)
        if self.pod_spec is not None:
            out["podSpec"] = fast_copy(self.pod_spec)
        if self.pod_metadata is not None:
            out["metadata"] = fast_copy(self.pod_metadata)
        if self.fragmented_pod_spec is not None:
            out["fragmentedPodSpec"] = self.fragmented_pod_spec.to_dict()
        if self.scale is not None:
            out["scale"] = self.scale.to_dict()
        return out


class ResolvedComponent(_Frozen):
    """One component as resolved: its identity, its instances (in instance-id order) and what failed."""

    # what the definition says of the component is read from its `ComponentSlot`, shared by every resolution of
    # the definition: making a resolution sets five attributes per component, not fifteen (issue 19: a quarter of
    # a resolution's set-up)
    __slots__ = ("_aliases", "_instances", "_lock", "_parts", "_slot", "_snapshot", "_templates")
    _slot: ComponentSlot
    _snapshot: Snapshot
    _aliases: ResourceAliases | None
    _parts: dict[str, Any]
    _templates: dict[str, dict[str, Any] | None]
    _instances: list[dict[str, ResolvedInstance]]
    _lock: RLock

    def __init__(
        self, slot: ComponentSlot, structure: Structure, snapshot: Snapshot, lock: RLock | None = None
    ) -> None:
        """`lock`: the lock of the resolution's parts (one per resolution; by default one of its own)."""
        _set(self, "_slot", slot)
        _set(self, "_snapshot", snapshot)
        _set(self, "_aliases", structure.resource_aliases)
        _set(self, "_parts", {})
        _set(self, "_templates", {})
        _set(self, "_instances", [])
        _set(self, "_lock", RLock() if lock is None else lock)

    @property
    def name(self) -> str:
        return self._slot.definition.name

    @property
    def kind(self) -> GVK | None:
        return self._slot.definition.kind

    @property
    def parent(self) -> str | None:
        """The parent's name (its `ownerRef`), None for the root or a component without one."""
        return self._slot.definition.owner_ref or None

    @property
    def children(self) -> tuple[str, ...]:
        """The children's names, in declaration order."""
        return self._slot.children

    @property
    def has_pod_definition(self) -> bool:
        return self._slot.has_pod_definition

    @property
    def multi_instance(self) -> bool:
        """Whether the component has an `instanceIdPath` (instances keyed by id, else one instance `""`)."""
        return bool(self._slot.definition.instance_id_path)

    @property
    def definition(self) -> ComponentDefinition:
        return self._slot.definition

    @property
    def yaml_path(self) -> str:
        """Where the component is declared (`spec.structureDefinition.childComponents[1]`)."""
        return self._slot.yaml_path

    def __repr__(self) -> str:
        return f"<ResolvedComponent {self.name!r}>"

    # --- parts, each computed once -------------------------------------------------------------------------

    def _part(self, key: str) -> Any:
        """The part's value, or a `_Failed` holding its errors (computed on first use)."""
        parts = self._parts
        if key in parts:
            return parts[key]
        if key in self._slot.absent:
            return None  # the definition has no path for it (the ids are not needed to say so)
        with self._lock:
            if key not in parts:
                parts[key] = self._compute(key)
            return parts[key]

    def _compute(self, key: str) -> Any:
        if key == PART_STATUS:
            errors: list[ExtractionError] = []
            status = extract.status(self._snapshot, self._slot.definition, errors.append)
            return _WithErrors(status, errors) if errors else status
        if key == PART_REQUESTS:
            return self._compute_requests()
        try:
            if key == PART_IDS:
                return extract.instance_ids(self._snapshot, self._slot.definition)
            ids = self._ids()
            if ids is None:
                return None  # no instances to attach the part to; the ids error says why
            snapshot, definition = self._snapshot, self._slot.definition
            if key == PART_TEMPLATES:
                return extract.plain(snapshot, definition, extract.TEMPLATE, ids)
            if key == PART_SPECS:
                return extract.plain(snapshot, definition, extract.SPEC, ids)
            if key == PART_METADATA:
                return extract.plain(snapshot, definition, extract.METADATA, ids)
            if key == PART_FRAGMENTED:
                return extract.fragmented(snapshot, definition, ids)
            if key == PART_SCALES:
                return extract.scales(snapshot, definition, ids)
        except ExtractionError as error:
            return _Failed([error])
        raise KeyError(key)

    def _ids(self) -> list[str] | None:
        found = self._part(PART_IDS)
        return None if isinstance(found, _Failed) else found

    def _value(self, found: Any) -> Any:
        """A part as readers get it: a plain part (`extract.PlainValues`) normalised (copied on first use when it
        was read in place)."""
        if type(found) is not extract.PlainValues:
            return found
        if found.ready:
            return found.normalised()
        with self._lock:
            return found.normalised()

    def _column(self, key: str) -> Mapping[str, Any]:
        found = self._value(self._part(key))
        return found if isinstance(found, dict) else _EMPTY

    def _template(self, instance_id: str) -> dict[str, Any] | None:
        templates = self._templates
        if instance_id not in templates:
            templates[instance_id] = extract.pod_template(
                self._lenient(PART_TEMPLATES),
                self._lenient(PART_SPECS),
                self._lenient(PART_METADATA),
                self._lenient(PART_FRAGMENTED),
                instance_id,
                aliases=self._aliases,
            )
        return templates[instance_id]

    def _lenient(self, key: str) -> Any:
        found = self._part(key)
        return None if isinstance(found, _Failed) else self._value(found)

    def _read(self, key: str) -> extract.PlainValues | None:
        """A plain part as read (maybe in place: for the request formula only), or None (no path, or failed)."""
        found = self._part(key)
        return found if type(found) is extract.PlainValues else None

    def _requests(self) -> Mapping[str, ResourceList | ComponentError]:
        found = self._part(PART_REQUESTS)
        return found if isinstance(found, dict) else _EMPTY

    def _compute_requests(self) -> dict[str, ResourceList | ComponentError]:
        """One replica's requests per instance: from the pod template, else the pod spec, else the fragments."""
        out: dict[str, ResourceList | ComponentError] = {}
        if not self._slot.has_pod_definition:
            return out
        templates, specs = self._read(PART_TEMPLATES), self._read(PART_SPECS)
        fragments = self._lenient(PART_FRAGMENTED)
        for instance_id in self._ids() or ():
            field = ""
            try:
                if templates is not None:
                    field = extract.TEMPLATE.field
                    out[instance_id] = self._pod_requests(templates, instance_id, True)
                elif specs is not None:
                    field = extract.SPEC.field
                    out[instance_id] = self._pod_requests(specs, instance_id, False)
                elif fragments is not None and instance_id in fragments:
                    field = extract.FRAGMENTED_FIELD
                    out[instance_id] = fragmented_requests(fragments[instance_id].to_dict(), self._aliases)
            except (QuantityError, ResourceSpecError) as error:
                where = f" of instance {instance_id!r}" if instance_id else ""
                out[instance_id] = ComponentError(self.name, field, f"cannot count the requests{where}: {error}")
        return out

    def _pod_requests(self, part: extract.PlainValues, instance_id: str, template: bool) -> ResourceList:
        """One replica's requests from a pod template (`template`) or a pod spec: read where the part was read,
        when it was read in place and the formula can vouch for the same answer there, else from its normalised
        copy (which gives any error with the message it always had)."""
        if part.in_place:
            spec = part.read.get(instance_id)
            if template:
                spec = spec.get("spec") if type(spec) is dict else None
            if spec is None:
                return pod_requests({}, self._aliases)
            if type(spec) is dict:
                found = pod_requests_in_place(spec, self._aliases)
                if found is not None:
                    return found
        spec = self._value(part).get(instance_id)
        if template:
            spec = spec.get("spec") if isinstance(spec, dict) else None
        return pod_requests(spec if isinstance(spec, dict) else {}, self._aliases)

    # --- what a consumer reads -------------------------------------------------------------------------------

    @property
    def instance_ids(self) -> tuple[str, ...]:
        """The instance ids in output order (`("",)` for a single instance; `()` when they cannot be read)."""
        return tuple(self._ids() or ())

    def require_instance_ids(self) -> tuple[str, ...]:
        """The instance ids; the `ExtractionError` of `instanceIdPath` when they cannot be read."""
        return tuple(self.strict(PART_IDS))

    @property
    def scales(self) -> dict[str, Scale] | None:
        """Instance id -> replica counts (None without a scaleDefinition, or when they cannot be read)."""
        found = self._lenient(PART_SCALES)
        return None if found is None else dict(found)

    def require_scales(self) -> dict[str, Scale] | None:
        """Instance id -> replica counts (None without a scaleDefinition); the `ExtractionError` of the failing
        path (instance ids or a scale path) when they cannot be read."""
        self.strict(PART_IDS)
        found: dict[str, Scale] | None = self.strict(PART_SCALES)
        return None if found is None else dict(found)

    @property
    def pod_definition_error(self) -> ComponentError | None:
        """Why the pod templates cannot be read (instance ids, template, spec, metadata or fragments), if so."""
        for key in (PART_IDS, PART_TEMPLATES, PART_SPECS, PART_METADATA, PART_FRAGMENTED):
            found = self._part(key)
            if isinstance(found, _Failed):
                error = found.errors[0]
                return ComponentError(error.component, error.field, error.message)
        return None

    @property
    def ids_error(self) -> ComponentError | None:
        """Why the instance ids cannot be read, if they cannot (then the component has no instances)."""
        found = self._part(PART_IDS)
        if isinstance(found, _Failed):
            error = found.errors[0]
            return ComponentError(error.component, error.field, error.message)
        return None

    @property
    def instances(self) -> dict[str, ResolvedInstance]:
        """Instance id -> its `ResolvedInstance`, in instance-id output order."""
        if not self._instances:
            with self._lock:
                if not self._instances:
                    self._instances.append({key: ResolvedInstance(self, key) for key in self._ids() or ()})
        return self._instances[0]

    def instance(self, instance_id: str) -> ResolvedInstance | None:
        return self.instances.get(instance_id)

    @property
    def status(self) -> WorkloadStatus | None:
        """The status this component's statusDefinition reads (in practice only the root has one)."""
        found = self._part(PART_STATUS)
        return found.value if isinstance(found, _WithErrors) else found  # type: ignore[no-any-return]

    @property
    def errors(self) -> tuple[ComponentError, ...]:
        """Every part that failed, in the order ids, template, spec, metadata, fragments, scale, requests, status
        (reading this evaluates every part)."""
        parts = self._parts
        absent = self._slot.absent
        for key in PART_ORDER:  # every part computed, in this order (a part absent from the definition is None)
            if key not in parts and key not in absent:
                self._part(key)
        requests = parts.get(PART_REQUESTS)
        # the common answer, nothing failed, in C: the parts' types, then the requests' (a ResourceList each)
        if not _FAILED_TYPES.intersection(map(type, parts.values())) and (
            not requests or _RESOURCE_LIST_TYPES.issuperset(map(type, requests.values()))
        ):
            return ()
        out: list[ComponentError] = []
        for key in PART_ORDER:
            found = parts.get(key)
            if isinstance(found, (_Failed, _WithErrors)):
                out.extend(ComponentError(e.component, e.field, e.message) for e in found.errors)
            elif key == PART_REQUESTS and found is not None:
                out.extend(value for value in found.values() if isinstance(value, ComponentError))
        return tuple(out)

    @property
    def warnings(self) -> tuple[ComponentError, ...]:
        """What resolved but is read other than it is written: a negative `replicas` or `minReplicas` (counted as
        0 by the replica rules; upstream's HPA marker -1 among them). Not errors: the part resolved."""
        scales = self._lenient(PART_SCALES)
        out: list[ComponentError] = []
        for instance_id, scale in (scales or {}).items():
            for name, value, field in (
                ("replicas", scale.replicas, "scaleDefinition.replicasPath"),
                ("minReplicas", scale.min_replicas, "scaleDefinition.minReplicasPath"),
            ):
                if value is not None and value < 0:
                    where = f"instance {instance_id!r}: " if instance_id else ""
                    out.append(
                        ComponentError(self.name, field, f"{where}{name} is {value}; a negative count reads as 0")
                    )
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "kind": gvk_dict(self.kind),
            "parent": self.parent,
            "children": list(self.children),
            "hasPodDefinition": self.has_pod_definition,
            "multiInstance": self.multi_instance,
            "instanceIds": list(self.instance_ids),
            "instances": [instance.to_dict() for instance in self.instances.values()],
        }
        status = self.status
        if status is not None:
            out["status"] = status.to_dict()
        out["errors"] = [error.to_dict() for error in self.errors]
        return out

    # --- strict reads, for `Component` ----------------------------------------------------------------------

    def strict(self, key: str) -> Any:
        """The part's value; its first `ExtractionError` raised when it failed."""
        found = self._part(key)
        if isinstance(found, (_Failed, _WithErrors)):
            raise found.errors[0]
        return self._value(found)


class _WithErrors(_Failed):
    """A part that came out (the status, which is read leniently field by field) together with what failed."""

    __slots__ = ("value",)

    def __init__(self, value: Any, errors: Sequence[ExtractionError]) -> None:
        super().__init__(errors)
        self.value = value


_EMPTY: Final[Mapping[str, Any]] = {}
_FAILED_TYPES: Final = frozenset({_Failed, _WithErrors})
_RESOURCE_LIST_TYPES: Final = frozenset({dict})  # what `_compute_requests` makes of a request it could count


class Resolution(_Frozen):
    """A workload object resolved through its definition: frozen, every part computed at most once, on first use.

    `components` holds every component (the root first, then the children in declaration order); `status` is the
    root's; `errors` every part that did not resolve (reading it resolves everything); `policy` where the
    definition's jq runs, for the object and for its pods. `related` holds the objects
    the caller supplied for definitions that reference other objects (looked up with `related_object`).
    """

    __slots__ = ("_snapshot", "_structure", "components", "karta", "object", "policy", "related")
    karta: Karta
    object: ObjectRef
    policy: EvaluationPolicy
    components: dict[str, ResolvedComponent]
    related: tuple[Mapping[str, Any], ...]
    _structure: Structure
    _snapshot: Snapshot

    def __init__(self, structure: Structure, snapshot: Snapshot, *, related: Sequence[Mapping[str, Any]] = ()) -> None:
        lock = RLock()  # one for every component's parts: a part of one may read another's
        components = {
            name: ResolvedComponent(slot, structure, snapshot, lock) for name, slot in structure.slots.items()
        }
        _set(self, "karta", structure.karta)
        _set(self, "object", object_ref(snapshot.identity_source()))
        _set(self, "policy", snapshot.policy)
        _set(self, "components", components)
        _set(self, "related", tuple(related))
        _set(self, "_structure", structure)
        _set(self, "_snapshot", snapshot)

    def __repr__(self) -> str:
        ref = self.object
        where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        return f"<Resolution {ref.kind} {where!r} via {self.definition!r}>"

    @property
    def definition(self) -> str:
        """The definition's name."""
        return self.karta.name

    @property
    def root(self) -> str:
        """The root component's name."""
        return self._structure.root

    @property
    def root_component(self) -> ResolvedComponent:
        return self.components[self._structure.root]

    @property
    def status(self) -> WorkloadStatus | None:
        """The root's status (None when the root has no statusDefinition)."""
        return self.root_component.status

    @property
    def errors(self) -> tuple[ComponentError, ...]:
        return tuple(error for component in self.components.values() for error in component.errors)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def warnings(self) -> tuple[ComponentError, ...]:
        """Every component's `warnings` (a negative replica count, read as 0), for front ends to show."""
        return tuple(warning for component in self.components.values() for warning in component.warnings)

    def component(self, name: str) -> ResolvedComponent:
        try:
            return self.components[name]
        except KeyError:
            raise ComponentNotFound(name, self.definition, list(self.components)) from None

    def __iter__(self) -> Iterator[ResolvedComponent]:
        return iter(self.components.values())

    def children_of(self, name: str) -> list[ResolvedComponent]:
        """Direct children of a component, in declaration order."""
        self.component(name)
        return [self.components[child] for child in self._structure.children_of(name) if child in self.components]

    def parent_of(self, name: str) -> ResolvedComponent | None:
        parent = self.component(name).parent
        return self.components.get(parent) if parent else None

    def evaluate(self, expression: str, *, field: str) -> list[Any]:
        """The outputs of one more of the definition's expressions on the object (an extension's, e.g. the
        `workloadmap.io/gang` annotation's), evaluated once under the resolution's policy and cached with the
        others; a jq failure is an `ExtractionError` at `field` (the expression's field path)."""
        return list(self._snapshot.outputs(expression, self.root, field))

    def related_object(self, api_version: str, kind: str, name: str, namespace: str = "") -> Mapping[str, Any] | None:
        """The supplied related object of that apiVersion, kind, name (and namespace), if the caller gave it."""
        for candidate in self.related:
            metadata = candidate.get("metadata")
            metadata = metadata if isinstance(metadata, Mapping) else {}
            if (
                candidate.get("apiVersion") == api_version
                and candidate.get("kind") == kind
                and metadata.get("name") == name
                and (metadata.get("namespace") or "") == namespace
            ):
                return candidate
        return None

    def to_dict(self) -> dict[str, Any]:
        status = self.status
        return {
            "definition": self.definition,
            "object": self.object.to_dict(),
            "root": self.root,
            "status": status.to_dict() if status is not None else None,
            "components": [component.to_dict() for component in self.components.values()],
            "errors": [error.to_dict() for error in self.errors],
        }


def object_ref(obj: Mapping[str, Any]) -> ObjectRef:
    """The identity of a Kubernetes object: apiVersion, kind, name (else generateName), namespace, uid and
    creation time (`""` when absent)."""
    metadata = obj.get("metadata")
    get = metadata.get if isinstance(metadata, dict) else _EMPTY.get
    # `_text` written out: this runs once per resolution (issue 19)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    name, namespace, uid, created = get("name"), get("namespace"), get("uid"), get("creationTimestamp")
    name = name if isinstance(name, str) else ""
    if not name:
        name = _text(get("generateName"))
    return ObjectRef(
        api_version if isinstance(api_version, str) else "",
        kind if isinstance(kind, str) else "",
        name,
        namespace if isinstance(namespace, str) else "",
        uid if isinstance(uid, str) else "",
        created if isinstance(created, str) else "",
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


__all__ = [
    "PART_FRAGMENTED",  # the part names (defined in `structure`), as component.py and workload.py read them here
    "PART_IDS",
    "PART_METADATA",
    "PART_ORDER",
    "PART_REQUESTS",
    "PART_SCALES",
    "PART_SPECS",
    "PART_STATUS",
    "PART_TEMPLATES",
    "Resolution",
    "ResolvedComponent",
    "ResolvedInstance",
    "object_ref",
]
