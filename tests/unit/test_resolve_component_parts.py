"""A `ResolvedComponent` reads what the definition says of it from its `ComponentSlot` (shared by every resolution
of the definition), and its `errors` answers "nothing failed" from the parts' types: both must give what they gave
when each component held its own copies and `errors` looked at every part in turn."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.test_codegen import DEFINITIONS, OBJECTS
from workload_map.jq import INPROCESS
from workload_map.model import ComponentDefinition, ScaleDefinition, SpecDefinition
from workload_map.resolve import ExtractionError, Workload, extract
from workload_map.resolve.decode import DecodeError, decode_instance_ids, decode_object, decode_replicas, decode_string
from workload_map.resolve.resolution import (
    PART_ORDER,
    PART_REQUESTS,
    ResolvedComponent,
    _Failed,
    _WithErrors,
    object_ref,
)
from workload_map.resolve.results import ComponentError, ObjectRef, Scale
from workload_map.resolve.snapshot import Snapshot
from workload_map.resolve.structure import structure_of


def _errors_part_by_part(component: ResolvedComponent) -> tuple[ComponentError, ...]:
    """`errors` as it was written before the shortcut: every part read in order, each failure in turn."""
    out: list[ComponentError] = []
    for key in PART_ORDER:
        found = component._part(key)
        if isinstance(found, (_Failed, _WithErrors)):
            out.extend(ComponentError(e.component, e.field, e.message) for e in found.errors)
        elif key == PART_REQUESTS:
            out.extend(value for value in found.values() if isinstance(value, ComponentError))
    return tuple(out)


def _broken(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The object with values where the definitions read counts, ids and requests that do not fit."""
    variants = []
    for bad in ("many", -3, 2.5, True, {"x": 1}, [1], None):
        changed = copy.deepcopy(obj)
        spec = changed.get("spec")
        if isinstance(spec, dict):
            for key in list(spec):
                if key.endswith(("eplicas", "Specs", "Jobs", "Groups")) or key in ("template", "size"):
                    spec[key] = bad
        variants.append(changed)
    amounts = copy.deepcopy(obj)
    for container in _containers(amounts):
        container["resources"] = {"requests": {"cpu": "lots"}, "limits": {"memory": [1]}}
    variants.append(amounts)
    return variants


def _containers(value: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            containers = node.get("containers")
            if isinstance(containers, list):
                found.extend(item for item in containers if isinstance(item, dict))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def test_errors_are_every_failed_part_in_order() -> None:
    checked = failing = 0
    for _, obj in OBJECTS:
        for variant in [obj, *_broken(obj)]:
            for karta in DEFINITIONS:
                resolution = Workload(karta, variant, validate=False, check_gvk=False).resolve()
                again = Workload(karta, variant, validate=False, check_gvk=False).resolve()
                for component in resolution:
                    errors = component.errors
                    assert errors == _errors_part_by_part(again.components[component.name]), karta.name
                    assert component.errors == errors  # read again, from the computed parts
                    checked += 1
                    failing += bool(errors)
                assert resolution.errors == tuple(e for c in again for e in _errors_part_by_part(c))
                assert resolution.ok is not bool(resolution.errors)
    assert checked > 1000 and failing > 100, (checked, failing)


def test_a_component_reads_its_definition_from_its_slot() -> None:
    for karta in DEFINITIONS:
        structure = structure_of(karta)
        obj = next((o for _, o in OBJECTS if o.get("kind") == karta.root.kind.kind), {"spec": {}})
        resolution = Workload(karta, obj, validate=False, check_gvk=False).resolve()
        assert list(resolution.components) == list(structure.slots)
        for name, component in resolution.components.items():
            definition = structure.slots[name].definition
            assert component.definition is definition
            assert component.name == definition.name == name
            assert component.kind == definition.kind
            assert component.parent == (definition.owner_ref or None)
            assert component.children == structure.children_of(name)
            assert component.children == tuple(c.name for c in karta.children if c.owner_ref == name)
            assert component.has_pod_definition is definition.has_pod_definition
            assert component.multi_instance is bool(definition.instance_id_path)
            assert component.yaml_path == structure.slots[name].yaml_path
            assert component.yaml_path.startswith("spec.structureDefinition.")
        # one lock for the resolution's parts, reentrant, shared by its components
        locks = {id(component._lock) for component in resolution}
        assert len(locks) == 1


def test_a_component_stays_frozen() -> None:
    karta = DEFINITIONS[0]
    component = next(iter(Workload(karta, {"spec": {}}, validate=False, check_gvk=False).resolve()))
    for name in ("name", "kind", "children", "_slot", "_parts", "other"):
        try:
            setattr(component, name, None)
        except AttributeError:
            continue
        raise AssertionError(f"{name} could be set")


# --- scales: an int count in range taken as it is, a replicas-only definition's Scales made by map --------------


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(min_value=-(2**40), max_value=2**40),
            st.booleans(),
            st.none(),
            st.floats(allow_nan=True, allow_infinity=True),
            st.sampled_from(["3", "-1", "x", " 2", "2147483648"]),
        ),
        max_size=4,
    ),
    st.sampled_from(["replicas_path", "min_replicas_path", "max_replicas_path", "replicas_path+max_replicas_path"]),
)
def test_scales_read_as_each_count_decodes(values: list[Any], which: str) -> None:
    """`extract.scales` gives what decoding every output with `decode_replicas` and zipping them gives, value or
    error (its field and message), whichever scale paths the definition sets."""
    paths = {attr: f".spec.items[]?.c{index}" for index, attr in enumerate(which.split("+"))}
    definition = ComponentDefinition(
        name="c", instance_id_path=".spec.items[]?.id", scale_definition=ScaleDefinition(**paths)
    )
    obj = {"spec": {"items": [{"id": f"i{n}", **{f"c{k}": value for k in range(2)}} for n, value in enumerate(values)]}}
    structure_paths = [definition.instance_id_path, *paths.values()]
    snap = Snapshot(obj, (tuple(structure_paths),), INPROCESS)
    ids = extract.instance_ids(snap, definition)
    try:
        found: Any = extract.scales(snap, definition, ids)
    except ExtractionError as error:
        found = ("error", error.field, error.message)
    columns: dict[str, list[Any]] = {}
    expected: Any
    try:
        for attr, path in paths.items():
            field = {"replicas_path": "replicasPath", "min_replicas_path": "minReplicasPath"}.get(
                attr, "maxReplicasPath"
            )
            try:
                columns[attr] = [decode_replicas(i, v) for i, v in enumerate(snap.outputs(path, "c", field))]
            except DecodeError as exc:
                raise ExtractionError("c", f"scaleDefinition.{field}", f"not a replica count: {exc}") from None
        count = max(len(column) for column in columns.values())
        scales = [
            Scale(
                *(
                    columns[a][i] if a in columns else None
                    for a in ("replicas_path", "min_replicas_path", "max_replicas_path")
                )
            )
            for i in range(count)
        ]
        expected = dict(zip(ids, scales, strict=True))
    except ExtractionError as error:
        expected = ("error", error.field, error.message)
    assert found == expected
    if type(found) is dict:
        assert [type(scale.replicas) for scale in found.values()] == [type(s.replicas) for s in expected.values()]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.dictionaries(st.sampled_from(["a", "spec"]), st.integers(), max_size=2),
            st.none(),
            st.integers(),
            st.text(max_size=3),
            st.lists(st.integers(), max_size=2),
        ),
        max_size=4,
    ),
    st.booleans(),
)
def test_a_plain_part_is_each_output_decoded(values: list[Any], grouped: bool) -> None:
    """`extract.plain` gives what decoding every output with `decode_object` and zipping them gives (objects as
    they are, null as `{}`, anything else the error naming it), read in place or from the group's outputs."""
    path = ".spec.items[]?.t"
    definition = ComponentDefinition(
        name="c", instance_id_path=".spec.items[]?.id", spec_definition=SpecDefinition(pod_spec_path=path)
    )
    obj = {"spec": {"items": [{"id": f"i{n}", "t": value} for n, value in enumerate(values)]}}
    group = (definition.instance_id_path, path) if grouped else (definition.instance_id_path,)
    snap = Snapshot(obj, (group,), INPROCESS)
    ids = extract.instance_ids(snap, definition)
    try:
        part = extract.plain(snap, definition, extract.SPEC, ids)
        assert part is not None
        found: Any = part.normalised()
    except ExtractionError as error:
        found = ("error", error.field, error.message)
    try:
        outputs = snap.outputs(path, "c", extract.SPEC.field)
        decoded = [decode_object(index, value, extract.SPEC.wanted) for index, value in enumerate(outputs)]
        expected: Any = dict(zip(ids, decoded, strict=True))
    except DecodeError as exc:
        expected = ("error", extract.SPEC.field, str(exc))
    assert found == expected


