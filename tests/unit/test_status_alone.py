"""The status read alone is the complete resolution's status (issue 19, "status, second round").

`wmap get` reads only the status of each object (`Workload(..., from_json=True).root.status`): the status group is
evaluated alone and the structure never is. These tests hold that read equal to the status a complete resolution
gives, for every catalog definition over every fixture, corpus object and recording, with and without
`from_json`, and on objects whose identity fields fail the plain-JSON check (a `datetime` creation time, as PyYAML
reads an unquoted timestamp) or whose body does (a tuple: copied before it is read). They also hold the generated
code's claim that an expression whose outputs are all names known to be scalars needs no `_finish`.
"""

from __future__ import annotations

import copy
import datetime
import json
from collections.abc import Mapping
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import DEFINITIONS, OBJECTS, _strict
from workload_map.jq import codegen, convert
from workload_map.jq.finish import finish
from workload_map.model import Karta
from workload_map.resolve import ResolveError, Workload, _json, snapshot
from workload_map.resolve.structure import structure_of

pytestmark = pytest.mark.usefixtures("generated_from_the_first_object")


def _variants(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """The object as a decoder gives it (with and without `from_json`), with a datetime creation time (identity
    not plain: read from the copy), and with a tuple in its body (not plain JSON: copied up front)."""
    dated = copy.deepcopy(obj)
    metadata = dated.get("metadata")
    if isinstance(metadata, dict):
        metadata["creationTimestamp"] = datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.timezone.utc)
    tupled = copy.deepcopy(obj)
    status = tupled.get("status")
    if isinstance(status, dict) and isinstance(status.get("conditions"), list):
        status["conditions"] = tuple(status["conditions"])
    else:
        tupled["x-status-alone"] = (1, 2)
    return [
        ("decoded, from_json", copy.deepcopy(obj), True),
        ("decoded, checked", copy.deepcopy(obj), False),
        ("datetime identity", dated, False),
        ("tuple in the body", tupled, False),
    ]


def _status_alone(karta: Karta, obj: dict[str, Any], from_json: bool) -> Any:
    workload = Workload(karta, obj, validate=False, check_gvk=False, from_json=from_json)
    try:
        strict: Any = workload.root.status
    except ResolveError as error:
        strict = ("error", type(error).__name__, str(error))
    resolution = workload.resolve()
    lenient = {name: component.status for name, component in resolution.components.items()}
    return _strict(
        json.loads(json.dumps({"strict": strict, "lenient": lenient, "object": resolution.object}, default=repr))
    )


def _status_after_everything(karta: Karta, obj: dict[str, Any], from_json: bool) -> Any:
    workload = Workload(karta, obj, validate=False, check_gvk=False, from_json=from_json)
    resolution = workload.resolve()
    resolution.to_dict()  # every part computed: components, instances, templates, requests, errors
    for component in resolution.components.values():
        for instance in component.instances.values():
            _ = instance.pod_template, instance.desired_replicas
    lenient = {name: component.status for name, component in resolution.components.items()}
    try:
        strict: Any = workload.root.status
    except ResolveError as error:
        strict = ("error", type(error).__name__, str(error))
    return _strict(
        json.loads(json.dumps({"strict": strict, "lenient": lenient, "object": resolution.object}, default=repr))
    )


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_the_status_alone_is_the_complete_resolutions_status(karta: Karta) -> None:
    for name, obj in OBJECTS:
        for variant, item, from_json in _variants(obj):
            alone = _status_alone(karta, copy.deepcopy(item) if not from_json else item, from_json)
            after = _status_after_everything(karta, copy.deepcopy(item), from_json)
            assert alone == after, (name, variant)


def test_the_variants_take_the_paths_they_are_named_for() -> None:
    """The datetime variant's identity is read from the copy (a string), the tuple variant is copied: not the
    decoded object's path."""
    karta = next(karta for karta in DEFINITIONS if karta.name.startswith("jobset"))
    obj = next(obj for name, obj in OBJECTS if name.startswith("jobset"))
    variants = {variant: (item, from_json) for variant, item, from_json in _variants(obj)}
    dated, _ = variants["datetime identity"]
    ref = Workload(karta, dated, validate=False, check_gvk=False).resolve().object
    assert ref.creation_timestamp == "2026-12-01T20:00:00Z"
    tupled, _ = variants["tuple in the body"]
    status = Workload(karta, tupled, validate=False, check_gvk=False).root.status
    assert status is not None
    assert status.conditions == Workload(karta, copy.deepcopy(obj), validate=False, check_gvk=False).status.conditions


