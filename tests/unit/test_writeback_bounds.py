"""Write-back that is bounded, exact and order-preserving (issue 16).

* bounded: a definition's path never pads an array (a suspend action on `.spec.runPolicy.x[536870911]` allocated
  gigabytes in the calling process); an index may append one element at most;
* exact: instances whose paths fall back to one shared field (Milvus' `// .spec.components.image`) write it once
  when their values agree and are refused, naming the place, when they differ (one instance's change was silently
  overwritten by the others' unchanged values);
* order-preserving: extract -> update of unchanged values leaves the object byte for byte equal as `json.dumps`
  writes it without `sort_keys` (the getters hand out jq's view: sorted keys, integral floats as ints).
"""

from __future__ import annotations

import copy
import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from tests.unit.test_resolve_roundtrip import cases, write_back_everything
from workload_map import builtin_registry
from workload_map.jq import JqRuntimeError, assign
from workload_map.jq.writeback import PathError, path_text, set_paths
from workload_map.model import Karta, karta_from_dict
from workload_map.resolve import UpdateError, Workload

REPO = Path(__file__).resolve().parents[2]
GVK = {"group": "example.com", "version": "v1", "kind": "Flow"}


def _flow(**root: Any) -> Karta:
    return karta_from_dict(
        {
            "metadata": {"name": "flow"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {"name": "flow", "kind": GVK, "statusDefinition": {"statusMappings": {}}, **root}
                }
            },
        }
    )


def _obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Flow", "metadata": {"name": "f"}, "spec": spec}


# --- bounded ---------------------------------------------------------------------------------------------------------


def test_a_suspend_action_past_the_end_of_an_array_is_refused_before_allocating() -> None:
    karta = _flow(
        suspendDefinition={
            "suspendActions": [{"path": ".spec.runPolicy.x[536870911]", "value": "true"}],
            "resumeActions": [{"path": ".spec.runPolicy.suspend", "value": "false"}],
        }
    )
    workload = Workload(karta, _obj(runPolicy={}))
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(UpdateError) as info:
            workload.suspend()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 5
    assert peak < 50 * 1024 * 1024
    assert ".spec.runPolicy.x[536870911]" in str(info.value)
    assert "past the end of the array (length 0)" in str(info.value)
    assert info.value.field == "suspendDefinition.suspendActions[0].path"
    assert workload.merge_patch() == {} and not workload.modified


def test_an_index_may_append_one_element_and_no_more() -> None:
    karta = _flow(
        suspendDefinition={
            "suspendActions": [{"path": ".spec.list[1]", "value": "2"}, {"path": ".spec.list[3]", "value": "4"}],
            "resumeActions": [{"path": ".spec.new[0]", "value": "1"}],
        }
    )
    workload = Workload(karta, _obj(list=[1]))
    with pytest.raises(UpdateError, match=r"index 3 of \.spec\.list\[3\] is past the end of the array \(length 2\)"):
        workload.suspend()
    assert workload.to_object()["spec"] == {"list": [1]}, "the first action is undone with the failed second one"
    workload.resume()  # index 0 of a missing array creates it
    assert workload.to_object()["spec"] == {"list": [1], "new": [1]}


def test_set_paths_without_padding_names_the_path() -> None:
    with pytest.raises(PathError, match=r"index 5 of \.a\[0\]\.b\[5\] is past the end"):
        set_paths({"a": [{"b": []}]}, [["a", 0, "b", 5]], [1], copy=True, pad=False)
    assert set_paths({"a": []}, [["a", 0]], [1], copy=True, pad=False) == {"a": [1]}


def test_jq_assign_keeps_jqs_setpath_padding_and_its_own_bound() -> None:
    assert assign(".list[2]", {"list": []}, 1) == {"list": [None, None, 1]}
    with pytest.raises(JqRuntimeError, match="Array index too large"):
        assign(".list[600000000]", {"list": []}, 1)


def test_paths_are_named_as_jq_writes_them() -> None:
    assert path_text([]) == "."
    assert path_text(["spec", "a b", 0, {"start": 1, "end": None}]) == '.spec["a b"][0][1:]'


# --- exact: one place, several instances ------------------------------------------------------------------------------


def _milvus() -> tuple[Karta, dict[str, Any]]:
    path = REPO / "tests" / "fixtures" / "catalog" / "milvus-io-milvus-v1beta1" / "workload.yaml"
    document = yaml.safe_load(path.read_text())
    found = builtin_registry().for_object(document)
    assert found is not None
    return found.karta, document


