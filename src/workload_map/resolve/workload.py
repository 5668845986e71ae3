"""`Workload`: a Kubernetes object resolved through its Karta definition (karta-spec §11, §12.1)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from workload_map.model import GVK, ComponentDefinition, Karta
from workload_map.resolve._json import NotJSONError, fast_copy, json_copy, merge_patch
from workload_map.resolve.component import _METADATA, _SPEC, _TEMPLATE, Component
from workload_map.resolve.errors import (
    ComponentNotFound,
    ExtractionError,
    GVKMismatchError,
    InvalidDefinitionError,
    InvalidObjectError,
    SuspendNotSupported,
)
from workload_map.resolve.results import (
    FRAGMENTED_FIELDS,
    ComponentError,
    ObjectRef,
    Resolution,
    ResolvedComponent,
    WorkloadStatus,
)
from workload_map.resolve.session import Session
from workload_map.resolve.tree import WorkloadTree, build_tree
from workload_map.validation import Finding, errors
from workload_map.validation import validate as validate_definition


class Workload:
    """A Kubernetes object seen through its Karta definition.

    The caller's object is copied once and never changed. Every component reads and writes one shared document,
    so an update through one component is seen by every later read; `to_object()` and `merge_patch()` give the
    result. Strict accessors (`components[...]`, `.status`, `Component.pod_specs`, ...) raise on a broken path;
    `resolve()` captures each failure as a `ComponentError` and returns everything that did resolve.

    Raises `InvalidDefinitionError` (validation errors; warnings do not block), `InvalidObjectError` (not a
    mapping) and `GVKMismatchError` (another group or kind than the definition's root; another version of the
    same group and kind resolves). `validate=False` skips validation (e.g. already done by the caller);
    `check_gvk=False` skips the kind check (partial objects in tests).
    """

    def __init__(
        self, definition: Karta, obj: Mapping[str, Any], *, validate: bool = True, check_gvk: bool = True
    ) -> None:
        if not isinstance(definition, Karta):
            raise TypeError(
                f"definition must be a Karta (see workload_map.load_definitions), not {type(definition).__name__}"
            )
        if validate:
            _check_definition(definition)
        if not isinstance(obj, Mapping):
            raise InvalidObjectError(
                f"the workload object must be a mapping (a Kubernetes object), not {type(obj).__name__}"
            )
        try:
            document: dict[str, Any] = json_copy(obj)
        except NotJSONError as exc:
            raise InvalidObjectError(f"the workload object cannot be read as JSON: {exc}") from None
        self.definition = definition
        self.object_gvk = _object_gvk(document)
        if check_gvk:
            _check_gvk(definition, self.object_gvk)
        self._components: dict[str, Component] = {}
        self._children: dict[str, list[str]] = {}
        yaml_prefix = "spec.structureDefinition"
        entries = [(definition.root, f"{yaml_prefix}.rootComponent")] + [
            (child, f"{yaml_prefix}.childComponents[{index}]") for index, child in enumerate(definition.children)
        ]
        for component_definition, yaml_path in entries:
            self._components.setdefault(component_definition.name, Component(self, component_definition, yaml_path))
        for component_definition in definition.children:
            parent = component_definition.owner_ref
            if parent:
                self._children.setdefault(parent, []).append(component_definition.name)
        self._session = Session(document, _expressions(definition))

    def __repr__(self) -> str:
        ref = self.object_ref
        where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        return f"<Workload {ref.kind} {where!r} via {self.definition.name!r}>"

    # --- structure ---------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.object_ref.name

    @property
    def object_ref(self) -> ObjectRef:
        """apiVersion, kind, name, namespace and uid of the object (cheap: no copy)."""
        obj = self._session.obj
        metadata = obj.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        return ObjectRef(
            api_version=_text(obj.get("apiVersion")),
            kind=_text(obj.get("kind")),
            name=_text(metadata.get("name")) or _text(metadata.get("generateName")),
            namespace=_text(metadata.get("namespace")),
            uid=_text(metadata.get("uid")),
        )

    @property
    def root(self) -> Component:
        return self._components[self.definition.root.name]

    @property
    def components(self) -> dict[str, Component]:
        """Every component by name: the root first, then the children in declaration order."""
        return dict(self._components)

    def component(self, name: str) -> Component:
        """The component of that name; `ComponentNotFound` (a KeyError) names the known ones."""
        try:
            return self._components[name]
        except KeyError:
            raise ComponentNotFound(name, self.definition.name, list(self._components)) from None

    def __iter__(self) -> Iterator[Component]:
        return iter(self._components.values())

    def children_of(self, name: str) -> list[Component]:
        """Direct children of a component, in declaration order."""
        self.component(name)
        return [self._components[child] for child in self._children.get(name, [])]

    def parent_of(self, name: str) -> Component | None:
        """The parent of a component (None for the root, or for a child whose ownerRef names no component)."""
        parent = self.component(name).parent
        return self._components.get(parent) if parent else None

    # --- status ------------------------------------------------------------------------------------------------

    @property
    def status(self) -> WorkloadStatus:
        """The root's status: primary `phase`, all matched `phases`, `raw_phase`, `conditions`."""
        status = self.root.status
        if status is None:
            raise ExtractionError(
                self.root.name, "statusDefinition", "the root component has no statusDefinition; add one to read status"
            )
        return status

    # --- lenient resolution ------------------------------------------------------------------------------------

    def resolve(self) -> Resolution:
        """Everything that resolves, with one `ComponentError` per part that does not (nothing raises)."""
        self._session.prefetch()
        resolved: dict[str, ResolvedComponent] = {}
        all_errors: list[ComponentError] = []
        root_status: WorkloadStatus | None = None
        for component in self._components.values():
            item = _resolve_component(component)
            resolved[component.name] = item
            all_errors.extend(item.errors)
            if component.is_root:
                root_status = item.status
        return Resolution(
            definition=self.definition.name,
            object=self.object_ref,
            root=self.root.name,
            components=resolved,
            status=root_status,
            errors=tuple(all_errors),
        )

    def tree(self) -> WorkloadTree:
        """The structural tree: components, their instances sorted by key, child components (failures carried as
        errors on their nodes, as in `resolve()`)."""
        return build_tree(self.resolve())

    # --- suspend and resume ------------------------------------------------------------------------------------

    @property
    def can_suspend(self) -> bool:
        """True when some component of the definition has a suspendDefinition."""
        return any(component.can_suspend for component in self._components.values())

    def suspend(self) -> None:
        """Apply the suspend actions of every component that has a suspendDefinition (root first)."""
        for component in self._suspendable("suspended"):
            component.suspend()

    def resume(self) -> None:
        """Apply the resume actions of every component that has a suspendDefinition (root first)."""
        for component in self._suspendable("resumed"):
            component.resume()

    def _suspendable(self, verb: str) -> list[Component]:
        components = [component for component in self._components.values() if component.can_suspend]
        if not components:
            kind = self.definition.root_gvk
            raise SuspendNotSupported(
                self.root.name,
                "suspendDefinition",
                f"{kind.kind if kind else 'this workload type'} cannot be {verb}: definition "
                f"{self.definition.name!r} has no suspendDefinition",
            )
        return components

    # --- the result --------------------------------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        """True once any write changed the document."""
        return self._session.original is not None and self._session.original != self._session.obj

    def to_object(self) -> dict[str, Any]:
        """The current document as a plain dict, ready to apply; it must still be a Kubernetes object."""
        obj = self._session.obj
        metadata = obj.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        for missing, present in (
            ("apiVersion", obj.get("apiVersion")),
            ("kind", obj.get("kind")),
            ("metadata.name or metadata.generateName", metadata.get("name") or metadata.get("generateName")),
        ):
            if not present:
                raise InvalidObjectError(f"invalid Kubernetes object: missing {missing}")
        return fast_copy(obj)  # type: ignore[no-any-return]

    def merge_patch(self) -> dict[str, Any]:
        """The JSON merge patch (RFC 7386) from the original object to the current document; `{}` if unchanged."""
        original = self._session.original
        if original is None:
            return {}
        patch: dict[str, Any] = merge_patch(original, self._session.obj)
        return patch

    diff_patch = merge_patch