def _scalar_outputs(outputs: list[Any]) -> bool:
    for value in outputs:
        kind = type(value)
        if not (value is None or kind is bool or kind is str or (kind is int and -(2**53) < value < 2**53)):
            return False
    return True


def test_bodies_said_to_give_scalars_give_only_scalars() -> None:
    """An expression generated without `_finish` gives, on every object, only the scalars `_finish` would hand
    back unchanged; and some catalog expressions are generated that way, some not (the flag is not constant)."""
    said_scalar = said_not = 0
    for karta in DEFINITIONS:
        for group in structure_of(karta).plan_groups:
            for expr in group:
                body = codegen._expression_lines(expr, {})
                if body is None:
                    continue
                if not body.scalars:
                    said_not += 1
                    continue
                said_scalar += 1
                assert "FIN(o)" not in codegen.generated_source([expr])
                run = codegen.batch_program((expr,)).run
                for _, obj in OBJECTS:
                    (found,) = run(obj)
                    assert found is codegen.BAIL or _scalar_outputs(found), (karta.name, expr)
    assert said_scalar >= 100
    assert said_not >= 100


@given(
    st.lists(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3)),
        max_size=6,
    )
)
def test_finish_gives_what_normalising_gives(items: list[Any]) -> None:
    """`_finish`'s copy of a list of numbers (no encode and decode) is the normalised list; anything it does not
    take still goes through `convert.normalize` or bails."""
    try:
        expected: Any = _strict([convert.normalize(items)])
    except Exception as error:  # a value normalising refuses: `_finish` must not answer it either
        expected = ("raised", type(error).__name__)
    try:
        got: Any = _strict(finish([items]))
    except Exception as error:
        got = ("raised", type(error).__name__)
    if got[0] == "raised" and got[1] == "_Bail":
        return  # the current path answers it
    assert got == expected


def test_a_plans_group_index_is_kept_per_plan_and_equal_to_a_fresh_one() -> None:
    for karta in DEFINITIONS:
        plan = structure_of(karta).plan_groups
        fresh: dict[str, Any] = {}
        for group in plan:
            for expr in group:
                fresh.setdefault(expr, group)
        assert snapshot._group_of(plan) == fresh
        assert snapshot._group_of(plan) is snapshot._group_of(plan)
    listed = [["a", "b"], ["b", "c"]]  # a plan that could change is indexed anew each time
    assert snapshot._group_of(listed) == {"a": listed[0], "b": listed[0], "c": listed[1]}
    assert snapshot._group_of(listed) is not snapshot._group_of(listed)


def _plain_identity_as_it_was(obj: dict[str, Any]) -> bool:
    plain = (str, int, float, bool, type(None), dict, list)
    if type(obj.get("apiVersion")) not in plain or type(obj.get("kind")) not in plain:
        return False
    metadata = obj.get("metadata")
    if type(metadata) is not dict:
        return not isinstance(metadata, Mapping)
    return all(type(metadata.get(key)) in plain for key in _json._IDENTITY_FIELDS)


_ODD = st.one_of(
    st.none(),
    st.text(max_size=2),
    st.integers(),
    st.just(datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)),
    st.just((1,)),
    st.just({"a": 1}),
    st.just(b"x"),
)


@given(
    st.dictionaries(st.sampled_from(["apiVersion", "kind", "other"]), _ODD),
    st.one_of(st.dictionaries(st.sampled_from([*_json._IDENTITY_FIELDS, "labels"]), _ODD), _ODD),
)
def test_plain_identity_written_out_is_the_generic_check(top: dict[str, Any], metadata: Any) -> None:
    obj = {**top, "metadata": metadata}
    assert _json.plain_identity(obj) is _plain_identity_as_it_was(obj)


