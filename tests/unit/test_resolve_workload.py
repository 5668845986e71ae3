"""The workload as a whole (karta-spec §12.1, §12.3, §15.6, §15.9): structure, lookup, GVK checks, the lenient
`resolve()` result, the structural tree and JSON output.

Test design: the three fixtures plus small inline definitions; assertions are on what a user sees (names, order,
messages, JSON keys).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fixtures.resolve import karta, obj
from workload_map.model import Karta, karta_from_dict
from workload_map.resolve import (
    ComponentNotFound,
    ExtractionError,
    GVKMismatchError,
    InvalidDefinitionError,
    InvalidObjectError,
    Resolution,
    Scale,
    Workload,
    WorkloadTree,
    resolve,
)

GVK = {"group": "example.com", "version": "v1", "kind": "Thing"}


def definition(*children: dict[str, Any], root: dict[str, Any] | None = None) -> Karta:
    return karta_from_dict(
        {
            "metadata": {"name": "thing"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "root",
                        "kind": GVK,
                        "statusDefinition": {"statusMappings": {"running": [{}]}},
                        **(root or {}),
                    },
                    "childComponents": list(children),
                }
            },
        }
    )


def thing(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "ns"}, "spec": spec}


# --- structure --------------------------------------------------------------------------------------------------------


def test_components_root_first_then_children_in_declaration_order() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    assert list(workload.components) == ["pyflow", "master", "worker"]
    assert workload.root.name == "pyflow"
    assert workload.root.is_root
    assert [c.name for c in workload.children_of("pyflow")] == ["master", "worker"]
    assert workload.children_of("master") == []
    parent = workload.parent_of("worker")
    assert parent is not None and parent.name == "pyflow"
    assert workload.parent_of("pyflow") is None


def test_three_level_structure() -> None:
    karta_ = definition(
        {"name": "group", "ownerRef": "root"},
        {"name": "leader", "ownerRef": "group", "kind": {"group": "", "version": "v1", "kind": "Pod"}},
        {"name": "worker", "ownerRef": "group"},
    )
    workload = Workload(karta_, thing())
    assert [c.name for c in workload.children_of("group")] == ["leader", "worker"]
    assert workload.component("group").kind is None
    leader = workload.component("leader")
    assert leader.kind is not None and leader.kind.kind == "Pod"
    assert leader.parent == "group"


def test_unknown_component_is_a_key_error_naming_the_known_ones() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    with pytest.raises(ComponentNotFound) as caught:
        workload.component("ps")
    assert isinstance(caught.value, KeyError)
    assert (
        str(caught.value)
        == "component 'ps' not found in definition 'pyflow'; its components are: pyflow, master, worker"
    )
    with pytest.raises(KeyError):
        workload.children_of("ps")


# --- the definition ---------------------------------------------------------------------------------------------------


def test_invalid_definition_is_rejected_before_anything_is_extracted_listing_every_error() -> None:
    karta_ = definition(
        {"name": "a", "ownerRef": "nowhere"},
        {"name": "b", "ownerRef": "root", "instanceIdPath": ".spec.ids[]"},
    )
    with pytest.raises(InvalidDefinitionError) as caught:
        Workload(karta_, thing())
    assert len(caught.value.findings) == 2
    message = str(caught.value)
    assert message.startswith("definition 'thing' is invalid (2 errors): ")
    assert "childComponents[0].ownerRef" in message
    assert "childComponents[1]" in message


def test_warnings_do_not_block_and_validation_can_be_skipped() -> None:
    # byPhase without a phaseDefinition can never match: a warning, not an error
    karta_ = definition(root={"statusDefinition": {"statusMappings": {"running": [{"byPhase": "x"}, {}]}}})
    assert Workload(karta_, thing()).status.phase == "Running"
    broken = definition({"name": "a", "ownerRef": "nowhere"})
    assert Workload(broken, thing(), validate=False).component("a").parent == "nowhere"


# --- the object -------------------------------------------------------------------------------------------------------


def test_object_of_another_kind_is_rejected() -> None:
    other = obj("pyflow")
    other["kind"] = "JobGroup"
    with pytest.raises(
        GVKMismatchError, match=r"kind JobGroup, but definition 'pyflow' resolves pyflow\.example\.com/v1, kind PyFlow"
    ):
        Workload(karta("pyflow"), other)


def test_object_of_another_group_is_rejected() -> None:
    other = obj("pyflow")
    other["apiVersion"] = "other.example.com/v1"
    with pytest.raises(GVKMismatchError):
        Workload(karta("pyflow"), other)


def test_kind_is_case_sensitive_with_a_hint() -> None:
    other = obj("pyflow")
    other["kind"] = "Pyflow"
    with pytest.raises(GVKMismatchError, match="case-sensitive"):
        Workload(karta("pyflow"), other)


def test_another_version_of_the_same_group_and_kind_resolves() -> None:
    other = obj("pyflow")
    other["apiVersion"] = "pyflow.example.com/v2"
    workload = Workload(karta("pyflow"), other)
    assert workload.status.phase == "Running"
    assert workload.object_gvk is not None and workload.object_gvk.version == "v2"


def test_object_without_kind_is_rejected_unless_the_check_is_off() -> None:
    partial = {"spec": {}, "status": {"conditions": [{"type": "Running", "status": "True"}]}}
    with pytest.raises(GVKMismatchError, match="no apiVersion or kind"):
        Workload(karta("pyflow"), partial)
    assert Workload(karta("pyflow"), partial, check_gvk=False).status.phase == "Running"


def test_object_that_is_not_a_mapping_is_rejected() -> None:
    with pytest.raises(InvalidObjectError, match="must be a mapping"):
        Workload(karta("pyflow"), ["x"])  # type: ignore[arg-type]


def test_yaml_timestamps_are_read_as_strings() -> None:
    import datetime

    pyflow = obj("pyflow")
    pyflow["metadata"]["creationTimestamp"] = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    workload = Workload(karta("pyflow"), pyflow)
    assert workload.to_object()["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"


def test_object_ref_names_the_object() -> None:
    ref = Workload(karta("jobgroup"), obj("jobgroup")).object_ref
    assert (ref.api_version, ref.kind, ref.namespace, ref.name) == (
        "batch.example.com/v1beta1",
        "JobGroup",
        "etl",
        "nightly",
    )


# --- resolve(): everything that resolves, plus per-component errors ---------------------------------------------------


def test_resolve_returns_every_component_instance_and_the_status() -> None:
    resolution = resolve(karta("reactor"), obj("reactor"))
    assert isinstance(resolution, Resolution)
    assert resolution.ok
    service = resolution.component("service")
    assert service.instance_ids == ("api", "cache", "worker")
    assert service.instances["worker"].scale == Scale(replicas=4, min_replicas=2, max_replicas=8)
    assert resolution.status is not None and resolution.status.phase == "Running"


def test_one_broken_component_does_not_hide_the_others() -> None:
    karta_ = definition(
        {"name": "good", "ownerRef": "root", "scaleDefinition": {"replicasPath": ".spec.good"}},
        {
            "name": "bad",
            "ownerRef": "root",
            "scaleDefinition": {"replicasPath": ".spec.bad"},
            "specDefinition": {"podSpecPath": ".spec.pods[]"},
        },
        {
            "name": "ids",
            "ownerRef": "root",
            "instanceIdPath": ".spec.ids[]",
            "scaleDefinition": {"replicasPath": "1"},
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
        },
    )
    resolution = Workload(karta_, thing(good=2, bad="many", ids=[1])).resolve()
    assert resolution.component("good").instances[""].scale == Scale(replicas=2)
    bad = resolution.component("bad")
    assert bad.instances[""].scale is None
    assert bad.instances[""].pod_spec is None
    assert {e.field for e in bad.errors} == {"scaleDefinition.replicasPath", "specDefinition.podSpecPath"}
    ids = resolution.component("ids")
    assert ids.instances == {}
    assert [e.field for e in ids.errors] == ["instanceIdPath"]
    assert resolution.status is not None and resolution.status.phase == "Running"
    assert not resolution.ok
    assert {e.component for e in resolution.errors} == {"bad", "ids"}
    first = resolution.errors[0]
    assert str(first).startswith(f"component '{first.component}', {first.field}: ")


def test_strict_accessors_raise_where_resolve_captures() -> None:
    karta_ = definition({"name": "bad", "ownerRef": "root", "scaleDefinition": {"replicasPath": ".spec.bad"}})
    workload = Workload(karta_, thing(bad=2.5))
    with pytest.raises(ExtractionError, match=r"scaleDefinition\.replicasPath"):
        _ = workload.component("bad").scales
    assert workload.resolve().errors[0].field == "scaleDefinition.replicasPath"


def test_resolution_json_has_camel_case_keys_and_serialises() -> None:
    data = resolve(karta("jobgroup"), obj("jobgroup")).to_dict()
    text = json.dumps(data)
    assert json.loads(text) == data
    assert data["status"]["phase"] == "Running"
    job = data["components"][1]
    assert job["name"] == "job"
    assert job["instanceIds"] == ["indexer", "processor"]
    assert job["hasPodDefinition"] is True
    assert job["multiInstance"] is True
    assert job["kind"] == {"group": "batch", "version": "v1", "kind": "Job"}
    assert job["instances"][0]["scale"] == {"replicas": 2}
    assert job["instances"][0]["podSpec"]["schedulerName"] == "kai-scheduler"
    assert data["object"] == {
        "apiVersion": "batch.example.com/v1beta1",
        "kind": "JobGroup",
        "name": "nightly",
        "namespace": "etl",
    }


# --- the structural tree ----------------------------------------------------------------------------------------------


def test_pyflow_tree() -> None:
    tree = Workload(karta("pyflow"), obj("pyflow")).tree()
    assert isinstance(tree, WorkloadTree)
    assert tree.phases == ("Running",)
    assert [c.name for c in tree.children] == ["master", "worker"]
    master, worker = tree.children
    assert len(master.instances) == 1
    assert master.instances[0].key is None
    assert worker.instances[0].scale == Scale(min_replicas=1, max_replicas=5)


def test_reactor_tree_has_three_instances_sorted_by_key() -> None:
    tree = Workload(karta("reactor"), obj("reactor")).tree()
    (service,) = tree.children
    assert [i.key for i in service.instances] == ["api", "cache", "worker"]


def test_jobgroup_tree_instances_with_replicas() -> None:
    tree = Workload(karta("jobgroup"), obj("jobgroup")).tree()
    (job,) = tree.children
    assert [(i.key, i.scale) for i in job.instances] == [
        ("indexer", Scale(replicas=2)),
        ("processor", Scale(replicas=3)),
    ]
    assert job.has_pod_definition


def test_tree_instances_sorted_by_key_not_output_order_and_children_repeat_under_each_instance() -> None:
    karta_ = definition(
        {
            "name": "group",
            "ownerRef": "root",
            "instanceIdPath": ".spec.groups[]",
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
        },
        {"name": "pod", "ownerRef": "group", "specDefinition": {"podSpecPath": ".spec.pod"}},
    )
    tree = Workload(karta_, thing(groups=["b", "a"], pod={})).tree()
    (group,) = tree.children
    assert [i.key for i in group.instances] == ["a", "b"]
    assert [c.name for c in group.instances[0].children] == ["pod"]
    assert group.instances[0].children == group.instances[1].children


def test_bare_root_with_template_has_no_children_and_one_instance() -> None:
    karta_ = definition(
        root={
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"replicasPath": ".spec.parallelism"},
        }
    )
    tree = Workload(karta_, thing(template={"spec": {}}, parallelism=3)).tree()
    assert tree.children == ()
    assert tree.root.instances[0].scale == Scale(replicas=3)
    assert tree.root.has_pod_definition


def test_component_without_scale_definition_has_no_scale_in_the_tree() -> None:
    karta_ = definition(
        {"name": "proxy", "ownerRef": "root", "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"}}
    )
    (proxy,) = Workload(karta_, thing()).tree().children
    assert proxy.instances[0].scale is None
    assert proxy.instances[0].extracted is not None


def test_tree_json() -> None:
    data = Workload(karta("reactor"), obj("reactor")).tree().to_dict()
    assert json.loads(json.dumps(data)) == data
    instances = data["root"]["instances"][0]["children"][0]["instances"]
    assert [i["instanceKey"] for i in instances] == ["api", "cache", "worker"]
    assert instances[2]["scale"] == {"replicas": 4, "minReplicas": 2, "maxReplicas": 8}