def resolve(definition: Karta, obj: Mapping[str, Any], *, validate: bool = True, check_gvk: bool = True) -> Resolution:
    """Resolve `obj` through `definition`, capturing per-component failures (see `Workload.resolve`)."""
    return Workload(definition, obj, validate=validate, check_gvk=check_gvk).resolve()


# --- helpers ------------------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _object_gvk(obj: Mapping[str, Any]) -> GVK | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return None
    return GVK.from_api_version(api_version, kind)


def _check_gvk(definition: Karta, actual: GVK | None) -> None:
    expected = definition.root_gvk
    if expected is None or not expected.kind:
        return
    wanted = f"{expected.api_version}, kind {expected.kind}"
    if actual is None:
        raise GVKMismatchError(
            f"the object has no apiVersion or kind; definition {definition.name!r} resolves {wanted}",
            expected=str(expected),
            actual="",
        )
    if actual.group != expected.group or actual.kind != expected.kind:
        hint = ""
        if actual.group == expected.group and actual.kind.lower() == expected.kind.lower():
            hint = " (kinds are case-sensitive)"
        raise GVKMismatchError(
            f"the object is {actual.api_version}, kind {actual.kind}, but definition {definition.name!r} resolves "
            f"{wanted}{hint}; pick the definition for this kind",
            expected=str(expected),
            actual=str(actual),
        )


