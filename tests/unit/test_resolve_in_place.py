"""A plain-JSON workload object is read in place (issue 19): no copy of the whole object before anything is read.

What must hold: the caller's object is never changed (by reads, by writes, by a caller changing what it was handed),
and a resolution read in place is the one a copy gives (every built-in definition's fixture, resolved both ways)."""

from __future__ import annotations

import copy
import datetime
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.resolve import Workload, _json
from workload_map.resolve import workload as workload_module
from workload_map.resolve._json import plain_identity, shareable

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
CASES = sorted(path.parent.name for path in FIXTURES.glob("*/workload.yaml"))


def _fixture(name: str) -> dict[str, Any]:
    with (FIXTURES / name / "workload.yaml").open(encoding="utf-8") as handle:
        loaded = yaml.load(handle, Loader=yaml.CSafeLoader)
    # plain JSON, as the CLI and the cluster client hand objects over
    plain: dict[str, Any] = _json.json_copy(loaded)
    return plain


def _copied(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve as before issue 19: every object copied first."""
    monkeypatch.setattr(workload_module, "shareable", lambda _obj: False)


def _everything(workload: Workload) -> dict[str, Any]:
    resolution = workload.resolve()
    out = resolution.to_dict()
    for component in resolution.components.values():
        for instance in component.instances.values():
            out.setdefault("_templates", []).append(instance.pod_template_spec)
    return out


@pytest.mark.parametrize("name", CASES)
def test_in_place_resolution_is_the_copied_one_and_leaves_the_object_as_it_was(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    obj = _fixture(name)
    before = copy.deepcopy(obj)
    karta = builtin_registry().for_object(obj)
    assert karta is not None
    assert shareable(obj)
    in_place = Workload(karta.karta, obj)
    assert in_place._session._snapshot._copy is None  # really read in place
    got = _everything(in_place)
    assert obj == before
    with monkeypatch.context() as patch:
        _copied(patch)
        expected = _everything(Workload(karta.karta, obj))
    assert got == expected
    assert in_place._session._snapshot._copy is None  # a read-only resolution never copied the object
    assert obj == before


def _jobset() -> dict[str, Any]:
    return _fixture("jobset-x-k8s-io-jobset-v1alpha2")


def _karta(obj: dict[str, Any]) -> Any:
    found = builtin_registry().for_object(obj)
    assert found is not None
    return found.karta


def test_changing_what_a_resolution_hands_out_does_not_reach_the_object() -> None:
    obj = _jobset()
    before = copy.deepcopy(obj)
    resolution = Workload(_karta(obj), obj).resolve()
    handed = 0
    for component in resolution.components.values():
        for instance in component.instances.values():
            template = instance.pod_template_spec
            if template is not None:
                template.clear()
                handed += 1
    assert handed > 0
    assert obj == before
    # and a second read gives the template again, whole
    again = Workload(_karta(obj), obj).resolve()
    assert any(i.pod_template_spec for c in again.components.values() for i in c.instances.values())


def test_writes_and_to_object_copy_and_leave_the_object_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    obj = _jobset()
    before = copy.deepcopy(obj)
    workload = Workload(_karta(obj), obj)
    workload.suspend()
    assert workload.modified
    patch, result = workload.merge_patch(), workload.to_object()
    assert obj == before
    assert result is not obj and result != obj
    result["metadata"]["name"] = "changed"
    assert obj == before
    with monkeypatch.context() as patching:
        _copied(patching)
        copied = Workload(_karta(obj), obj)
        copied.suspend()
        assert copied.merge_patch() == patch
        assert copied.to_object() == {**result, "metadata": {**result["metadata"], "name": obj["metadata"]["name"]}}


def test_an_unchanged_workload_to_object_is_an_equal_copy() -> None:
    obj = _jobset()
    workload = Workload(_karta(obj), obj)
    result = workload.to_object()
    assert result == obj and result is not obj
    assert not workload.modified and workload.merge_patch() == {}


def test_a_yaml_timestamp_still_reads_as_its_rfc3339_text() -> None:
    obj = _jobset()
    obj["metadata"]["creationTimestamp"] = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    before = copy.deepcopy(obj)
    assert shareable(obj) and not plain_identity(obj)
    resolution = Workload(_karta(obj), obj).resolve()
    assert resolution.object.creation_timestamp == "2026-01-02T03:04:05Z"
    assert obj == before


def test_objects_json_cannot_carry_as_they_stand_are_copied_or_refused() -> None:
    obj = _jobset()
    assert shareable(obj)
    assert not shareable({**obj, "spec": {**obj["spec"], "x": math.nan}})
    assert not shareable({**obj, "spec": {"x": object()}})
    deep: Any = "leaf"
    for _ in range(600):
        deep = [deep]
    assert not shareable({**obj, "spec": deep})
    assert not shareable([obj])
    # a tuple is JSON to msgspec: read in place, and it resolves as its list would
    as_tuple = {**obj, "spec": {**obj["spec"], "replicatedJobs": tuple(obj["spec"]["replicatedJobs"])}}
    assert shareable(as_tuple)
    assert Workload(_karta(obj), as_tuple).resolve().to_dict() == Workload(_karta(obj), obj).resolve().to_dict()
    # a non-string key (which the copy names as JSON does, "1") is not read in place: `.["1"]` would miss it
    labelled = {**obj, "metadata": {**obj["metadata"], "labels": {1: "a", "b": "c"}}}
    assert not shareable(labelled)
    assert (
        Workload(_karta(obj), labelled).resolve().to_dict()
        == Workload(_karta(obj), _json.json_copy(labelled)).resolve().to_dict()
    )


def test_plain_identity() -> None:
    assert plain_identity({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "uid": None}})
    assert plain_identity({"apiVersion": "v1", "kind": "Pod"})
    assert plain_identity({"apiVersion": "v1", "kind": "Pod", "metadata": ["not", "a", "map"]})
    assert not plain_identity({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ("a",)}})
    assert not plain_identity({"apiVersion": datetime.date(2026, 1, 1), "kind": "Pod"})
