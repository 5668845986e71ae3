"""Write-back (karta-spec §7, §11.3, §15.4 "Updates"): per-instance updates, the fragmented field rules, the
no-empty-write divergence, suspend/resume, `to_object()` and the merge patch.

Test design: each test updates through the public `Component.update_*` / `Workload.suspend` methods and checks
what a user would apply: `to_object()` and `merge_patch()`, plus re-reads through the same workload.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.fixtures.resolve import karta, obj
from workload_map.model import Karta, karta_from_dict
from workload_map.resolve import (
    DefinitionNotFound,
    FragmentedPodSpec,
    InvalidDefinitionError,
    InvalidObjectError,
    SuspendNotSupported,
    UpdateError,
    Workload,
)

GVK = {"group": "example.com", "version": "v1", "kind": "Thing"}


def definition(root: dict[str, Any] | None = None, *children: dict[str, Any]) -> Karta:
    return karta_from_dict(
        {
            "metadata": {"name": "thing"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "root",
                        "kind": GVK,
                        "statusDefinition": {"statusMappings": {}},
                        **(root or {}),
                    },
                    "childComponents": [{"ownerRef": "root", **c} for c in children],
                }
            },
        }
    )


def thing(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}


# --- pod specs, templates, metadata -----------------------------------------------------------------------------------


def test_update_pod_specs_per_instance_is_read_back_and_applied() -> None:
    workload = Workload(karta("jobgroup"), obj("jobgroup"))
    job = workload.component("job")
    specs = job.pod_specs
    assert specs is not None
    specs["indexer"]["schedulerName"] = "volcano"
    specs["processor"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared"}]
    job.update_pod_specs(specs)
    again = job.pod_specs
    assert again is not None
    assert again["indexer"]["schedulerName"] == "volcano"
    assert again["processor"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "shared"}]
    jobs = workload.to_object()["spec"]["replicatedJobs"]
    assert jobs[0]["spec"]["schedulerName"] == "volcano"


def test_update_replaces_the_whole_value_empty_containers_empty_the_list() -> None:
    job = Workload(karta("jobgroup"), obj("jobgroup")).component("job")
    specs = job.pod_specs
    assert specs is not None
    specs["processor"] = {"containers": []}
    job.update_pod_specs(specs)
    again = job.pod_specs
    assert again is not None
    assert again["processor"] == {"containers": []}  # restartPolicy is gone too


def test_update_pod_template_specs_single_instance() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    master = workload.component("master")
    templates = master.pod_template_specs
    assert templates is not None
    templates[""]["spec"]["resourceClaims"] = [{"name": "gpu"}]
    master.update_pod_template_specs(templates)
    assert workload.to_object()["spec"]["master"]["template"]["spec"]["resourceClaims"] == [{"name": "gpu"}]
    assert workload.merge_patch() == {"spec": {"master": {"template": {"spec": {"resourceClaims": [{"name": "gpu"}]}}}}}


def test_update_pod_metadata_per_instance_adds_metadata_where_there_was_none() -> None:
    workload = Workload(karta("jobgroup"), obj("jobgroup"))
    job = workload.component("job")
    job.update_pod_metadata({"indexer": {"labels": {"tier": "hot"}}, "processor": {"labels": {"gpu": "yes"}}})
    assert job.pod_metadata == {"indexer": {"labels": {"tier": "hot"}}, "processor": {"labels": {"gpu": "yes"}}}


def test_missing_definition_is_an_error_for_updates() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    with pytest.raises(DefinitionNotFound, match="does not have pod spec definition"):
        workload.component("master").update_pod_specs({"": {}})
    with pytest.raises(DefinitionNotFound, match="does not have pod metadata definition"):
        workload.component("master").update_pod_metadata({"": {}})
    with pytest.raises(DefinitionNotFound, match="does not have pod template spec definition"):
        Workload(karta("jobgroup"), obj("jobgroup")).component("job").update_pod_template_specs({})
    with pytest.raises(DefinitionNotFound, match="does not have fragmented pod spec definition"):
        workload.component("master").update_fragmented_pod_specs({"": FragmentedPodSpec()})


def test_missing_instance_value_is_an_error_and_extra_ids_are_ignored() -> None:
    workload = Workload(karta("jobgroup"), obj("jobgroup"))
    job = workload.component("job")
    with pytest.raises(UpdateError, match="value not found for instance id: 'processor'"):
        job.update_pod_specs({"indexer": {}})
    assert workload.merge_patch() == {}
    specs = job.pod_specs
    assert specs is not None
    job.update_pod_specs({**specs, "ghost": {"containers": []}})
    assert workload.merge_patch() == {}


def test_non_mapping_value_is_an_error() -> None:
    job = Workload(karta("jobgroup"), obj("jobgroup")).component("job")
    with pytest.raises(UpdateError, match="not a mapping"):
        job.update_pod_specs({"indexer": ["x"], "processor": {}})  # type: ignore[dict-item]


def test_caller_object_is_never_mutated() -> None:
    original = obj("jobgroup")
    before = copy.deepcopy(original)
    workload = Workload(karta("jobgroup"), original)
    workload.component("job").update_pod_metadata({"indexer": {"labels": {"x": "y"}}, "processor": {}})
    assert original == before
    assert workload.modified


def test_an_update_through_one_component_is_seen_by_every_later_read() -> None:
    karta_ = definition(
        {"specDefinition": {"podSpecPath": ".spec.pod"}},
        {
            "name": "view",
            "specDefinition": {"fragmentedPodSpecDefinition": {"schedulerNamePath": ".spec.pod.schedulerName"}},
        },
    )
    workload = Workload(karta_, thing(pod={"schedulerName": "default"}))
    workload.root.update_pod_specs({"": {"schedulerName": "kai"}})
    specs = workload.component("view").fragmented_pod_specs
    assert specs == {"": FragmentedPodSpec(scheduler_name="kai")}


def test_a_written_path_must_be_a_path_expression() -> None:
    karta_ = definition({"specDefinition": {"podSpecPath": ".spec.pods | map(.)"}})
    workload = Workload(karta_, thing(pods=[{}]))
    with pytest.raises(UpdateError, match="path expression"):
        workload.root.update_pod_specs({"": {"containers": []}})


def test_multi_instance_write_needs_one_place_per_instance() -> None:
    karta_ = definition(
        {},
        {
            "name": "c",
            "instanceIdPath": ".spec.ids[]",
            "specDefinition": {"podSpecPath": ".spec.pods[]"},
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
        },
    )
    workload = Workload(karta_, thing(ids=["a", "b"], pods=[{"x": 1}]))
    with pytest.raises(UpdateError, match="array length mismatch: expected 1 values but got 2"):
        workload.component("c").update_pod_specs({"a": {"y": 1}, "b": {"y": 2}})
    assert workload.merge_patch() == {}


def test_a_failed_write_changes_nothing() -> None:
    karta_ = definition(
        {},
        {
            "name": "c",
            "instanceIdPath": ".spec.items[].name",
            "specDefinition": {"podSpecPath": ".spec.items[].spec.pod"},
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
        },
    )
    workload = Workload(karta_, thing(items=[{"name": "a"}, {"name": "b", "spec": "text"}]))
    with pytest.raises(UpdateError, match="cannot find the paths to write"):
        workload.component("c").update_pod_specs({"a": {"ok": 1}, "b": {"ok": 2}})
    assert workload.merge_patch() == {}


# --- fragmented pod specs ---------------------------------------------------------------------------------------------


def test_update_fragmented_per_map_instance() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    service = workload.component("service")
    specs = service.fragmented_pod_specs
    assert specs is not None
    service.update_fragmented_pod_specs(
        {
            "api": {**specs["api"].to_dict(), "labels": {"app": "chat"}, "containers": [{"name": "api2"}]},
            "cache": {**specs["cache"].to_dict(), "resourceClaims": [{"name": "c"}]},
            "worker": specs["worker"],
        }
    )
    services = workload.to_object()["spec"]["services"]
    assert services["api"]["labels"] == {"app": "chat"}
    assert services["api"]["containers"] == [{"name": "api2"}]
    assert services["cache"]["claims"] == [{"name": "c"}]
    assert services["worker"]["labels"] == {"app": "chat", "role": "worker"}


def test_labels_are_untouched_when_only_containers_change() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    service = workload.component("service")
    specs = service.fragmented_pod_specs
    assert specs is not None
    service.update_fragmented_pod_specs({key: FragmentedPodSpec(containers=[{"name": f"{key}-new"}]) for key in specs})
    patch = workload.merge_patch()
    assert patch == {"spec": {"services": {key: {"containers": [{"name": f"{key}-new"}]} for key in specs}}}


def test_round_trip_adds_no_null_labels_annotations_or_resources() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    service = workload.component("service")
    specs = service.fragmented_pod_specs
    assert specs is not None
    service.update_fragmented_pod_specs(specs)
    assert workload.merge_patch() == {}
    cache = workload.to_object()["spec"]["services"]["cache"]
    assert set(cache) == {"replicas", "containers"}


def test_no_empty_value_is_written_into_an_instance_that_lacked_the_field() -> None:
    """Divergence: upstream writes null for cache and worker here once api has annotations."""
    workload = Workload(karta("reactor"), obj("reactor"))
    service = workload.component("service")
    service.update_fragmented_pod_specs(
        {
            "api": FragmentedPodSpec(annotations={"a": "b"}),
            "cache": FragmentedPodSpec(),
            "worker": FragmentedPodSpec(),
        }
    )
    services = workload.to_object()["spec"]["services"]
    assert services["api"]["annotations"] == {"a": "b"}
    assert "annotations" not in services["cache"]
    assert "annotations" not in services["worker"]


def test_an_empty_value_does_clear_an_instance_that_had_the_field_when_others_are_set() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    workload.component("service").update_fragmented_pod_specs(
        {"api": FragmentedPodSpec(labels={"new": "x"}), "cache": FragmentedPodSpec(), "worker": FragmentedPodSpec()}
    )
    services = workload.to_object()["spec"]["services"]
    assert services["worker"]["labels"] is None  # worker had labels: the explicit empty value is written
    assert "labels" not in services["cache"]


def test_a_field_that_is_empty_everywhere_is_skipped() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    workload.component("service").update_fragmented_pod_specs(
        {key: FragmentedPodSpec() for key in ("api", "cache", "worker")}
    )
    assert workload.merge_patch() == {}


def test_a_set_field_without_a_path_is_an_error() -> None:
    karta_ = definition({"specDefinition": {"fragmentedPodSpecDefinition": {"imagePath": ".spec.image"}}})
    workload = Workload(karta_, thing(image="a"))
    with pytest.raises(UpdateError, match="failed to update labels: path is not defined and values are not empty"):
        workload.root.update_fragmented_pod_specs({"": FragmentedPodSpec(image="b", labels={"x": "y"})})


def test_fragmented_fields_are_written_in_upstream_order() -> None:
    # image and container.image point at the same place: container is written after image, so it wins
    karta_ = definition(
        {"specDefinition": {"fragmentedPodSpecDefinition": {"imagePath": ".spec.c.image", "containerPath": ".spec.c"}}}
    )
    workload = Workload(karta_, thing(c={"image": "old"}))
    workload.root.update_fragmented_pod_specs({"": {"image": "from-image", "container": {"image": "from-container"}}})
    assert workload.to_object()["spec"]["c"] == {"image": "from-container"}


def test_fragmented_value_of_wrong_type_is_an_error() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    with pytest.raises(UpdateError, match="labels for instance 'api' must be a map of strings"):
        workload.component("service").update_fragmented_pod_specs(
            {"api": {"labels": {"a": 1}}, "cache": {}, "worker": {}}
        )
    with pytest.raises(UpdateError, match="not a fragmented pod spec field"):
        workload.component("service").update_fragmented_pod_specs(
            {"api": {"nodeSelector": {}}, "cache": {}, "worker": {}}
        )


# --- suspend and resume -----------------------------------------------------------------------------------------------


def test_suspend_and_resume_apply_the_actions_and_the_merge_patch_shows_them() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    workload.suspend()
    assert workload.merge_patch() == {"spec": {"runPolicy": {"suspend": True}}}
    workload.resume()
    assert workload.to_object()["spec"]["runPolicy"]["suspend"] is False


def test_actions_run_in_order_later_overwrites_and_every_path_output_gets_the_value() -> None:
    karta_ = definition(
        {
            "suspendDefinition": {
                "suspendActions": [
                    {"path": ".spec.mode", "value": '"Draining"'},
                    {"path": ".spec.mode", "value": '"Suspended"'},
                    {"path": ".spec.jobs[].suspend", "value": "true"},
                    {"path": ".spec.replicas", "value": "0"},
                ],
                "resumeActions": [{"path": ".spec.mode", "value": "null"}],
            }
        }
    )
    workload = Workload(karta_, thing(mode="Running", jobs=[{}, {}], replicas=3))
    workload.suspend()
    spec = workload.to_object()["spec"]
    assert spec == {"mode": "Suspended", "jobs": [{"suspend": True}, {"suspend": True}], "replicas": 0}
    workload.resume()
    assert workload.to_object()["spec"]["mode"] is None  # an explicit action value is written as given


def test_undecodable_action_value_names_the_action_and_changes_nothing() -> None:
    karta_ = definition(
        {
            "suspendDefinition": {
                "suspendActions": [{"path": ".spec.a", "value": "true"}, {"path": ".spec.mode", "value": "Suspended"}],
                "resumeActions": [{"path": ".spec.a", "value": "false"}],
            }
        }
    )
    with pytest.raises(InvalidDefinitionError, match=r"suspendActions\[1\]\.value"):
        Workload(karta_, thing())  # the validator catches it before anything is extracted
    workload = Workload(karta_, thing(), validate=False)
    with pytest.raises(UpdateError, match=r"suspendActions\[1\]: failed to decode value"):
        workload.suspend()
    assert workload.merge_patch() == {}


def test_a_type_without_suspend_definition_cannot_be_suspended() -> None:
    workload = Workload(karta("reactor"), obj("reactor"))
    assert workload.can_suspend is False
    with pytest.raises(SuspendNotSupported, match="Reactor cannot be suspended"):
        workload.suspend()
    with pytest.raises(SuspendNotSupported, match="does not have suspendDefinition"):
        workload.component("service").resume()


# --- the result -------------------------------------------------------------------------------------------------------


def test_to_object_requires_api_version_kind_and_name() -> None:
    karta_ = definition(
        {
            "suspendDefinition": {
                "suspendActions": [{"path": ".metadata", "value": "{}"}],
                "resumeActions": [{"path": ".kind", "value": "null"}],
            }
        }
    )
    workload = Workload(karta_, thing())
    workload.suspend()
    with pytest.raises(
        InvalidObjectError, match=r"invalid Kubernetes object: missing metadata\.name or metadata\.generateName"
    ):
        workload.to_object()
    workload = Workload(karta_, thing())
    workload.resume()
    with pytest.raises(InvalidObjectError, match="missing kind"):
        workload.to_object()


def test_generate_name_is_enough_and_to_object_is_a_copy() -> None:
    obj_ = thing()
    obj_["metadata"] = {"generateName": "t-"}
    workload = Workload(definition(), obj_)
    out = workload.to_object()
    out["spec"]["x"] = 1
    assert "x" not in workload.to_object()["spec"]


def test_merge_patch_of_an_untouched_workload_is_empty_and_removals_are_null() -> None:
    workload = Workload(karta("jobgroup"), obj("jobgroup"))
    assert workload.merge_patch() == {}
    job = workload.component("job")
    job.update_pod_specs({"indexer": {"containers": []}, "processor": {"containers": []}})
    patch = workload.merge_patch()
    # arrays are replaced whole in a merge patch
    assert patch["spec"]["replicatedJobs"][0]["spec"] == {"containers": []}
