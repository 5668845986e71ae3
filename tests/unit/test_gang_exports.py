"""The plan written for each scheduler: KAI, Volcano, coscheduling, Kueue and the Kubernetes Workload API.

The acceptance figures (PyTorchJob 5; JobSet 1 and 8; LWS 4 and 4; KAI-native sub-groups) are checked in every
format, reading each format's own fields.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.fixtures.gang import obj, workload
from workload_map.gang import (
    FORMATS,
    ExportError,
    GangPlan,
    export,
    is_dns1123_label,
    is_dns1123_subdomain,
    kueue_pod_sets,
    min_member_of,
    plan,
    pod_join,
    to_kueue,
    to_workload_api,
)
from workload_map.resolve import Workload

ACCEPTANCE = {
    "pytorchjob": [("mnist-ddp", 5)],
    "jobset": [("train", 9)],  # one gang: the driver's and the workers' Jobs together
    "leaderworkerset": [("llm-0", 4), ("llm-1", 4)],
}


def gangs_in(manifests: list[dict[str, Any]], fmt: str) -> list[tuple[str, int]]:
    """(name, min member) of every gang object of an export, read from that format's fields."""
    if fmt == "workload":
        templates = {
            template["name"]: template["schedulingPolicy"]["gang"]["minCount"]
            for template in manifests[0]["spec"]["podGroupTemplates"]
        }
        groups = manifests[1:]
        assert all(group["kind"] == "PodGroup" for group in groups)
        for group in groups:
            reference = group["spec"]["podGroupTemplateRef"]["workload"]
            assert templates[reference["podGroupTemplateName"]] == min_member_of(group)
        return [(group["metadata"]["name"], min_member_of(group)) for group in groups]
    return [(manifest["metadata"]["name"], min_member_of(manifest)) for manifest in manifests]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fixture", sorted(ACCEPTANCE))
def test_acceptance_gangs_and_min_members_in_every_format(fixture: str, fmt: str) -> None:
    manifests = export(plan(workload(fixture).resolve()), fmt)
    assert gangs_in(manifests, fmt) == ACCEPTANCE[fixture]


@pytest.mark.parametrize("fixture", sorted(ACCEPTANCE))
def test_acceptance_in_the_workload_api_v1alpha1(fixture: str) -> None:
    gang_plan = plan(workload(fixture).resolve())
    (workload_object,) = to_workload_api(gang_plan, api_version="scheduling.k8s.io/v1alpha1")
    minimum = {group["name"]: group["policy"]["gang"]["minCount"] for group in workload_object["spec"]["podGroups"]}
    seen = []
    for gang in gang_plan.gangs:
        reference = pod_join(gang_plan, gang, "workload", workload_api_version="scheduling.k8s.io/v1alpha1")
        ref = reference["spec"]["workloadRef"]
        seen.append((ref["podGroup"], ref.get("podGroupReplicaKey"), minimum[ref["podGroup"]]))
    expected = {
        "pytorchjob": [("pytorchjob", None, 5)],
        "jobset": [("jobset", None, 9)],
        "leaderworkerset": [("group", "0", 4), ("group", "1", 4)],
    }[fixture]
    assert seen == expected


@pytest.mark.parametrize("fixture", sorted(ACCEPTANCE))
def test_v1alpha2_pods_name_their_own_pod_group_and_each_pod_group_its_template(fixture: str) -> None:
    gang_plan = plan(workload(fixture).resolve())
    manifests = to_workload_api(gang_plan)
    groups = {manifest["metadata"]["name"]: manifest for manifest in manifests if manifest["kind"] == "PodGroup"}
    for gang in gang_plan.gangs:
        join = pod_join(gang_plan, gang, "workload")
        assert join["spec"] == {"schedulingGroup": {"podGroupName": gang.name}}
        assert groups[gang.name]["spec"]["schedulingPolicy"] == {"gang": {"minCount": gang.min_member}}


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_sub_groups_in_every_format(fmt: str) -> None:
    manifests = export(plan(workload("inferencegraph").resolve()), fmt)
    assert gangs_in(manifests, fmt) == [("chat", 6)]


def test_kai_native_export_has_sub_groups_and_min_sub_group_instead_of_min_member() -> None:
    (pod_group,) = export(plan(workload("inferencegraph").resolve()), "kai", queue="inference", priority_class="high")
    assert pod_group["apiVersion"] == "scheduling.run.ai/v2alpha2"
    spec = pod_group["spec"]
    assert "minMember" not in spec
    assert spec["minSubGroup"] == 2
    assert spec["subGroups"] == [
        {
            "name": "prefill",
            "minMember": 2,
            "topologyConstraint": {"topology": "gpu-cluster", "preferredTopologyLevel": "nvidia.com/gpu-clique"},
        },
        {"name": "decode", "minMember": 4},
    ]
    assert spec["topologyConstraint"] == {
        "topology": "gpu-cluster",
        "requiredTopologyLevel": "topology.kubernetes.io/zone",
    }
    assert (spec["queue"], spec["priorityClassName"]) == ("inference", "high")