class _Name(str):
    """A str subclass: read as a string by both the shortcut and the general path."""


_IDENTITY_VALUES = st.one_of(
    st.none(), st.text(max_size=3), st.integers(), st.booleans(), st.builds(_Name, st.text(max_size=2))
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata"]), _IDENTITY_VALUES, max_size=3),
    st.one_of(
        _IDENTITY_VALUES,
        st.dictionaries(
            st.sampled_from(["name", "generateName", "namespace", "uid", "creationTimestamp"]), _IDENTITY_VALUES
        ),
    ),
)
def test_object_ref_reads_each_identity_field_as_text(obj: dict[str, Any], metadata: Any) -> None:
    obj = {**obj, "metadata": metadata}
    meta = metadata if isinstance(metadata, dict) else {}

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    found = object_ref(obj)
    assert found == ObjectRef(
        api_version=text(obj.get("apiVersion")),
        kind=text(obj.get("kind")),
        name=text(meta.get("name")) or text(meta.get("generateName")),
        namespace=text(meta.get("namespace")),
        uid=text(meta.get("uid")),
        creation_timestamp=text(meta.get("creationTimestamp")),
    )
    assert [type(value) for value in msgspec.structs.astuple(found)] == [
        type(text(value))
        for value in (
            obj.get("apiVersion"),
            obj.get("kind"),
            meta.get("name") if text(meta.get("name")) else meta.get("generateName"),
            meta.get("namespace"),
            meta.get("uid"),
            meta.get("creationTimestamp"),
        )
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=2), st.none(), st.integers(), st.builds(_Name, st.text(max_size=2)))))
def test_instance_ids_decode_as_each_string_does(values: list[Any]) -> None:
    try:
        found: Any = decode_instance_ids(values)
    except DecodeError as exc:
        found = ("error", str(exc))
    try:
        ids = [decode_string(index, value) for index, value in enumerate(values)]
        if any(not instance_id for instance_id in ids):
            raise DecodeError(
                f"instance id path contained empty string values [{','.join(ids)}]: every instance needs a non-empty id"
            )
        expected: Any = ids
    except DecodeError as exc:
        expected = ("error", str(exc))
    assert found == expected
    if type(found) is list:
        assert found is not values
        assert [type(value) for value in found] == [type(value) for value in expected]
