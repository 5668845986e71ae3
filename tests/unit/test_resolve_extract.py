"""Extraction (karta-spec §3, §11.1-11.2, §15.4-15.5): instance ids, pod templates/specs/metadata, fragmented specs,
scales, and the count and type errors that name the component and the field.

Test design: the PyFlow, JobGroup and Reactor fixtures cover the three shapes (single-instance children, an array
of named instances, a map of instances); small inline definitions pin each error.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.resolve import karta, obj
from workload_map.model import Karta, karta_from_dict
from workload_map.resolve import ExtractionError, FragmentedPodSpec, Scale, Workload

GVK = {"group": "example.com", "version": "v1", "kind": "Thing"}


def definition(**child: Any) -> Karta:
    """A root plus one child `c` with the given fields."""
    return karta_from_dict(
        {
            "metadata": {"name": "thing"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {"name": "root", "kind": GVK, "statusDefinition": {"statusMappings": {}}},
                    "childComponents": [{"name": "c", "ownerRef": "root", **child}],
                }
            },
        }
    )


def thing(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}


def child(spec: dict[str, Any], **fields: Any) -> Any:
    return Workload(definition(**fields), thing(**spec)).component("c")


MULTI = {"podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}}}


# --- PyFlow: single-instance children with pod templates --------------------------------------------------------------


def test_pyflow_master_and_worker_have_one_instance_with_empty_id() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    assert workload.component("master").instance_ids == [""]
    assert workload.component("worker").multi_instance is False


def test_pyflow_pod_template_spec_is_the_whole_template() -> None:
    templates = Workload(karta("pyflow"), obj("pyflow")).component("master").pod_template_specs
    assert templates is not None
    assert templates[""]["metadata"]["labels"] == {"pyflow.example.com/role": "master"}
    assert templates[""]["spec"]["containers"][0]["name"] == "trainer"


def test_pyflow_master_has_replicas_only_worker_has_min_and_max() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    assert workload.component("master").scales == {"": Scale(replicas=1)}
    assert workload.component("worker").scales == {"": Scale(min_replicas=1, max_replicas=5)}


def test_inverted_min_and_max_are_kept_as_is() -> None:
    pyflow = obj("pyflow")
    pyflow["spec"]["worker"].update(minReplicas=5, maxReplicas=2)
    assert Workload(karta("pyflow"), pyflow).component("worker").scales == {"": Scale(min_replicas=5, max_replicas=2)}


def test_getters_are_none_without_their_definition() -> None:
    master = Workload(karta("pyflow"), obj("pyflow")).component("master")
    assert master.pod_specs is None
    assert master.pod_metadata is None
    assert master.fragmented_pod_specs is None
    root = Workload(karta("pyflow"), obj("pyflow")).root
    assert root.scales is None
    assert root.pod_template_specs is None


def test_values_are_copies_changing_them_changes_nothing() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    templates = workload.component("master").pod_template_specs
    assert templates is not None
    templates[""]["spec"]["containers"].clear()
    again = workload.component("master").pod_template_specs
    assert again is not None
    assert again[""]["spec"]["containers"]


def test_pod_definition_detection_metadata_alone_does_not_count() -> None:
    assert child({}, specDefinition={"metadataPath": ".spec.m"}).has_pod_definition is False
    assert child({}, specDefinition={"podSpecPath": ".spec.p"}).has_pod_definition is True
    assert child({}, specDefinition={"fragmentedPodSpecDefinition": {}}).has_pod_definition is True


# --- JobGroup: an array of named instances ----------------------------------------------------------------------------


def test_jobgroup_instance_ids_in_array_order() -> None:
    assert Workload(karta("jobgroup"), obj("jobgroup")).component("job").instance_ids == ["indexer", "processor"]


def test_jobgroup_pod_spec_and_metadata_zip_with_ids_missing_metadata_is_empty() -> None:
    job = Workload(karta("jobgroup"), obj("jobgroup")).component("job")
    specs = job.pod_specs
    metadata = job.pod_metadata
    assert specs is not None and metadata is not None
    assert specs["indexer"]["schedulerName"] == "kai-scheduler"
    assert specs["processor"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert metadata == {"indexer": {"labels": {"tier": "index"}}, "processor": {}}


def test_jobgroup_scales_come_from_the_array() -> None:
    job = Workload(karta("jobgroup"), obj("jobgroup")).component("job")
    assert job.scales == {"indexer": Scale(replicas=2), "processor": Scale(replicas=3)}


def test_extracted_instances_aggregate_every_defined_field() -> None:
    instances = Workload(karta("jobgroup"), obj("jobgroup")).component("job").instances
    indexer = instances["indexer"]
    assert indexer.pod_spec is not None and indexer.pod_spec["restartPolicy"] == "Never"
    assert indexer.pod_metadata == {"labels": {"tier": "index"}}
    assert indexer.scale == Scale(replicas=2)
    assert indexer.pod_template_spec is None
    assert indexer.to_dict()["metadata"] == {"labels": {"tier": "index"}}
    assert "podTemplateSpec" not in indexer.to_dict()


def test_empty_instance_id_fails_listing_the_ids() -> None:
    jobgroup = obj("jobgroup")
    jobgroup["spec"]["replicatedJobs"][0]["name"] = ""
    with pytest.raises(ExtractionError, match=r"\[,processor\]") as caught:
        _ = Workload(karta("jobgroup"), jobgroup).component("job").instance_ids
    assert caught.value.component == "job"
    assert caught.value.field == "instanceIdPath"


def test_null_or_numeric_instance_id_fails() -> None:
    with pytest.raises(ExtractionError, match="empty string values"):
        _ = child({"items": [{"name": "a"}, {}]}, instanceIdPath=".spec.items[].name", **MULTI).instance_ids
    with pytest.raises(ExtractionError, match="to type string"):
        _ = child({"items": [{"name": 1}]}, instanceIdPath=".spec.items[].name", **MULTI).instance_ids


def test_zero_instances_give_empty_maps() -> None:
    component = child(
        {"items": []},
        instanceIdPath=".spec.items[].name",
        specDefinition={"podSpecPath": ".spec.items[].spec"},
        **MULTI,
    )
    assert component.instance_ids == []
    assert component.pod_specs == {}


def test_duplicate_ids_later_one_wins() -> None:
    component = child(
        {"items": [{"name": "a", "n": 1}, {"name": "a", "n": 2}]},
        instanceIdPath=".spec.items[].name",
        scaleDefinition={"replicasPath": ".spec.items[].n"},
        **MULTI,
    )
    assert component.instance_ids == ["a", "a"]
    assert component.scales == {"a": Scale(replicas=2)}


# --- Reactor: a map of instances with fragmented pod fields -----------------------------------------------------------


def test_reactor_map_instances_come_in_sorted_key_order() -> None:
    assert Workload(karta("reactor"), obj("reactor")).component("service").instance_ids == ["api", "cache", "worker"]


def test_reactor_scales_come_from_the_map_numeric_strings_parsed() -> None:
    scales = Workload(karta("reactor"), obj("reactor")).component("service").scales
    assert scales == {
        "api": Scale(replicas=2),
        "cache": Scale(replicas=1),
        "worker": Scale(replicas=4, min_replicas=2, max_replicas=8),
    }


def test_reactor_fragmented_spec_gathers_every_field_kind_and_omits_empty_ones() -> None:
    specs = Workload(karta("reactor"), obj("reactor")).component("service").fragmented_pod_specs
    assert specs is not None
    worker = specs["worker"]
    assert worker.scheduler_name == "kai-scheduler"
    assert worker.priority_class_name == "inference"
    assert worker.image == "ghcr.io/example/worker:3.0"
    assert worker.labels == {"app": "chat", "role": "worker"}
    assert worker.resources == {"limits": {"nvidia.com/gpu": 1}}
    assert worker.resource_claims == [{"name": "gpu", "resourceClaimName": "chat-gpu"}]
    assert worker.node_affinity is not None
    assert worker.container == {"name": "worker", "image": "ghcr.io/example/worker:3.0"}
    assert worker.containers == [{"name": "worker", "image": "ghcr.io/example/worker:3.0"}]
    assert specs["api"].pod_affinity is not None
    assert specs["cache"].to_dict() == {"containers": [{"name": "redis", "image": "redis:7"}]}
    assert set(worker.to_dict()) == {
        "schedulerName",
        "labels",
        "annotations",
        "resources",
        "resourceClaims",
        "podAffinity",
        "nodeAffinity",
        "containers",
        "container",
        "priorityClassName",
        "image",
    } - {"annotations", "podAffinity"}


def test_fragmented_sub_paths_combine_by_index_shorter_ones_leave_fields_empty() -> None:
    component = child(
        {"a": ["x", "y"], "b": ["img"]},
        specDefinition={"fragmentedPodSpecDefinition": {"schedulerNamePath": ".spec.a[]", "imagePath": ".spec.b[]"}},
        instanceIdPath=".spec.a[]",
        **MULTI,
    )
    assert component.fragmented_pod_specs == {
        "x": FragmentedPodSpec(scheduler_name="x", image="img"),
        "y": FragmentedPodSpec(scheduler_name="y"),
    }


def test_fragmented_field_of_wrong_type_names_the_field_and_index() -> None:
    with pytest.raises(ExtractionError) as caught:
        _ = child(
            {"labels": {"a": 1}}, specDefinition={"fragmentedPodSpecDefinition": {"labelsPath": ".spec.labels"}}
        ).fragmented_pod_specs
    assert caught.value.field == "specDefinition.fragmentedPodSpecDefinition.labelsPath"
    assert "index 0" in caught.value.message


def test_empty_fragmented_definition_is_a_count_mismatch() -> None:
    with pytest.raises(ExtractionError, match=r"instance ids count \(1\) does not match results count \(0\)"):
        _ = child({}, specDefinition={"fragmentedPodSpecDefinition": {}}).fragmented_pod_specs


# --- counts and types -------------------------------------------------------------------------------------------------


def test_single_instance_path_with_two_outputs_is_a_count_mismatch_naming_field_and_counts() -> None:
    with pytest.raises(ExtractionError) as caught:
        _ = child({"t": [{}, {}]}, specDefinition={"podTemplateSpecPath": ".spec.t[]"}).pod_template_specs
    assert caught.value.component == "c"
    assert caught.value.field == "specDefinition.podTemplateSpecPath"
    assert "instance ids count (1) does not match results count (2)" in caught.value.message


def test_multi_instance_with_constant_scale_path_is_a_count_mismatch() -> None:
    with pytest.raises(ExtractionError, match=r"\(2\) does not match results count \(1\)"):
        _ = child(
            {"items": [{"name": "a"}, {"name": "b"}]},
            instanceIdPath=".spec.items[].name",
            scaleDefinition={"replicasPath": "1"},
            **MULTI,
        ).scales


def test_scale_definition_without_paths_is_a_count_mismatch() -> None:
    with pytest.raises(ExtractionError, match=r"\(1\) does not match results count \(0\)"):
        _ = child({}, scaleDefinition={}).scales


def test_null_template_is_an_empty_template_not_an_error() -> None:
    assert child({}, specDefinition={"podTemplateSpecPath": ".spec.template"}).pod_template_specs == {"": {}}


def test_template_of_wrong_type_is_a_conversion_error() -> None:
    with pytest.raises(ExtractionError, match="failed to convert object at index 0 to type PodTemplateSpec"):
        _ = child({"template": "x"}, specDefinition={"podTemplateSpecPath": ".spec.template"}).pod_template_specs


@pytest.mark.parametrize(("value", "replicas"), [(3, 3), (3.0, 3), ("7", 7), ("-1", -1), ("+4", 4), (None, None)])
def test_replicas_accept_integral_numbers_and_base10_strings(value, replicas) -> None:
    assert child({"r": value}, scaleDefinition={"replicasPath": ".spec.r"}).scales == {"": Scale(replicas=replicas)}


def test_replicas_default_expression_and_arithmetic_work() -> None:
    component = child(
        {"a": 2, "b": 3}, scaleDefinition={"replicasPath": ".spec.a * .spec.b", "maxReplicasPath": ".spec.x // 1"}
    )
    assert component.scales == {"": Scale(replicas=6, max_replicas=1)}


@pytest.mark.parametrize("value", [2.5, True, "abc", " 2", "2_0", "", 2**31, "-2147483649", [1], {"a": 1}])
def test_bad_replicas_name_component_field_and_value(value) -> None:
    with pytest.raises(ExtractionError) as caught:
        _ = child({"r": value}, scaleDefinition={"minReplicasPath": ".spec.r"}).scales
    assert caught.value.component == "c"
    assert caught.value.field == "scaleDefinition.minReplicasPath"
    assert "replica" in caught.value.message


def test_replica_error_shows_the_value() -> None:
    with pytest.raises(ExtractionError, match='"abc"'):
        _ = child({"r": "abc"}, scaleDefinition={"replicasPath": ".spec.r"}).scales


def test_jq_runtime_error_is_an_extraction_error_naming_the_field() -> None:
    with pytest.raises(ExtractionError) as caught:
        _ = child({}, specDefinition={"podSpecPath": ".spec.items[]"}).pod_specs
    assert caught.value.field == "specDefinition.podSpecPath"
    assert "null" in caught.value.message


# --- one document, many expressions -----------------------------------------------------------------------------------


def test_root_without_kind_children_logical_component_kind_is_none() -> None:
    assert child({}).kind is None
    assert Workload(karta("jobgroup"), obj("jobgroup")).component("job").kind is not None