def _with_image(spec: Any, image: str) -> Any:
    return msgspec.structs.replace(spec, image=image)


def test_one_milvus_instance_changing_the_shared_image_is_refused_naming_the_place() -> None:
    karta, document = _milvus()
    workload = Workload(karta, document)
    component = workload.component("component")
    specs = component.fragmented_pod_specs
    assert specs is not None and {spec.image for spec in specs.values()} == {"milvusdb/milvus:v2.5.4"}
    specs["proxy"] = _with_image(specs["proxy"], "milvusdb/milvus:v2.6.0")
    with pytest.raises(UpdateError) as info:
        component.update_fragmented_pod_specs(specs)
    message = str(info.value)
    assert "write different values to the same place, .spec.components.image" in message
    assert "'proxy'" in message and "nothing was written" in message
    assert workload.merge_patch() == {}, "no field of the update was written"


def test_milvus_instances_agreeing_on_the_shared_image_write_it_once() -> None:
    karta, document = _milvus()
    workload = Workload(karta, document)
    component = workload.component("component")
    specs = component.fragmented_pod_specs
    assert specs is not None
    component.update_fragmented_pod_specs(
        {key: _with_image(spec, "milvusdb/milvus:v2.6.0") for key, spec in specs.items()}
    )
    assert workload.merge_patch() == {"spec": {"components": {"image": "milvusdb/milvus:v2.6.0"}}}
    after = component.fragmented_pod_specs
    assert after is not None and {spec.image for spec in after.values()} == {"milvusdb/milvus:v2.6.0"}


def test_an_instance_with_its_own_field_is_written_alone() -> None:
    karta, document = _milvus()
    document["spec"]["components"]["proxy"]["image"] = "milvusdb/milvus:v2.5.4"
    workload = Workload(karta, document)
    component = workload.component("component")
    specs = component.fragmented_pod_specs
    assert specs is not None
    specs["proxy"] = _with_image(specs["proxy"], "milvusdb/milvus:v2.6.0")
    component.update_fragmented_pod_specs(specs)
    assert workload.merge_patch() == {"spec": {"components": {"proxy": {"image": "milvusdb/milvus:v2.6.0"}}}}


# --- order-preserving ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("label", "definition", "document"), cases(), ids=[label for label, _, _ in cases()])
def test_an_unchanged_round_trip_is_byte_for_byte_equal(
    label: str, definition: Karta, document: dict[str, Any]
) -> None:
    workload = Workload(definition, document)
    before = json.dumps(workload.to_object())
    write_back_everything(workload)
    assert json.dumps(workload.to_object()) == before
    assert json.dumps(Workload(definition, document).to_object()) == before


def test_a_template_in_its_own_order_with_integral_floats_round_trips_byte_for_byte() -> None:
    karta = _flow(specDefinition={"podTemplateSpecPath": ".spec.template"})
    template = {
        "spec": {
            "terminationGracePeriodSeconds": 30.0,
            "containers": [{"name": "main", "image": "x", "resources": {"requests": {"memory": "1Gi", "cpu": 2.0}}}],
        },
        "metadata": {"labels": {"z": "1", "a": "2"}},
    }
    document = _obj(template=copy.deepcopy(template), replicas=3)
    workload = Workload(karta, document)
    read = workload.root.pod_template_specs
    assert read is not None
    assert list(read[""]) == ["metadata", "spec"], "the getter hands out jq's sorted view"
    before = json.dumps(workload.to_object())
    workload.root.update_pod_template_specs(read)
    assert json.dumps(workload.to_object()) == before
    assert workload.merge_patch() == {}
    changed = copy.deepcopy(read)
    changed[""]["spec"]["containers"][0]["image"] = "y"
    changed[""]["spec"]["hostname"] = "h"
    workload.root.update_pod_template_specs(changed)
    written = workload.to_object()["spec"]["template"]
    assert list(written) == ["spec", "metadata"] and list(written["spec"]) == [
        "terminationGracePeriodSeconds",
        "containers",
        "hostname",
    ]
    assert written["spec"]["containers"][0] == {
        "name": "main",
        "image": "y",
        "resources": {"requests": {"memory": "1Gi", "cpu": 2.0}},
    }
    assert isinstance(written["spec"]["terminationGracePeriodSeconds"], float)