def test_kai_pod_groups_belong_to_the_workload() -> None:
    (pod_group,) = export(plan(workload("pytorchjob").resolve()), "kai")
    metadata = pod_group["metadata"]
    assert metadata["namespace"] == "research"
    assert metadata["ownerReferences"] == [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "name": "mnist-ddp",
            "uid": "6f1c2a10-0000-4000-8000-000000000001",
        }
    ]
    # as KAI groups a PyTorchJob: the job's minimum at the root, a sub-group per role
    assert pod_group["spec"] == {
        "minMember": 5,
        "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 4}],
    }


def test_a_gang_with_nothing_to_wait_for_is_kais_min_member_0() -> None:
    value = obj("pytorchjob")
    value["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 0
    value["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 0
    (pod_group,) = export(plan(workload("pytorchjob", value).resolve()), "kai")
    assert pod_group["spec"] == {"minMember": 0}  # KAI's CRD: "0 means no gang requirement"


def test_volcano_has_task_minimums_resources_queue_and_priority() -> None:
    (pod_group,) = export(plan(workload("pytorchjob").resolve()), "volcano", queue="research", priority_class="batch")
    assert pod_group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert pod_group["spec"] == {
        "minMember": 5,
        "minTaskMember": {"master": 1, "worker": 4},
        "minResources": {"cpu": "36", "memory": "144Gi", "nvidia.com/gpu": "9"},
        "queue": "research",
        "priorityClassName": "batch",
    }


def test_volcano_tasks_of_a_native_gang_are_its_sub_groups() -> None:
    (pod_group,) = export(plan(workload("inferencegraph").resolve()), "volcano")
    assert pod_group["spec"]["minTaskMember"] == {"prefill": 2, "decode": 4}


def test_coscheduling_has_min_member_resources_and_timeout_and_pods_join_by_label() -> None:
    gang_plan = plan(workload("leaderworkerset").resolve())
    first, _ = export(gang_plan, "coscheduling", schedule_timeout_seconds=120, queue="ignored")
    assert first["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert first["spec"] == {
        "minMember": 4,
        "minResources": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "32"},
        "scheduleTimeoutSeconds": 120,
    }
    assert pod_join(gang_plan, "llm-0", "coscheduling")["labels"] == {"scheduling.x-k8s.io/pod-group": "llm-0"}


def test_kueue_pod_sets_count_the_pods_of_each_role_with_their_template() -> None:
    (kueue_workload,) = to_kueue(plan(workload("pytorchjob").resolve()), queue="team-a")
    assert kueue_workload["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    spec = kueue_workload["spec"]
    assert spec["queueName"] == "team-a"
    assert [(pod_set["name"], pod_set["count"]) for pod_set in spec["podSets"]] == [("master", 1), ("worker", 4)]
    template = spec["podSets"][1]["template"]
    assert template["metadata"] == {"labels": {"app": "mnist"}}
    assert template["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 2}


def test_kueue_partial_admission_goes_on_one_pod_set_only() -> None:
    value = obj("pytorchjob")
    value["spec"]["elasticPolicy"] = {"minReplicas": 2}
    (gang,) = plan(workload("pytorchjob", value).resolve()).gangs
    pod_sets = kueue_pod_sets(gang)
    assert [(pod_set["name"], pod_set["count"], pod_set.get("minCount")) for pod_set in pod_sets] == [
        ("master", 1, None),
        ("worker", 4, 2),
    ]


def test_kueue_priority_class_needs_the_priority_value_else_it_goes_on_the_templates() -> None:
    gang_plan = plan(workload("jobset").resolve())
    with_value = to_kueue(gang_plan, priority_class="high", priority=1000)[0]["spec"]
    assert (with_value["priorityClassName"], with_value["priority"]) == ("high", 1000)
    assert with_value["priorityClassSource"] == "scheduling.k8s.io/priorityclass"
    without = to_kueue(gang_plan, priority_class="high")[0]["spec"]
    assert "priorityClassName" not in without
    assert without["podSets"][0]["template"]["spec"]["priorityClassName"] == "high"


def test_kueue_topology_request_comes_from_the_native_topology() -> None:
    (kueue_workload,) = to_kueue(plan(workload("inferencegraph").resolve()))
    requests = {pod_set["name"]: pod_set.get("topologyRequest") for pod_set in kueue_workload["spec"]["podSets"]}
    assert requests == {
        "prefill": {"preferred": "nvidia.com/gpu-clique"},
        "decode": {"required": "topology.kubernetes.io/zone"},
    }


def test_kueue_refuses_more_than_eight_pod_sets() -> None:
    value = obj("jobset")
    template = value["spec"]["replicatedJobs"][0]
    value["spec"]["replicatedJobs"] = [{**copy.deepcopy(template), "name": f"job-{index}"} for index in range(9)]
    definition = workload("jobset").definition
    gang_plan = plan(Workload(definition, value).resolve())
    merged = GangPlan(
        workload=gang_plan.workload,
        uid=gang_plan.uid,
        definition=gang_plan.definition,
        format=gang_plan.format,
        scale_mode=gang_plan.scale_mode,
        gangs=(
            type(gang_plan.gangs[0])(
                name="all",
                pod_group="replicatedjob",
                members=("replicatedjob",),
                min_member=9,
                roles=tuple(role for gang in gang_plan.gangs for role in gang.roles),
            ),
        ),
    )
    with pytest.raises(ExportError, match="at most 8 podSets"):
        to_kueue(merged)


def test_workload_api_v1alpha2_has_templates_and_one_pod_group_per_gang() -> None:
    manifests = to_workload_api(plan(workload("leaderworkerset").resolve()))
    workload_object, *groups = manifests
    assert workload_object["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert workload_object["spec"]["controllerRef"] == {
        "apiGroup": "leaderworkerset.x-k8s.io",
        "kind": "LeaderWorkerSet",
        "name": "llm",
    }
    assert workload_object["spec"]["podGroupTemplates"] == [
        {"name": "group", "schedulingPolicy": {"gang": {"minCount": 4}}}
    ]
    assert [group["spec"]["podGroupTemplateRef"] for group in groups] == [
        {"workload": {"workloadName": "llm", "podGroupTemplateName": "group"}}
    ] * 2


def test_workload_api_topology_uses_the_required_level_as_topology_key() -> None:
    workload_object = to_workload_api(plan(workload("inferencegraph").resolve()))[0]
    (template,) = workload_object["spec"]["podGroupTemplates"]
    assert template["schedulingConstraints"] == {"topology": [{"key": "topology.kubernetes.io/zone"}]}


def test_workload_api_version_must_be_one_we_write() -> None:
    with pytest.raises(ExportError, match="unsupported Workload API version"):
        to_workload_api(plan(workload("jobset").resolve()), api_version="scheduling.k8s.io/v1beta1")


def test_unknown_format_is_an_error_listing_the_formats() -> None:
    with pytest.raises(ExportError, match="kai, volcano, coscheduling, kueue, workload"):
        export(plan(workload("jobset").resolve()), "yunikorn")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_exported_name_is_a_valid_kubernetes_name(fmt: str) -> None:
    for fixture in (*ACCEPTANCE, "inferencegraph"):
        for manifest in export(plan(workload(fixture).resolve()), fmt):
            name = manifest["metadata"]["name"]
            assert is_dns1123_subdomain(name) and len(name) <= 63
            for pod_set in manifest["spec"].get("podSets", []):
                assert is_dns1123_label(pod_set["name"])
            for group in manifest["spec"].get("subGroups", []):
                assert is_dns1123_label(group["name"])


def test_pods_join_kai_and_volcano_gangs_by_annotation() -> None:
    gang_plan = plan(workload("inferencegraph").resolve())
    kai = pod_join(gang_plan, "chat", "kai", sub_group="prefill", queue="inference")
    assert kai == {
        "labels": {"kai.scheduler/subgroup-name": "prefill", "kai.scheduler/queue": "inference"},
        "annotations": {"pod-group-name": "chat"},
    }
    volcano = pod_join(gang_plan, "chat", "volcano", sub_group="prefill")
    assert volcano["annotations"] == {"scheduling.k8s.io/group-name": "chat", "volcano.sh/task-spec": "prefill"}


def test_pods_join_a_kueue_workload_by_the_queue_name_label_only() -> None:
    """Kueue admits a Workload's pods through the job integration, which reads the pod's
    `kueue.x-k8s.io/queue-name` label; without a queue there is nothing for the pod to carry."""
    gang_plan = plan(workload("jobset").resolve())
    name = gang_plan.gangs[0].name
    assert pod_join(gang_plan, name, "kueue", queue="team-a") == {
        "labels": {"kueue.x-k8s.io/queue-name": "team-a"},
        "annotations": {},
    }
    assert pod_join(gang_plan, name, "kueue") == {"labels": {}, "annotations": {}}
