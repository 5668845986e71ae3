"""One component of a workload: its instances, what each holds, and write-back (karta-spec §3, §11)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from workload_map.model import GVK, Action, FragmentedPodSpecDefinition
from workload_map.resolve._json import NotJSONError, fast_copy, json_copy
from workload_map.resolve.errors import (
    DefinitionNotFound,
    ExtractionError,
    SuspendNotSupported,
    UpdateError,
)
from workload_map.resolve.extract import FRAGMENTED_FIELD, METADATA, SPEC, TEMPLATE, PlainPart, plain_path
from workload_map.resolve.resolution import (
    PART_FRAGMENTED,
    PART_IDS,
    PART_METADATA,
    PART_SCALES,
    PART_SPECS,
    PART_TEMPLATES,
    ResolvedComponent,
    ResolvedInstance,
)
from workload_map.resolve.results import (
    FRAGMENTED_FIELDS,
    FRAGMENTED_WRITE_ORDER,
    FragmentedField,
    FragmentedPodSpec,
    Scale,
    WorkloadStatus,
)
from workload_map.resolve.session import Session
from workload_map.resolve.structure import ComponentSlot

T = TypeVar("T")


class Component:
    """A component of a workload, bound to the workload's session.

    Getters read the workload's current `Resolution` and raise the part's `ExtractionError` when a path fails or
    its outputs do not fit; they return None when the component has no definition for that part (as upstream).
    Values are fresh copies: change them and write them back with the `update_*` methods.
    """

    def __init__(self, slot: ComponentSlot, session: Session, components: Mapping[str, Component]) -> None:
        self.definition = slot.definition
        self.yaml_path = slot.yaml_path  # e.g. spec.structureDefinition.childComponents[1]
        self.is_root = slot.is_root
        self._session = session
        self._components = components  # every component of the workload, by name (shared, filled by the workload)

    def __repr__(self) -> str:
        return f"<Component {self.name!r} of {self._session.structure.karta.name!r}>"

    # --- identity ----------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def kind(self) -> GVK | None:
        """The component's GVK, or None for a logical grouping component."""
        return self.definition.kind

    @property
    def parent(self) -> str | None:
        """The name of the parent component (`ownerRef`), None for the root."""
        return self.definition.owner_ref or None

    @property
    def children(self) -> list[Component]:
        """Direct child components, in declaration order."""
        return [self._components[name] for name in self._session.structure.children_of(self.name)]

    @property
    def has_pod_definition(self) -> bool:
        """True when the component sets podTemplateSpecPath, podSpecPath or fragmentedPodSpecDefinition."""
        return self.definition.has_pod_definition

    @property
    def multi_instance(self) -> bool:
        """True when the component has an `instanceIdPath`."""
        return bool(self.definition.instance_id_path)

    # --- extraction (strict reads of the current resolution) --------------------------------------------------

    @property
    def resolved(self) -> ResolvedComponent:
        """This component in the workload's current `Resolution` (lenient: failures are in its `errors`)."""
        return self._session.resolution.components[self.name]

    def _strict(self, part: str) -> Any:
        resolved = self.resolved
        resolved.strict(PART_IDS)
        return resolved.strict(part)

    @property
    def instance_ids(self) -> list[str]:
        """The instance ids in output order; `[""]` for a single-instance component."""
        return list(self.resolved.strict(PART_IDS))

    @property
    def pod_template_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodTemplateSpec (`{metadata, spec}`); None without `podTemplateSpecPath`."""
        return _copy(self._strict(PART_TEMPLATES))

    @property
    def pod_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodSpec; None without `podSpecPath`."""
        return _copy(self._strict(PART_SPECS))

    @property
    def pod_metadata(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> pod ObjectMeta; None without `metadataPath`."""
        return _copy(self._strict(PART_METADATA))

    @property
    def fragmented_pod_specs(self) -> dict[str, FragmentedPodSpec] | None:
        """Instance id -> the 11 scattered pod fields; None without `fragmentedPodSpecDefinition`."""
        found: dict[str, FragmentedPodSpec] | None = self._strict(PART_FRAGMENTED)
        return None if found is None else {key: _copy_fragment(value) for key, value in found.items()}

    @property
    def scales(self) -> dict[str, Scale] | None:
        """Instance id -> replica counts; None without `scaleDefinition`."""
        found: dict[str, Scale] | None = self._strict(PART_SCALES)
        return None if found is None else dict(found)

    @property
    def status(self) -> WorkloadStatus | None:
        """The status this component's `statusDefinition` reads (in practice only the root has one)."""
        return self._session.status(self.name)  # without a `Resolution` when none is made yet

    @property
    def instances(self) -> dict[str, ResolvedInstance]:
        """Instance id -> everything extracted for it (each field set only when its definition exists); raises the
        first failed part's `ExtractionError`."""
        for part in (PART_TEMPLATES, PART_SPECS, PART_METADATA, PART_FRAGMENTED, PART_SCALES):
            self._strict(part)
        return self.resolved.instances

    # --- write-back ---------------------------------------------------------------------------------------------

    def update_pod_template_specs(self, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Replace each instance's pod template spec (fields absent from the new value disappear)."""
        self._update_plain(TEMPLATE, values)

    def update_pod_specs(self, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Replace each instance's pod spec (e.g. `containers: []` empties the list)."""
        self._update_plain(SPEC, values)

    def update_pod_metadata(self, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Replace each instance's pod metadata."""
        self._update_plain(METADATA, values)

    def update_fragmented_pod_specs(self, values: Mapping[str, FragmentedPodSpec | Mapping[str, Any]]) -> None:
        """Write the scattered pod fields of each instance, field by field in upstream's order.

        A field whose values are all empty is skipped (so an extract -> update round trip adds nothing); a field
        with a value but no path in the definition is an error.
        """
        spec = self.definition.spec_definition
        definition = spec.fragmented_pod_spec_definition if spec is not None else None
        if definition is None:
            raise DefinitionNotFound(
                self.name,
                FRAGMENTED_FIELD,
                f"component {self.name} does not have fragmented pod spec definition: nothing to write to",
            )
        ids = self._ids_for_update(FRAGMENTED_FIELD)
        ordered = self._in_id_order(FRAGMENTED_FIELD, ids, values)
        specs = [_as_fragmented(self.name, instance_id, value) for instance_id, value in zip(ids, ordered, strict=True)]
        with self._session.transaction():  # field by field, all or nothing
            self._write_fragments(definition, ids, specs)

    def _write_fragments(
        self, definition: FragmentedPodSpecDefinition, ids: list[str], specs: list[FragmentedPodSpec]
    ) -> None:
        for item in FRAGMENTED_WRITE_ORDER:
            column = [getattr(value, item.attr) for value in specs]
            if all(_upstream_empty(item, value) for value in column):
                continue
            field = f"{FRAGMENTED_FIELD}.{item.path_field}"
            path = _fragment_path(definition, item)
            if not path:
                raise UpdateError(
                    self.name, field, f"failed to update {item.key}: path is not defined and values are not empty"
                )
            for instance_id, value in zip(ids, column, strict=True):
                _check_fragment(self.name, field, instance_id, item, value)
            if item.kind == "string":
                column = [value or "" for value in column]
            self._session.write(self.name, field, path, column, zip_values=self.multi_instance, instances=ids)

    def _update_plain(self, part: PlainPart, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        field, what = part.field, part.what
        path = plain_path(self.definition, part)
        if not path:
            raise DefinitionNotFound(
                self.name, field, f"component {self.name} does not have {what} definition: nothing to write to"
            )
        ids = self._ids_for_update(field)
        ordered = self._in_id_order(field, ids, values)
        checked: list[Any] = []
        for instance_id, value in zip(ids, ordered, strict=True):
            if value is not None and not isinstance(value, Mapping):
                raise UpdateError(
                    self.name,
                    field,
                    f"the {what} for instance {instance_id!r} is a {type(value).__name__}, not a mapping",
                )
            checked.append(self._json(field, value))
        self._session.write(self.name, field, path, checked, zip_values=self.multi_instance, instances=ids)

    def _ids_for_update(self, field: str) -> list[str]:
        try:
            return self.instance_ids
        except ExtractionError as exc:
            raise UpdateError(self.name, field, f"failed to get instance ids: {exc.message}") from exc

    def _in_id_order(self, field: str, ids: list[str], values: Mapping[str, T]) -> list[T]:
        ordered: list[T] = []
        for instance_id in ids:
            if instance_id not in values:
                known = ", ".join(repr(key) for key in values) or "none"
                raise UpdateError(
                    self.name,
                    field,
                    f"value not found for instance id: {instance_id!r} (values given for {known}); give one value "
                    f"per instance id",
                )
            ordered.append(values[instance_id])
        return ordered

    def _json(self, field: str, value: Any) -> Any:
        try:
            return json_copy(value)
        except NotJSONError as exc:
            raise UpdateError(self.name, field, str(exc)) from None

    # --- suspend and resume -----------------------------------------------------------------------------------

    @property
    def can_suspend(self) -> bool:
        return self.definition.suspend_definition is not None

    def suspend(self) -> None:
        """Apply the `suspendActions` in order."""
        definition = self._suspend_definition()
        self._apply(definition.suspend_actions, "suspendDefinition.suspendActions")

    def resume(self) -> None:
        """Apply the `resumeActions` in order."""
        definition = self._suspend_definition()
        self._apply(definition.resume_actions, "suspendDefinition.resumeActions")

    def _suspend_definition(self) -> Any:
        definition = self.definition.suspend_definition
        if definition is None:
            raise SuspendNotSupported(
                self.name,
                "suspendDefinition",
                f"component {self.name} does not have suspendDefinition, so it cannot be suspended or resumed "
                f"through its definition",
            )
        return definition

    def _apply(self, actions: Sequence[Action], field: str) -> None:
        name = field.rpartition(".")[2]
        decoded: list[Any] = []
        for index, action in enumerate(actions):  # decode every value before the first write
            try:
                decoded.append(json.loads(action.value))
            except ValueError as exc:
                raise UpdateError(
                    self.name,
                    f"{field}[{index}].value",
                    f"{name}[{index}]: failed to decode value: {action.value!r} is not a JSON literal ({exc}); "
                    f'write strings with quotes, e.g. "\\"Suspended\\""',
                ) from None
        with self._session.transaction():  # every action or none
            for index, (action, value) in enumerate(zip(actions, decoded, strict=True)):
                self._session.write(
                    self.name, f"{field}[{index}].path", action.path, [value], zip_values=False, keep_absent_empty=False
                )


def _fragment_path(definition: FragmentedPodSpecDefinition, item: FragmentedField) -> str | None:
    path: str | None = getattr(definition, item.path_attr)
    return path


def _upstream_empty(item: FragmentedField, value: Any) -> bool:
    """Upstream's per-field "empty" test: "" for strings, nil or length 0 for maps and lists, nil for objects."""
    if value is None:
        return True
    if item.kind == "object":
        return False
    return isinstance(value, str | dict | list) and len(value) == 0


def _as_fragmented(component: str, instance_id: str, value: Any) -> FragmentedPodSpec:
    if isinstance(value, FragmentedPodSpec):
        return value
    if isinstance(value, Mapping):
        try:
            return FragmentedPodSpec.from_dict(value)
        except ValueError as exc:
            raise UpdateError(component, FRAGMENTED_FIELD, f"instance {instance_id!r}: {exc}") from None
    raise UpdateError(
        component,
        FRAGMENTED_FIELD,
        f"the value for instance {instance_id!r} is a {type(value).__name__}, not a FragmentedPodSpec or mapping",
    )


def _check_fragment(component: str, field: str, instance_id: str, item: FragmentedField, value: Any) -> None:
    if value is None:
        return
    wanted = {"string": str, "string_map": dict, "object": dict, "object_list": list}[item.kind]
    ok = isinstance(value, wanted)
    if ok and item.kind == "string_map":
        ok = all(isinstance(key, str) and isinstance(text, str) for key, text in value.items())
    if ok and item.kind == "object_list":
        ok = all(isinstance(entry, dict) for entry in value)
    if not ok:
        described = {
            "string": "a string",
            "string_map": "a map of strings",
            "object": "an object",
            "object_list": "a list of objects",
        }[item.kind]
        raise UpdateError(
            component, field, f"{item.key} for instance {instance_id!r} must be {described}, not {type(value).__name__}"
        )


def _copy(found: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]] | None:
    return None if found is None else {key: fast_copy(value) for key, value in found.items()}


def _copy_fragment(value: FragmentedPodSpec) -> FragmentedPodSpec:
    return FragmentedPodSpec(**{item.attr: fast_copy(getattr(value, item.attr)) for item in FRAGMENTED_FIELDS})
