"""A plain dict is checked when read, as far as the read needs (issue 19: the status alone <= 0.3x json.loads).

`Workload(karta, obj)` of a plain dict (not `from_json`) no longer checks the whole object in the constructor: the
status checks only what the status expressions read (`jq.reads` patterns, `_json.part_shareable`) and reads the
object in place when that part passes; any other read first takes the whole-object path once (`shareable`, else
`json_copy`, whose `NotJSONError` becomes `InvalidObjectError`). What must hold: a value JSON cannot carry as it
stands placed OUTSIDE the status's read part gives the status the object without it gives (the status never sees
it); placed INSIDE (or along the way), the status or the error the whole-object path gives, as before; and every
other read gives what it gave before, raising where the constructor raised before.
"""

from __future__ import annotations

import collections
import copy
import datetime
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import SETTINGS
from tests.unit.test_resolve_in_place import _jobset, _karta
from workload_map.jq.convert import prune
from workload_map.resolve import ExtractionError, InvalidObjectError, Workload, _json
from workload_map.resolve._json import NotJSONError, json_copy, part_shareable, read_part, shareable
from workload_map.resolve.structure import _roots, status_reads, structure_of

KARTA = _karta(_jobset())
ROOTS = frozenset(pattern for expr in structure_of(KARTA).status for pattern in _roots(expr) or ())


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = {"again": value}
    return value


# values JSON cannot carry as they stand: refused by the copy, or changed by it (read in place, they could differ)
BAD: dict[str, Callable[[], Any]] = {
    "nan": lambda: math.nan,
    "inf": lambda: -math.inf,
    "object": object,
    "tuple": lambda: ("a", 1),
    "datetime": lambda: datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    "date": lambda: datetime.date(2026, 1, 2),
    "int key": lambda: {1: "a", "1": "b"},
    "float key": lambda: {1.5: "a"},
    "surrogate": lambda: "bad \ud800 text",
    "surrogate key": lambda: {"\ud800": 1},
    "huge int": lambda: 10**5000,
    "600 deep": lambda: _deep(600),
    "cycle": _cycle,
    "ordered dict": lambda: collections.OrderedDict(type="Failed", status="True"),
}

# places the JobSet's status expressions never read (their read patterns: `.status` whole, `.spec.suspend`,
# `.spec.replicatedJobs[].replicas`)
OUTSIDE: list[tuple[Any, ...]] = [
    ("x",),
    ("metadata", "annotations"),
    ("metadata", "name2"),
    ("spec", "x"),
    ("spec", "replicatedJobs", 0, "template"),
    ("spec", "replicatedJobs", 1, "name"),
    ("spec", "replicatedJobs", 0, "template", "spec", "x"),
]
# places they read (the end of a pattern, below one, or a container along the way)
INSIDE: list[tuple[Any, ...]] = [
    ("status", "x"),
    ("status", "conditions"),
    ("status", "conditions", 0, "status"),
    ("status", "replicatedJobsStatus", 0, "active"),
    ("status", "replicatedJobsStatus"),
    ("spec", "suspend"),
    ("spec", "replicatedJobs", 1, "replicas"),
    ("spec", "replicatedJobs", 0),
    ("spec", "replicatedJobs"),
    ("spec",),
    ("status",),
]
ALONG = [("spec", "replicatedJobs", 0), ("spec", "replicatedJobs"), ("spec",)]  # containers the patterns pass


def _placed(place: tuple[Any, ...], value: Any) -> dict[str, Any]:
    obj = _jobset()
    target: Any = obj
    for step in place[:-1]:
        target = target[step]
    target[place[-1]] = value
    return obj


def _status(make: Callable[[], dict[str, Any]]) -> Any:
    """What the status read gives (twice: the second time through the generated functions), or the error."""
    found = []
    for _ in range(2):
        try:
            status = Workload(KARTA, make()).status
        except (InvalidObjectError, ExtractionError) as exc:
            found.append(("error", str(exc)))
        else:
            found.append(("status", status.to_dict()))
    assert found[0] == found[1]
    return found[0]


def _whole(make: Callable[[], dict[str, Any]]) -> Any:
    """What the whole-object path gives: the copy's status and resolution, or the constructor's former error."""
    try:
        copied = json_copy(make())
    except NotJSONError as exc:
        return ("error", f"the workload object cannot be read as JSON: {exc}")
    try:
        return ("status", Workload(KARTA, copied).status.to_dict())
    except ExtractionError as exc:
        return ("error", str(exc))


def test_the_status_reads_of_the_jobset() -> None:
    reads = status_reads(structure_of(KARTA))
    assert reads.part is not None
    assert reads.expressions == frozenset(structure_of(KARTA).status)
    clean = _jobset()
    assert part_shareable(clean, reads.part)
    for place in OUTSIDE:
        assert part_shareable(_placed(place, math.nan), reads.part), place
    for place in INSIDE:
        assert not part_shareable(_placed(place, math.nan), reads.part), place