def _check_definition(definition: Karta) -> None:
    findings = _validation_errors(definition)
    if findings:
        raise InvalidDefinitionError(definition.name, findings)


_ENCODER = msgspec.json.Encoder()
_VALIDATED: OrderedDict[bytes, list[Finding]] = OrderedDict()
_VALIDATED_MAX = 256


def _validation_errors(definition: Karta) -> list[Finding]:
    """The error findings of the validator (warnings never block), cached by the definition's content.

    Resolving many objects of one kind validates its definition once; a definition changed in place is a new key.
    """
    key = _ENCODER.encode(definition)
    found = _VALIDATED.get(key)
    if found is None:
        found = errors(validate_definition(definition))
        _VALIDATED[key] = found
        if len(_VALIDATED) > _VALIDATED_MAX:
            _VALIDATED.popitem(last=False)
    else:
        _VALIDATED.move_to_end(key)
    return found


def _expressions(definition: Karta) -> list[str]:
    """Every workload-side expression of a definition (pod selectors run on pods, actions are writes)."""
    expressions: list[str] = []
    for component in definition.components:
        expressions.extend(_component_expressions(component))
    return expressions


def _component_expressions(component: ComponentDefinition) -> Iterator[str]:
    if component.instance_id_path:
        yield component.instance_id_path
    spec = component.spec_definition
    if spec is not None:
        for path in (spec.pod_template_spec_path, spec.pod_spec_path, spec.metadata_path):
            if path:
                yield path
        fragmented = spec.fragmented_pod_spec_definition
        if fragmented is not None:
            for item in FRAGMENTED_FIELDS:
                path = getattr(fragmented, item.path_attr)
                if path:
                    yield path
    scale = component.scale_definition
    if scale is not None:
        for path in (scale.replicas_path, scale.min_replicas_path, scale.max_replicas_path):
            if path:
                yield path
    status = component.status_definition
    if status is not None:
        if status.phase_definition is not None:
            yield status.phase_definition.path
        if status.conditions_definition is not None:
            yield status.conditions_definition.path
        for _, matchers in status.status_mappings.entries():
            for matcher in matchers or ():
                if matcher.by_expression is not None:
                    yield matcher.by_expression.expression


def _resolve_component(component: Component) -> ResolvedComponent:
    errors: list[ComponentError] = []

    def record(error: ExtractionError) -> None:
        errors.append(ComponentError(error.component, error.field, error.message))

    def attempt(getter: Any, *args: Any) -> Any:
        try:
            return getter(*args)
        except ExtractionError as error:
            record(error)
            return None

    ids: list[str] | None = attempt(component._ids)
    instances = {}
    if ids is not None:
        instances = component._assemble(
            ids,
            templates=attempt(component._plain, _TEMPLATE, ids),
            specs=attempt(component._plain, _SPEC, ids),
            metadata=attempt(component._plain, _METADATA, ids),
            fragmented=attempt(component._fragmented, ids),
            scales=attempt(component._scales, ids),
        )
    status = component._status(record)
    return ResolvedComponent(
        name=component.name,
        kind=component.kind,
        parent=component.parent,
        children=tuple(child.name for child in component.children),
        has_pod_definition=component.has_pod_definition,
        multi_instance=component.multi_instance,
        instance_ids=tuple(ids or ()),
        instances=instances,
        status=status,
        errors=tuple(errors),
    )


__all__ = ["Workload", "resolve"]
