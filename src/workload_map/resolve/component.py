"""One component of a workload: its instances, what each holds, and write-back (karta-spec §3, §11)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from workload_map.model import GVK, Action, ComponentDefinition, FragmentedPodSpecDefinition
from workload_map.resolve._json import NotJSONError, json_copy
from workload_map.resolve.decode import (
    DecodeError,
    decode_fragment,
    decode_instance_ids,
    decode_object,
    decode_replicas,
)
from workload_map.resolve.errors import (
    DefinitionNotFound,
    ExtractionError,
    SuspendNotSupported,
    UpdateError,
)
from workload_map.resolve.results import (
    FRAGMENTED_FIELDS,
    FRAGMENTED_WRITE_ORDER,
    ExtractedInstance,
    FragmentedField,
    FragmentedPodSpec,
    Scale,
    WorkloadStatus,
)
from workload_map.resolve.status import ErrorSink, extract_status

if TYPE_CHECKING:
    from workload_map.resolve.workload import Workload

T = TypeVar("T")

_IDS_FIELD = "instanceIdPath"
_FRAGMENTED = "specDefinition.fragmentedPodSpecDefinition"
# (attribute of SpecDefinition, definition field, what upstream calls it)
_TEMPLATE = ("pod_template_spec_path", "specDefinition.podTemplateSpecPath", "pod template spec")
_SPEC = ("pod_spec_path", "specDefinition.podSpecPath", "pod spec")
_METADATA = ("metadata_path", "specDefinition.metadataPath", "pod metadata")
_SCALE_PATHS = (
    ("replicas_path", "scaleDefinition.replicasPath"),
    ("min_replicas_path", "scaleDefinition.minReplicasPath"),
    ("max_replicas_path", "scaleDefinition.maxReplicasPath"),
)


class Component:
    """A component of a workload, bound to the workload's shared document.

    Getters return None when the component has no definition for that field (as upstream); they raise
    `ExtractionError` when a path fails or its outputs do not fit. Values are fresh copies: change them and write
    them back with the `update_*` methods.
    """

    def __init__(self, workload: Workload, definition: ComponentDefinition, yaml_path: str) -> None:
        self._workload = workload
        self.definition = definition
        self.yaml_path = yaml_path  # e.g. spec.structureDefinition.childComponents[1]

    def __repr__(self) -> str:
        return f"<Component {self.name!r} of {self._workload!r}>"

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
    def is_root(self) -> bool:
        return self.definition is self._workload.definition.root

    @property
    def children(self) -> list[Component]:
        """Direct child components, in declaration order."""
        return self._workload.children_of(self.name)

    @property
    def has_pod_definition(self) -> bool:
        """True when the component sets podTemplateSpecPath, podSpecPath or fragmentedPodSpecDefinition."""
        return self.definition.has_pod_definition

    @property
    def multi_instance(self) -> bool:
        """True when the component has an `instanceIdPath`."""
        return bool(self.definition.instance_id_path)

    # --- extraction ------------------------------------------------------------------------------------------

    @property
    def instance_ids(self) -> list[str]:
        """The instance ids in output order; `[""]` for a single-instance component."""
        return self._ids()

    @property
    def pod_template_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodTemplateSpec (`{metadata, spec}`); None without `podTemplateSpecPath`."""
        return self._plain(_TEMPLATE, self._ids())

    @property
    def pod_specs(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> PodSpec; None without `podSpecPath`."""
        return self._plain(_SPEC, self._ids())

    @property
    def pod_metadata(self) -> dict[str, dict[str, Any]] | None:
        """Instance id -> pod ObjectMeta; None without `metadataPath`."""
        return self._plain(_METADATA, self._ids())

    @property
    def fragmented_pod_specs(self) -> dict[str, FragmentedPodSpec] | None:
        """Instance id -> the 11 scattered pod fields; None without `fragmentedPodSpecDefinition`."""
        return self._fragmented(self._ids())

    @property
    def scales(self) -> dict[str, Scale] | None:
        """Instance id -> replica counts; None without `scaleDefinition`."""
        return self._scales(self._ids())

    @property
    def status(self) -> WorkloadStatus | None:
        """The status this component's `statusDefinition` reads (in practice only the root has one)."""
        return self._status(None)

    @property
    def instances(self) -> dict[str, ExtractedInstance]:
        """Instance id -> everything extracted for it (each field set only when its definition exists)."""
        ids = self._ids()
        return self._assemble(
            ids,
            templates=self._plain(_TEMPLATE, ids),
            specs=self._plain(_SPEC, ids),
            metadata=self._plain(_METADATA, ids),
            fragmented=self._fragmented(ids),
            scales=self._scales(ids),
        )

    # --- extraction internals (shared with the lenient `Workload.resolve`) ------------------------------------

    def _outputs(self, expr: str, field: str) -> list[Any]:
        return self._workload._session.outputs(expr, self.name, field)

    def _ids(self) -> list[str]:
        path = self.definition.instance_id_path
        if not path:
            return [""]
        values = self._outputs(path, _IDS_FIELD)
        try:
            return decode_instance_ids(values)
        except DecodeError as exc:
            raise ExtractionError(self.name, _IDS_FIELD, f"failed to extract instance ids: {exc}") from None

    def _zip(self, field: str, ids: list[str], values: list[T]) -> dict[str, T]:
        if len(ids) != len(values):
            order = f", in the order of {_IDS_FIELD}" if self.multi_instance else ""
            raise ExtractionError(
                self.name,
                field,
                f"instance ids count ({len(ids)}) does not match results count ({len(values)}): the path must "
                f"yield exactly one output per instance{order}",
            )
        return dict(zip(ids, values, strict=True))  # a later duplicate id overwrites an earlier one, as upstream

    def _decode_each(self, field: str, values: list[Any], decode: Callable[[int, Any], T]) -> list[T]:
        try:
            return [decode(index, value) for index, value in enumerate(values)]
        except DecodeError as exc:
            raise ExtractionError(self.name, field, str(exc)) from None

    def _plain(self, which: tuple[str, str, str], ids: list[str]) -> dict[str, dict[str, Any]] | None:
        attr, field, _ = which
        spec = self.definition.spec_definition
        path = getattr(spec, attr) if spec is not None else None
        if not path:
            return None
        wanted = {"pod_template_spec_path": "PodTemplateSpec", "pod_spec_path": "PodSpec"}.get(attr, "ObjectMeta")
        values = self._decode_each(
            field, self._outputs(path, field), lambda index, value: decode_object(index, value, wanted)
        )
        return self._zip(field, ids, values)

    def _fragmented(self, ids: list[str]) -> dict[str, FragmentedPodSpec] | None:
        spec = self.definition.spec_definition
        definition = spec.fragmented_pod_spec_definition if spec is not None else None
        if definition is None:
            return None
        columns: dict[str, list[Any]] = {}
        for item in FRAGMENTED_FIELDS:
            path = getattr(definition, item.path_attr)
            if not path:
                continue
            field = f"{_FRAGMENTED}.{item.path_field}"
            columns[item.attr] = self._decode_each(
                field, self._outputs(path, field), partial(decode_fragment, item.kind)
            )
        count = max((len(column) for column in columns.values()), default=0)
        specs = [
            FragmentedPodSpec(**{attr: column[index] for attr, column in columns.items() if index < len(column)})
            for index in range(count)
        ]
        return self._zip(_FRAGMENTED, ids, specs)

    def _scales(self, ids: list[str]) -> dict[str, Scale] | None:
        definition = self.definition.scale_definition
        if definition is None:
            return None
        columns: dict[str, list[int | None]] = {}
        for attr, field in _SCALE_PATHS:
            path = getattr(definition, attr)
            if not path:
                continue
            try:
                columns[attr.removesuffix("_path")] = [
                    decode_replicas(index, value) for index, value in enumerate(self._outputs(path, field))
                ]
            except DecodeError as exc:
                raise ExtractionError(self.name, field, f"not a replica count: {exc}") from None
        count = max((len(column) for column in columns.values()), default=0)
        scales = [
            Scale(**{attr: column[index] for attr, column in columns.items() if index < len(column)})
            for index in range(count)
        ]
        return self._zip("scaleDefinition", ids, scales)

    def _status(self, on_error: ErrorSink | None) -> WorkloadStatus | None:
        definition = self.definition.status_definition
        if definition is None:
            return None
        return extract_status(self.name, definition, self._outputs, on_error)

    @staticmethod
    def _assemble(
        ids: list[str],
        *,
        templates: dict[str, dict[str, Any]] | None,
        specs: dict[str, dict[str, Any]] | None,
        metadata: dict[str, dict[str, Any]] | None,
        fragmented: dict[str, FragmentedPodSpec] | None,
        scales: dict[str, Scale] | None,
    ) -> dict[str, ExtractedInstance]:
        return {
            instance_id: ExtractedInstance(
                instance_id=instance_id,
                pod_template_spec=templates.get(instance_id) if templates is not None else None,
                pod_spec=specs.get(instance_id) if specs is not None else None,
                pod_metadata=metadata.get(instance_id) if metadata is not None else None,
                fragmented_pod_spec=fragmented.get(instance_id) if fragmented is not None else None,
                scale=scales.get(instance_id) if scales is not None else None,
            )
            for instance_id in ids
        }

    # --- write-back ---------------------------------------------------------------------------------------------

    def update_pod_template_specs(self, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Replace each instance's pod template spec (fields absent from the new value disappear)."""
        self._update_plain(_TEMPLATE, values)

    def update_pod_specs(self, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Replace each instance's pod spec (e.g. `containers: []` empties the list)."""
        self._update_plain(_SPEC, values)

    def update_pod_metadata(self, values: Mapping[str, Mapping[str, Any] | None]) -> None:
        """Replace each instance's pod metadata."""
        self._update_plain(_METADATA, values)

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
                _FRAGMENTED,
                f"component {self.name} does not have fragmented pod spec definition: nothing to write to",
            )
        ids = self._ids_for_update(_FRAGMENTED)
        ordered = self._in_id_order(_FRAGMENTED, ids, values)
        specs = [_as_fragmented(self.name, instance_id, value) for instance_id, value in zip(ids, ordered, strict=True)]
        for item in FRAGMENTED_WRITE_ORDER:
            column = [getattr(value, item.attr) for value in specs]
            if all(_upstream_empty(item, value) for value in column):
                continue
            field = f"{_FRAGMENTED}.{item.path_field}"
            path = _fragment_path(definition, item)
            if not path:
                raise UpdateError(
                    self.name, field, f"failed to update {item.key}: path is not defined and values are not empty"
                )
            for instance_id, value in zip(ids, column, strict=True):
                _check_fragment(self.name, field, instance_id, item, value)
            if item.kind == "string":
                column = [value or "" for value in column]
            self._workload._session.write(self.name, field, path, column, zip_values=self.multi_instance)

    def _update_plain(self, which: tuple[str, str, str], values: Mapping[str, Mapping[str, Any] | None]) -> None:
        attr, field, what = which
        spec = self.definition.spec_definition
        path = getattr(spec, attr) if spec is not None else None
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
        self._workload._session.write(self.name, field, path, checked, zip_values=self.multi_instance)

    def _ids_for_update(self, field: str) -> list[str]:
        try:
            return self._ids()
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
        for index, (action, value) in enumerate(zip(actions, decoded, strict=True)):
            self._workload._session.write(
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
            raise UpdateError(component, _FRAGMENTED, f"instance {instance_id!r}: {exc}") from None
    raise UpdateError(
        component,
        _FRAGMENTED,
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