@SETTINGS
@given(st.sampled_from(sorted(BAD)), st.sampled_from(OUTSIDE))
def test_a_bad_value_outside_the_status_reads_leaves_the_status_as_without_it(bad: str, place: tuple[Any, ...]) -> None:
    got = _status(lambda: _placed(place, BAD[bad]()))
    assert got == _status(lambda: _placed(place, None)) == _whole(lambda: _placed(place, None))
    # everything else still takes the whole-object path: the same resolution, or the error the constructor raised
    expected = _whole(lambda: _placed(place, BAD[bad]()))
    workload = Workload(KARTA, _placed(place, BAD[bad]()))
    _ = workload.status
    if expected[0] == "error":
        with pytest.raises(InvalidObjectError) as info:
            workload.resolve()
        assert str(info.value) == expected[1]
        with pytest.raises(InvalidObjectError) as info:
            workload.to_object()
        assert str(info.value) == expected[1]
    else:
        copied = json_copy(_placed(place, BAD[bad]()))
        assert workload.resolve().to_dict() == Workload(KARTA, copied).resolve().to_dict()
        assert workload.to_object() == copied


@SETTINGS
@given(st.sampled_from(sorted(BAD)), st.sampled_from(INSIDE))
def test_a_bad_value_inside_the_status_reads_gives_what_the_whole_object_gives(
    bad: str, place: tuple[Any, ...]
) -> None:
    make = lambda: _placed(place, BAD[bad]())  # noqa: E731
    if bad == "cycle" and place in ALONG:  # a container along the way whose entries the status never reads
        assert _status(make) == _whole(lambda: _placed(place, {"self": {"again": {}}}))
    else:
        assert _status(make) == _whole(make)
    try:
        copied = json_copy(make())
    except NotJSONError:
        with pytest.raises(InvalidObjectError):
            Workload(KARTA, make()).resolve()
    else:
        assert Workload(KARTA, make()).resolve().to_dict() == Workload(KARTA, copied).resolve().to_dict()


@SETTINGS
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-5, 5)
        | st.floats()
        | st.text(max_size=3)
        | st.sampled_from(sorted(BAD)),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
        max_leaves=8,
    ),
    st.sampled_from(OUTSIDE + INSIDE),
)
def test_any_value_anywhere_gives_the_status_of_the_copy_or_of_the_object_without_it(
    shape: Any, place: tuple[Any, ...]
) -> None:
    def value() -> Any:  # the shape, its BAD names made into their values
        def made(node: Any) -> Any:
            if isinstance(node, str) and node in BAD:
                return BAD[node]()
            if isinstance(node, list):
                return [made(item) for item in node]
            if isinstance(node, dict):
                return {key: made(item) for key, item in node.items()}
            return node

        return made(shape)

    make = lambda: _placed(place, value())  # noqa: E731
    got = _status(make)
    whole = _whole(make)
    # the reference: the status of a copy of what the status reads (`convert.prune` by the same read patterns)
    try:
        part = json_copy(prune(make(), ROOTS))
    except NotJSONError:
        assert got == whole  # what the status reads cannot be copied: the whole object's error, as before
        assert whole[0] == "error"
        return
    clean = _jobset()
    identity = {key: clean[key] for key in ("apiVersion", "kind", "metadata")}
    expected = _whole(lambda: {**part, **identity})
    # read in place and the same as the copy's; or (a tuple or a mapping along the way) the whole-object path
    assert got in (expected, whole)


def test_the_constructor_no_longer_refuses_a_plain_dict_but_every_whole_read_does() -> None:
    obj = _placed(("spec", "replicatedJobs", 0, "template", "x"), math.nan)
    workload = Workload(KARTA, obj)  # identity and kind checks only
    assert workload.name == obj["metadata"]["name"]
    assert repr(workload).startswith("<Workload JobSet")
    assert workload.status.phase == Workload(KARTA, _jobset()).status.phase
    assert workload.root.status == workload.status
    message = r"^the workload object cannot be read as JSON: spec\.replicatedJobs\[0\]\.template\.x holds NaN"
    reads: list[Callable[[], Any]] = [
        workload.resolve,
        workload.to_object,
        workload.merge_patch,
        workload.tree,
        lambda: workload.component("replicatedjob").pod_template_specs,
        lambda: workload.component("replicatedjob").instance_ids,
        lambda: workload.component("replicatedjob").scales,
        workload.suspend,
    ]
    for read in reads:
        with pytest.raises(InvalidObjectError, match=message):
            read()
    assert obj["spec"]["replicatedJobs"][0]["template"]["x"] != 0  # still NaN: never changed
    assert workload.status.phase  # the status still reads


def test_a_bad_status_is_refused_at_the_status_read_with_the_former_message() -> None:
    obj = _placed(("status", "conditions", 0, "status"), math.inf)
    workload = Workload(KARTA, obj)
    message = r"^the workload object cannot be read as JSON: status\.conditions\[0\]\.status holds an infinite number"
    with pytest.raises(InvalidObjectError, match=message):
        _ = workload.status
    with pytest.raises(InvalidObjectError, match=message):  # again: the error is not forgotten
        _ = workload.root.status
    with pytest.raises(InvalidObjectError, match=message):
        workload.resolve()


