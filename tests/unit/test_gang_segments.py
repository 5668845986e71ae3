"""The `workloadmap.io/gang` annotation's `layout` (docs/gang.md).

Segments (`segments`): a component's pods cut into sub-groups of a fixed size, as KAI cuts an LWS group
(`subGroupPolicy`, `kai.scheduler/segment-size`) and a PyTorchJob's workers (the segment-size annotation on the Worker
template). Grove (`each`, `gang`, `layoutGang`): a parent per scaling-group replica and a gang per scaled PodGang.
KAI's own shapes for the same objects are the parity fixtures (tests/fixtures/kai, test_kai_parity.py); these tests
cover what the fixtures do not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures.gang import obj, pods, workload
from workload_map.catalog import builtin_registry
from workload_map.gang import GangError, export, joined_pod, plan
from workload_map.model import Karta, dump_yaml, karta_from_dict
from workload_map.resolve import Workload
from workload_map.validation import validate

SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
CATALOG = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"


def _lws(size: int, **template: Any) -> dict[str, Any]:
    value = obj("leaderworkerset")
    value["spec"]["leaderWorkerTemplate"]["size"] = size
    value["spec"]["leaderWorkerTemplate"].update(template)
    return value


def _kai(value: dict[str, Any], kind: str = "leaderworkerset") -> dict[str, Any]:
    spec: dict[str, Any] = export(plan(workload(kind, value).resolve()), "kai")[0]["spec"]
    return spec


LEADER_WORKER_5_BY_2 = {
    "minMember": 5,
    "subGroups": [
        {"name": "segment-0", "minSubGroup": 2},
        {"name": "leader", "parent": "segment-0", "minMember": 1},
        {"name": "workers", "parent": "segment-0", "minMember": 2},
        {"name": "segment-1", "minMember": 2},
    ],
}


def test_lws_sub_group_size_cuts_each_group_into_segments_with_the_leader_in_the_first() -> None:
    assert _kai(_lws(5, subGroupPolicy={"subGroupSize": 2})) == LEADER_WORKER_5_BY_2


def test_kais_segment_size_annotation_on_the_lws_or_its_worker_template_does_the_same() -> None:
    on_lws = _lws(5)
    on_lws["metadata"].setdefault("annotations", {})["kai.scheduler/segment-size"] = "2"
    assert _kai(on_lws) == LEADER_WORKER_5_BY_2
    on_template = _lws(5)
    on_template["spec"]["leaderWorkerTemplate"]["workerTemplate"].setdefault("metadata", {})["annotations"] = {
        "kai.scheduler/segment-size": "2"
    }
    assert _kai(on_template) == LEADER_WORKER_5_BY_2


def test_a_segment_as_large_as_the_group_is_one_parent_over_leader_and_workers() -> None:
    assert _kai(_lws(4, subGroupPolicy={"subGroupSize": 4})) == {
        "minMember": 4,
        "subGroups": [
            {"name": "segment-0", "minSubGroup": 2},
            {"name": "leader", "parent": "segment-0", "minMember": 1},
            {"name": "workers", "parent": "segment-0", "minMember": 3},
        ],
    }


def test_leader_excluded_gives_the_leader_a_leaf_and_flat_worker_segments() -> None:
    spec = _kai(_lws(7, subGroupPolicy={"subGroupSize": 3, "subGroupPolicyType": "LeaderExcluded"}))
    assert spec == {
        "minMember": 7,
        "subGroups": [
            {"name": "leader", "minMember": 1},
            {"name": "segment-0", "minMember": 3},
            {"name": "segment-1", "minMember": 3},
        ],
    }


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ({"subGroupPolicy": {"subGroupSize": 1}}, "segment size 1 must be greater than 1"),
        ({"subGroupPolicy": {"subGroupSize": 6}}, "segment size 6 is greater than the group size 5"),
        (
            {"subGroupPolicy": {"subGroupSize": 3, "subGroupPolicyType": "LeaderExcluded"}},
            "LeaderExcluded needs size - 1 (4) to be a multiple of the segment size 3",
        ),
    ],
)
def test_segments_kai_refuses_are_refused_with_the_reason(template: dict[str, Any], message: str) -> None:
    with pytest.raises(GangError, match="layout") as raised:
        plan(workload("leaderworkerset", _lws(5, **template)).resolve())
    assert message in str(raised.value)


def test_pods_join_their_segment_by_worker_index() -> None:
    value = _lws(4, subGroupPolicy={"subGroupSize": 2})  # 3 workers, not a multiple of 2: leader + worker 1 first
    listed = pods("leaderworkerset")
    gang_plan = plan(workload("leaderworkerset", value).resolve(), listed)
    assert not gang_plan.unplaced
    placed = {
        (
            pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"],
            pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/worker-index"],
        ): joined_pod(gang_plan, pod, "kai")["metadata"]["labels"][SUBGROUP_LABEL]
        for pod in listed
    }
    assert placed == {
        (group, index): leaf
        for group in ("0", "1")
        for index, leaf in (("0", "leader"), ("1", "workers"), ("2", "segment-1"), ("3", "segment-1"))
    }


def test_leader_ready_segments_wait_for_the_leader_alone_until_it_is_scheduled() -> None:
    value = _lws(5, subGroupPolicy={"subGroupSize": 2})
    value["spec"]["startupPolicy"] = "LeaderReady"
    gang_plan = plan(workload("leaderworkerset", value).resolve())
    first = gang_plan.gangs[0]
    assert first.min_member == 1
    assert {group.name: group.deferred is not None for group in first.sub_groups} == {
        "segment-0": False,
        "leader": False,
        "workers": True,
        "segment-1": True,
    }
    assert export(gang_plan, "kai")[0]["spec"] == {
        "minMember": 1,
        "subGroups": [
            {"name": "segment-0", "minSubGroup": 1},
            {"name": "leader", "parent": "segment-0", "minMember": 1},
        ],
    }


def _pytorchjob(workers: int, size: str, **annotations: str) -> dict[str, Any]:
    value = obj("pytorchjob")
    worker = value["spec"]["pytorchReplicaSpecs"]["Worker"]
    worker["replicas"] = workers
    worker["template"].setdefault("metadata", {})["annotations"] = {"kai.scheduler/segment-size": size, **annotations}
    return value


def test_pytorchjob_segments_carry_kais_segment_topology_annotations() -> None:
    value = _pytorchjob(
        5,
        "2",
        **{
            "kai.scheduler/topology": "gb200",
            "kai.scheduler/segment-topology-required-placement": "nvidia.com/gpu.clique",
        },
    )
    value["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 4}}  # master + 3 workers: 2 segments whole
    spec = _kai(value, "pytorchjob")
    topology = {"topology": "gb200", "requiredTopologyLevel": "nvidia.com/gpu.clique"}
    assert spec == {
        "minMember": 4,
        "subGroups": [
            {"name": "master", "minMember": 1},
            {"name": "worker", "minSubGroup": 3},
            {"name": "worker-0", "parent": "worker", "minMember": 2, "topologyConstraint": topology},
            {"name": "worker-1", "parent": "worker", "minMember": 2, "topologyConstraint": topology},
            {"name": "worker-2", "parent": "worker", "minMember": 0, "topologyConstraint": topology},
        ],
    }


def test_a_segment_size_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(GangError, match="layout"):
        plan(workload("pytorchjob", _pytorchjob(4, "two")).resolve())


# --- the layout itself: checked where it is written -----------------------------------------------------------------


def _jobset_definition(annotation: str) -> Karta:
    resolved = builtin_registry().for_object(obj("jobset"))
    assert resolved is not None
    document: dict[str, Any] = yaml.safe_load(dump_yaml(resolved.karta))
    document["metadata"]["annotations"]["workloadmap.io/gang"] = annotation
    return karta_from_dict(document)


def _jobset_with(annotation: str) -> Workload:
    return Workload(_jobset_definition(annotation), obj("jobset"))


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("'{}'", "expected null or a non-empty list of sub-groups"),
        ("'[{name: \"a\", colour: 1}]'", "unknown key 'colour'"),
        ("'[{name: \"A b\"}]'", "expected a sub-group name (a DNS label)"),
        (
            '\'[{name: "a", parent: "b", component: "replicatedjob", instance: "driver", count: 1}]\'',
            "'b' is not another sub-group of the layout",
        ),
        ("'[{name: \"a\"}]'", "leaf a needs a component and a count"),
        ('\'[{name: "a", component: "ghost", count: 1}]\'', "'ghost' is not a component"),
        ('\'[{name: "a", component: "replicatedjob", count: 2, segments: 0}]\'', "at least 1 pod per segment"),
    ],
)
def test_a_malformed_layout_is_refused_naming_its_field(layout: str, message: str) -> None:
    with pytest.raises(GangError) as raised:
        plan(_jobset_with(f"layout: {layout}").resolve())
    assert "workloadmap.io/gang" in str(raised.value) and message in str(raised.value)


def test_a_null_layout_keeps_the_sub_groups_and_layout_index_needs_a_layout() -> None:
    unchanged = plan(_jobset_with("layout: 'null'\nsubGroups: {replicatedjob: {perInstance: true}}").resolve())
    assert [group.name for group in unchanged.gangs[0].sub_groups] == ["driver", "workers"]
    findings = validate(_jobset_definition("layoutIndex: .metadata.name"))
    assert [f.message for f in findings if "layoutIndex: needs layout" in f.message]


# --- Grove: scaling groups nested, scaled PodGangs as gangs of their own (layout's each, gang, layoutGang) -----------


def _grove(edit: Any = None) -> tuple[Workload, list[dict[str, Any]]]:
    value = yaml.safe_load((CATALOG / "grove-io-podcliqueset-v1alpha1" / "workload.yaml").read_text())
    if edit is not None:
        edit(value)
    resolved = builtin_registry().for_object(value)
    assert resolved is not None
    listed = yaml.safe_load((CATALOG / "grove-io-podcliqueset-v1alpha1" / "pods.yaml").read_text())["items"]
    return Workload(resolved.karta, value), listed


def test_grove_scaled_podgangs_are_kai_podgroups_of_their_own_and_pods_join_them() -> None:
    grove, listed = _grove()
    gang_plan = plan(grove.resolve(), listed)
    manifests = export(gang_plan, "kai")
    assert [(m["metadata"]["name"], m["spec"].get("minSubGroup")) for m in manifests] == [
        ("disagg-0", 3),
        ("disagg-0-prefill-0", 1),
    ]
    joined = {
        pod["metadata"]["name"]: joined_pod(gang_plan, pod, "kai")["metadata"]["annotations"]["pod-group-name"]
        for pod in listed
    }
    assert joined == {
        name: ("disagg-0-prefill-0" if name.startswith("disagg-0-prefill-1-") else "disagg-0") for name in joined
    }


def test_a_scaling_group_with_every_replica_required_has_no_scaled_gang() -> None:
    def all_required(value: dict[str, Any]) -> None:
        value["spec"]["template"]["podCliqueScalingGroups"][0]["minAvailable"] = 2

    grove, _ = _grove(all_required)
    (gang,) = plan(grove.resolve()).gangs
    assert [group.name for group in gang.sub_groups if group.parent is None] == [
        "frontend",
        "decode",
        "prefill-0",
        "prefill-1",
    ]
    assert gang.min_member == 1 + 1 + 2 * 2


def test_a_pod_of_a_podgang_the_spec_does_not_have_is_unplaced_with_the_reason() -> None:
    grove, listed = _grove()
    stray = copy.deepcopy(listed[-1])
    stray["metadata"]["labels"]["grove.io/podgang"] = "disagg-0-prefill-7"
    gang_plan = plan(grove.resolve(), [stray])
    (unplaced,) = gang_plan.unplaced
    assert unplaced.error is not None and "its gang prefill-7 is not in the spec" in unplaced.error
    assert [gang.name for gang in gang_plan.gangs] == ["disagg-0", "disagg-0-prefill-0"]


# --- LLMInferenceService: a gang per LeaderWorkerSet group, decode and prefill (layout gangs without a base gang) ---


def _llmisvc(version: str, edit: Any = None) -> tuple[Workload, list[dict[str, Any]]]:
    here = CATALOG / "serving-kserve-io-llminferenceservice-v1alpha1"
    value = yaml.safe_load((here / "workload.yaml").read_text())
    value["apiVersion"] = f"serving.kserve.io/{version}"
    if edit is not None:
        edit(value)
    resolved = builtin_registry().for_object(value)
    assert resolved is not None and resolved.karta.name.endswith(version)
    return Workload(resolved.karta, value), yaml.safe_load((here / "pods.yaml").read_text())["items"]


@pytest.mark.parametrize("version", ["v1alpha1", "v1alpha2"])
def test_a_multi_node_llminferenceservice_is_a_gang_per_group_of_leader_and_workers(version: str) -> None:
    service, listed = _llmisvc(version)  # parallelism data 16 / dataLocal 8: groups of 2 pods
    gang_plan = plan(service.resolve(), listed)
    (gang,) = gang_plan.gangs
    assert gang.name == "deepseek-mn-0"
    assert [(group.name, group.min_member, group.pods) for group in gang.sub_groups] == [
        ("leader", 1, ("deepseek-mn-kserve-mn-0",)),
        ("workers", 1, ("deepseek-mn-kserve-mn-0-1",)),
    ]
    assert not gang_plan.unplaced
    assert export(gang_plan, "kai")[0]["spec"] == {
        "minSubGroup": 2,
        "subGroups": [{"name": "leader", "minMember": 1}, {"name": "workers", "minMember": 1}],
    }
    # from the spec alone the workers wait for the leader: the group is admitted leader first, never deadlocked
    offline = plan(service.resolve()).gangs[0]
    assert offline.min_member == 1
    assert [(group.name, group.deferred is not None) for group in offline.sub_groups] == [
        ("leader", False),
        ("workers", True),
    ]


def test_decode_and_prefill_groups_are_gangs_of_their_own() -> None:
    def disaggregated(value: dict[str, Any]) -> None:
        spec = value["spec"]
        spec["replicas"] = 2
        spec["prefill"] = {
            "replicas": 1,
            "parallelism": {"pipeline": 3},
            "template": copy.deepcopy(spec["template"]),
            "worker": copy.deepcopy(spec["worker"]),
        }

    service, listed = _llmisvc("v1alpha2", disaggregated)
    prefill_worker = copy.deepcopy(listed[-1])
    labels = prefill_worker["metadata"]["labels"]
    labels["app.kubernetes.io/component"] = "llminferenceservice-workload-worker-prefill"
    prefill_worker["metadata"]["name"] = "deepseek-mn-kserve-mn-prefill-0-1"
    gang_plan = plan(service.resolve(), [*listed, prefill_worker])
    # group 1 has no pods yet: its workers wait for its leader (KServe's LWS may start them only once it is ready)
    assert [(gang.name, gang.min_member) for gang in gang_plan.gangs] == [
        ("deepseek-mn-0", 2),
        ("deepseek-mn-1", 1),
        ("deepseek-mn-prefill-0", 3),
    ]
    assert [group.deferred is not None for group in gang_plan.gangs[1].sub_groups] == [False, True]
    prefill = gang_plan.gangs[-1]
    assert [(group.name, group.min_member, group.pods) for group in prefill.sub_groups] == [
        ("leader", 1, ()),
        ("workers", 2, ("deepseek-mn-kserve-mn-prefill-0-1",)),
    ]
    assert not gang_plan.unplaced


def test_a_single_node_llminferenceservice_needs_no_gang() -> None:
    def single_node(value: dict[str, Any]) -> None:
        del value["spec"]["worker"]

    service, _ = _llmisvc("v1alpha2", single_node)
    gang_plan = plan(service.resolve())
    assert not gang_plan.gangs
    assert gang_plan.no_gang is not None and "single-node" in gang_plan.no_gang


def test_a_pod_of_a_group_the_spec_does_not_have_is_unplaced() -> None:
    service, listed = _llmisvc("v1alpha1")
    stray = copy.deepcopy(listed[-1])
    stray["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"] = "5"
    (unplaced,) = plan(service.resolve(), [stray]).unplaced
    assert unplaced.error is not None and "its gang 5 is not in the spec" in unplaced.error


def test_without_a_leader_template_the_leader_is_the_worker_of_index_0() -> None:
    def no_template(value: dict[str, Any]) -> None:
        del value["spec"]["template"]

    service, listed = _llmisvc("v1alpha2", no_template)
    leader = copy.deepcopy(listed[0])  # LWS runs the worker template for the leader too
    leader["metadata"]["labels"]["app.kubernetes.io/component"] = "llminferenceservice-workload-worker"
    leader["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/worker-index"] = "0"
    gang_plan = plan(service.resolve(), [leader, listed[1]])
    (gang,) = gang_plan.gangs
    assert [(group.name, group.component, group.pods) for group in gang.sub_groups] == [
        ("leader", "workload-worker", (leader["metadata"]["name"],)),
        ("workers", "workload-worker", (listed[1]["metadata"]["name"],)),
    ]
    assert gang.min_member == 2