def _read(read: Any) -> Any:
    """A status read's value, or the error it raised (type, text and field), comparable across workloads."""
    try:
        found = read()
    except ResolveError as error:
        return ("error", type(error).__name__, str(error), dict(getattr(error, "__dict__", {})))
    return ("status", repr(found), None if found is None else _strict(json.loads(json.dumps(found.to_dict()))))


@pytest.mark.parametrize("karta", DEFINITIONS, ids=[karta.name for karta in DEFINITIONS])
def test_workload_status_read_without_a_resolution_is_the_resolutions(karta: Karta) -> None:
    """`Workload.status` and the root's `Component.status` read first (no `Resolution` made: `Session.status`) give
    what the strict component getter of a resolution gives, the same value or the same error, for every definition,
    object and variant; read again they give the same object (or raise the same error object); a resolution made
    after them reads an equal status, and once one is made both are the resolution's."""

    def make(item: dict[str, Any], from_json: bool) -> Workload:
        return Workload(karta, copy.deepcopy(item), validate=False, check_gvk=False, from_json=from_json)

    def resolved_first(item: dict[str, Any], from_json: bool) -> Any:
        workload = make(item, from_json)
        workload.resolve()
        return workload.root.status

    for name, obj in OBJECTS:
        for variant, item, from_json in _variants(obj):
            alone = make(item, from_json)
            first = _read(lambda alone=alone: alone.status)
            assert alone._session.made_resolution is None, (name, variant)  # the path this test is about
            expected = _read(lambda item=item, from_json=from_json: resolved_first(item, from_json))
            assert first == expected, (name, variant)
            assert _read(lambda alone=alone: alone.root.status) == first, (name, variant)
            assert alone._session.made_resolution is None, (name, variant)  # the root's getter made none either
            read: Any = None
            try:
                read = alone.status
            except ResolveError as error:
                with pytest.raises(ResolveError) as raised:
                    _ = alone.root.status
                assert raised.value is error, (name, variant)
            else:
                assert alone.status is read and alone.root.status is read, (name, variant)
            resolution = alone.resolve()
            assert _read(lambda alone=alone: alone.root.status) == first, (name, variant)
            if first[0] == "status":
                assert resolution.status == read, (name, variant)
                assert alone.status is resolution.status, (name, variant)


def test_workload_status_alone_is_read_anew_after_a_write() -> None:
    """A write makes a new snapshot: the status read without a resolution is read again from it."""
    karta = next(karta for karta in DEFINITIONS if karta.name.startswith("jobset"))
    obj = next(obj for name, obj in OBJECTS if name.startswith("jobset"))
    workload = Workload(karta, copy.deepcopy(obj), validate=False, check_gvk=False, from_json=True)
    before = workload.status
    assert before.phase == "Running"
    workload.suspend()
    after = workload.status
    assert after.phase != before.phase
    assert after == Workload(karta, workload.to_object(), validate=False, check_gvk=False).root.status


def test_workload_status_alone_raises_the_strict_error_of_the_part() -> None:
    """Conditions that are not an array of objects: `Workload.status` raises the part's first error (the one a
    resolution records first), as the component getter does; a root without a statusDefinition is named."""
    karta = next(karta for karta in DEFINITIONS if karta.name.startswith("jobset"))
    obj = copy.deepcopy(next(obj for name, obj in OBJECTS if name.startswith("jobset")))
    obj["status"]["conditions"] = "broken"
    obj["spec"]["suspend"] = True

    def make() -> Workload:
        return Workload(karta, copy.deepcopy(obj), validate=False, from_json=True)

    alone = _read(lambda: make().status)
    assert alone == _read(lambda: make().root.status)
    first = make().resolve().errors[0]
    assert alone[:2] == ("error", "ExtractionError")
    assert alone[3] == {"component": first.component, "field": first.field, "message": first.message}
    assert first.field == "statusDefinition.conditionsDefinition.path"

    root = msgspec.structs.replace(karta.root, status_definition=None)
    bare = msgspec.structs.replace(
        karta,
        spec=msgspec.structs.replace(
            karta.spec,
            structure_definition=msgspec.structs.replace(karta.spec.structure_definition, root_component=root),
        ),
    )
    missing = _read(lambda: Workload(bare, copy.deepcopy(obj), validate=False, from_json=True).status)
    assert missing[:2] == ("error", "ExtractionError")
    assert "no statusDefinition" in missing[2]