def test_a_decoders_object_and_a_non_dict_mapping_are_as_before() -> None:
    obj = _placed(("spec", "x"), math.nan)
    with pytest.raises(InvalidObjectError, match=r"spec\.x holds NaN"):
        Workload(KARTA, collections.OrderedDict(obj))  # not a dict: the whole-object path in the constructor
    identity = _jobset()
    identity["metadata"]["creationTimestamp"] = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    identity["spec"]["x"] = math.nan
    with pytest.raises(InvalidObjectError, match=r"spec\.x holds NaN"):  # identity read from the copy: made at once
        Workload(KARTA, identity)


def test_a_copy_made_later_keeps_the_status_read_in_place_and_reads_the_rest_from_the_copy() -> None:
    obj = _placed(("spec", "replicatedJobs", 0, "template", "metadata"), {"labels": {1: "a"}})
    workload = Workload(KARTA, obj)
    status = workload.status
    snapshot = workload._session.snapshot
    assert snapshot._copy is None and snapshot._unchecked  # read in place, the rest unchecked
    resolution = workload.resolve()
    assert not snapshot._unchecked and snapshot._copy is not None  # an int key: the whole object is copied now
    assert resolution.status == status
    assert resolution.to_dict() == Workload(KARTA, json_copy(obj)).resolve().to_dict()
    clean = Workload(KARTA, _jobset())
    clean.resolve()
    assert clean._session.snapshot._copy is None  # plain JSON: read in place after the whole check too


# --- non-string keys (issue 19): the copy names them as JSON does, so they are not read in place ---------------


def test_a_non_string_key_is_not_shareable() -> None:
    assert not shareable({1: 2})
    assert not shareable({"a": [{"b": {1.5: 2}}]})
    assert shareable({"a": [{"b": {"1": 2}}]})
    part = read_part({("a",)})
    assert part is not None
    assert not part_shareable({"a": {1: 2}}, part)
    assert part_shareable({"a": {"1": 2}, "b": {1: 2}}, read_part({("a", "1")}))  # type: ignore[arg-type]
    # a non-string key in a container along the way, even one not read: the whole object decides
    assert not part_shareable({"a": {"1": 2}, 1: 2}, read_part({("a", "1")}))  # type: ignore[arg-type]
    assert not part_shareable({"a": {"1": 2, 1: 3}}, read_part({("a", "1")}))  # type: ignore[arg-type]


def test_an_int_key_reads_as_the_copy_names_it() -> None:
    # `.["1"]` of {"1": "q", 1: "r"} in place finds "q"; the copy holds {"1": "r"} (the later entry wins)
    obj = _jobset()
    obj["status"]["conditions"] = [{"type": "Failed", "status": "False", 1: "x"}]
    obj["status"]["replicatedJobsStatus"][0] = {**obj["status"]["replicatedJobsStatus"][0], 2: 0}
    assert _status(lambda: copy.deepcopy(obj)) == _whole(lambda: copy.deepcopy(obj))
    keyed = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"1": "q", 1: "r"}}
    from workload_map.jq import Document
    from workload_map.jq.generated import evaluate_batch

    for _ in range(2):  # the generated program reads in place from the second evaluation on
        assert evaluate_batch(Document(json_copy(keyed)), ['.data["1"]']) == [["r"]]
    assert not shareable(keyed)  # so a Workload reads the copy


# --- the check's pieces -----------------------------------------------------------------------------------------


def test_read_part_refuses_what_it_cannot_scope() -> None:
    assert read_part(None) is None
    assert read_part({("a", True)}) is None  # type: ignore[arg-type]
    assert read_part({("\ud800",)}) is None
    assert read_part({tuple("a" for _ in range(501))}) is None
    assert read_part(set()) is not None


@pytest.mark.parametrize("levels", [497, 498, 499, 500, 501])
def test_depth_is_counted_from_the_top(levels: int) -> None:
    part = read_part({("status", "x")})
    assert part is not None
    obj = {"status": {"x": _deep(levels - 1)}}  # the top is level 0, status 1, x's lists 2 to `levels`
    fits = levels <= 500
    assert part_shareable(obj, part) == fits
    assert shareable(obj) == fits
    if fits:
        json_copy(obj)
    else:
        with pytest.raises(NotJSONError, match="nested more than 500 levels"):
            json_copy(obj)


@SETTINGS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
        max_leaves=10,
    )
)
def test_the_whole_pattern_is_the_whole_check(value: Any) -> None:
    part = read_part({()})
    assert part is not None
    obj = {"v": value}
    assert part_shareable(obj, part) == shareable(obj)


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 5])
def test_too_deep_with_a_limit_is_the_walk(limit: int) -> None:
    for levels in range(0, 8):
        value = _deep(levels)
        data = _json._ENCODER.encode(value)
        assert _json._too_deep(value, data, limit) == (levels - 1 > limit) == _json._walk_too_deep(value, limit)
