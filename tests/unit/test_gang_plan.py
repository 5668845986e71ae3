"""The scheduler-neutral gang plan: gangs from the spec, per-replica and per-instance keying, min members and
resources, KAI-native sub-groups, and each pod's gang."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures.gang import definition_file, karta_from_text, obj, pods, workload
from workload_map.catalog import builtin_registry
from workload_map.gang import (
    GangError,
    MissingScaleError,
    NoGangInstructions,
    is_dns1123_label,
    plan,
    subtree_scale,
)
from workload_map.gang.keys import canonical_path
from workload_map.resolve import Workload

CATALOG_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"


def catalog_workload(slug: str) -> tuple[Workload, list[dict[str, Any]]]:
    """A catalog fixture (another area's, read only) and its pods."""
    value = yaml.safe_load((CATALOG_FIXTURES / slug / "workload.yaml").read_text())
    resolved = builtin_registry().for_object(value)
    assert resolved is not None
    listed = yaml.safe_load((CATALOG_FIXTURES / slug / "pods.yaml").read_text())
    return Workload(resolved.karta, value), listed["items"]


def summary_of(gang_plan: Any) -> list[tuple[str, int]]:
    return [(gang.name, gang.min_member) for gang in gang_plan.gangs]


# --- acceptance: the three shapes, offline -------------------------------------------------------------------


def test_pytorchjob_with_one_master_and_four_workers_is_one_gang_of_five() -> None:
    gang_plan = plan(workload("pytorchjob").resolve())
    assert summary_of(gang_plan) == [("mnist-ddp", 5)]
    (gang,) = gang_plan.gangs
    assert gang.members == ("master", "worker")
    assert [(group.name, group.min_member) for group in gang.sub_groups] == [("master", 1), ("worker", 4)]
    assert [(role.name, role.min_count, role.count) for role in gang.roles] == [("master", 1, 1), ("worker", 4, 4)]
    assert (gang.instance, gang.replica, gang.keys) == (None, None, None)


def test_jobset_is_one_gang_a_sub_group_per_replicated_job_and_a_leaf_per_job() -> None:
    gang_plan = plan(workload("jobset").resolve())
    assert summary_of(gang_plan) == [("train", 9)]
    (gang,) = gang_plan.gangs
    assert gang.min_sub_group == 2  # AnyOrder: every replicatedJob
    assert [(g.name, g.parent, g.min_member, g.min_sub_group) for g in gang.sub_groups] == [
        ("driver", None, None, 1),
        ("driver-replica-0", "driver", 1, None),
        ("workers", None, None, 2),
        ("workers-replica-0", "workers", 4, None),
        ("workers-replica-1", "workers", 4, None),
    ]


def test_lws_has_one_gang_per_group_with_a_leader_and_its_workers() -> None:
    gang_plan = plan(workload("leaderworkerset").resolve())
    assert summary_of(gang_plan) == [("llm-0", 4), ("llm-1", 4)]
    assert [gang.replica for gang in gang_plan.gangs] == ["0", "1"]
    assert [(role.component, role.min_count) for role in gang_plan.gangs[0].roles] == [("leader", 1), ("worker", 3)]


def test_lws_gangs_count_one_replica_of_the_group_where_upstreams_formula_counts_all() -> None:
    lws = workload("leaderworkerset")
    # upstream's CalculateSubtreeScale on the member multiplies by the group's replicas: 2 x (1 + 3)
    assert subtree_scale(lws.resolve(), "group") == 8
    assert {gang.min_member for gang in plan(lws.resolve()).gangs} == {4}


def test_more_lws_replicas_mean_more_gangs_of_the_same_size() -> None:
    value = obj("leaderworkerset")
    value["spec"]["replicas"] = 3
    value["spec"]["leaderWorkerTemplate"]["size"] = 2
    gang_plan = plan(workload("leaderworkerset", value).resolve())
    assert summary_of(gang_plan) == [("llm-0", 2), ("llm-1", 2), ("llm-2", 2)]


def test_an_upstream_style_lws_definition_comes_out_with_totals_per_group() -> None:
    lws = Workload(definition_file("upstream-lws.karta.yaml"), obj("leaderworkerset"))
    gang_plan = plan(lws.resolve())
    # group replicas read as the size (4), children as totals over all groups (2 leaders + 6 workers)
    assert summary_of(gang_plan) == [("llm-0", 8), ("llm-1", 8), ("llm-2", 8), ("llm-3", 8)]
    assert subtree_scale(lws.resolve(), "group") == 32  # what upstream's KAI path would ask per PodGroup


def test_members_below_the_replicated_component_count_one_replica_of_it() -> None:
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "upstream-lws.karta.yaml").read_text()
    text = text.replace("name: upstream-style-lws", "name: per-role-members")
    text = text.replace("replicasPath: .spec.leaderWorkerTemplate.size", "replicasPath: .spec.replicas")
    text = text.replace("replicasPath: .spec.replicas // 1\n", 'replicasPath: "1"\n')
    text = text.replace(
        "replicasPath: (.spec.replicas // 1) * ((.spec.leaderWorkerTemplate.size // 1) - 1)",
        "replicasPath: (.spec.leaderWorkerTemplate.size // 1) - 1",
    )
    keys = """          groupByKeyPaths:
          - .metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]
"""
    text = text.replace(
        """        - componentName: group
          groupByKeyPaths:
          - .metadata.labels["leaderworkerset.sigs.k8s.io/name"]
          - .metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]
""",
        "        - componentName: leader\n" + keys + "        - componentName: worker\n" + keys,
    )
    gang_plan = plan(Workload(karta_from_text(text), obj("leaderworkerset")).resolve(), pods("leaderworkerset"))
    assert summary_of(gang_plan) == [("llm-0", 4), ("llm-1", 4)]
    assert [gang.members for gang in gang_plan.gangs] == [("leader", "worker")] * 2
    assert [len(gang.pods) for gang in gang_plan.gangs] == [4, 4]


# --- min members and resources --------------------------------------------------------------------------------


def test_min_resources_are_min_member_times_each_roles_requests() -> None:
    (gang,) = plan(workload("pytorchjob").resolve()).gangs
    master, worker = gang.roles
    assert master.requests is not None and worker.requests is not None
    assert {name: str(value) for name, value in master.requests.items()} == {
        "cpu": "4",
        "memory": str(16 * 2**30),
        "nvidia.com/gpu": "1",
    }
    assert gang.to_dict()["minResources"] == {"cpu": "36", "memory": "144Gi", "nvidia.com/gpu": "9"}


def test_elastic_workers_lower_the_min_member_but_not_the_count() -> None:
    value = obj("pytorchjob")
    value["spec"]["elasticPolicy"] = {"minReplicas": 2, "maxReplicas": 8}
    (gang,) = plan(workload("pytorchjob", value).resolve()).gangs
    assert (gang.min_member, gang.count) == (3, 5)
    worker = gang.roles[1]
    assert (worker.min_count, worker.count) == (2, 4)
    assert gang.to_dict()["minResources"] == {"cpu": "20", "memory": "80Gi", "nvidia.com/gpu": "5"}


def test_a_job_without_master_gangs_its_workers_only() -> None:
    value = obj("pytorchjob")
    del value["spec"]["pytorchReplicaSpecs"]["Master"]
    (gang,) = plan(workload("pytorchjob", value).resolve()).gangs
    assert gang.min_member == 4
    assert [role.component for role in gang.roles] == ["worker"]


def test_a_jobset_without_completions_uses_its_parallelism() -> None:
    value = obj("jobset")
    del value["spec"]["replicatedJobs"][1]["template"]["spec"]["completions"]
    (gang,) = plan(workload("jobset", value).resolve()).gangs
    assert [(g.name, g.min_member) for g in gang.sub_groups if g.replica is not None] == [
        ("driver-replica-0", 1),
        ("workers-replica-0", 4),
        ("workers-replica-1", 4),
    ]


# --- catalog definitions --------------------------------------------------------------------------------------


def test_grove_gangs_each_podcliqueset_replica() -> None:
    grove, grove_pods = catalog_workload("grove-io-podcliqueset-v1alpha1")
    gang_plan = plan(grove.resolve())
    # the base PodGang of the replica, and the prefill scaling group's replica above its minAvailable (1 of 2)
    assert [(gang.name, gang.replica) for gang in gang_plan.gangs] == [
        ("disagg-0", "0"),
        ("disagg-0-prefill-0", "0-prefill-0"),
    ]
    # base: frontend 1 + decode minAvailable 1 + one prefill replica (pleader 1 + pworker 1); scaled: one replica
    assert [gang.min_member for gang in gang_plan.gangs] == [4, 2]
    value = copy.deepcopy(grove.to_object())
    value["spec"]["replicas"] = 2
    assert summary_of(plan(Workload(grove.definition, value).resolve())) == [
        ("disagg-0", 4),
        ("disagg-0-prefill-0", 2),
        ("disagg-1", 4),
        ("disagg-1-prefill-0", 2),
    ]
    placed = plan(grove.resolve(), grove_pods)
    assert not placed.unplaced
    assert {pod.gang for pod in placed.pods} == {"disagg-0", "disagg-0-prefill-0"}


def test_dynamo_gangs_the_whole_graph_with_every_service_minimum() -> None:
    dynamo, _ = catalog_workload("nvidia-com-dynamographdeployment-v1beta1")
    (gang,) = plan(dynamo.resolve()).gangs
    assert gang.instance is None
    assert gang.min_member == sum(role.min_count for role in gang.roles) == 3
    assert all(is_dns1123_label(role.name) for role in gang.roles)


def test_sandbox_agent_and_companion_share_one_gang() -> None:
    sandbox, sandbox_pods = catalog_workload("agents-x-k8s-io-sandbox-v1beta1")
    gang_plan = plan(sandbox.resolve(), sandbox_pods)
    (gang,) = gang_plan.gangs
    assert gang.members == ("agent", "companion")
    assert gang.min_member == 1
    assert all(pod.gang == gang.name for pod in gang_plan.pods)


def test_a_definition_without_gang_instructions_is_refused_by_name() -> None:
    milvus = yaml.safe_load((CATALOG_FIXTURES / "milvus-io-milvus-v1beta1" / "workload.yaml").read_text())
    resolved = builtin_registry().for_object(milvus)
    assert resolved is not None
    with pytest.raises(NoGangInstructions, match=r"definition .milvus-io-milvus-v1beta1. has no .*gangScheduling"):
        plan(Workload(resolved.karta, milvus).resolve())


# --- with pods ---------------------------------------------------------------------------------------------------


def test_lws_pods_join_the_gang_of_their_group() -> None:
    gang_plan = plan(workload("leaderworkerset").resolve(), pods("leaderworkerset"))
    assert [(gang.name, gang.pods) for gang in gang_plan.gangs] == [
        ("llm-0", ("llm-0", "llm-0-1", "llm-0-2", "llm-0-3")),
        ("llm-1", ("llm-1", "llm-1-1", "llm-1-2", "llm-1-3")),
    ]
    leader = gang_plan.pods[0]
    assert (leader.name, leader.component, leader.gang, leader.sub_group, leader.keys) == (
        "llm-0",
        "leader",
        "llm-0",
        "leader",
        ("0",),
    )
    assert {pod.sub_group for pod in gang_plan.pods if pod.component == "worker"} == {"workers"}


def test_jobset_pods_join_the_gang_of_their_replicated_job() -> None:
    gang_plan = plan(workload("jobset").resolve(), pods("jobset"))
    assert [(gang.name, len(gang.pods)) for gang in gang_plan.gangs] == [("train", 9)]
    leaves = {group.name: len(group.pods) for group in gang_plan.gangs[0].sub_groups if group.replica is not None}
    assert leaves == {"driver-replica-0": 1, "workers-replica-0": 4, "workers-replica-1": 4}
    assert {pod.sub_groups for pod in gang_plan.pods if pod.instance == "workers"} == {
        ("workers", "workers-replica-0"),
        ("workers", "workers-replica-1"),
    }


def test_pytorchjob_pods_all_join_the_one_gang() -> None:
    gang_plan = plan(workload("pytorchjob").resolve(), pods("pytorchjob"))
    assert [pod.component for pod in gang_plan.pods] == ["master", "worker", "worker", "worker", "worker"]
    assert {pod.gang for pod in gang_plan.pods} == {"mnist-ddp"}
    assert [pod.sub_group for pod in gang_plan.pods] == ["master", "worker", "worker", "worker", "worker"]


def test_a_pod_of_a_group_the_spec_no_longer_has_gets_its_own_gang() -> None:
    extra = copy.deepcopy(pods("leaderworkerset")[0])
    extra["metadata"]["name"] = "llm-2"
    extra["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"] = "2"
    gang_plan = plan(workload("leaderworkerset").resolve(), [*pods("leaderworkerset"), extra])
    assert summary_of(gang_plan) == [("llm-0", 4), ("llm-1", 4), ("llm-2", 4)]
    assert gang_plan.gang("llm-2").pods == ("llm-2",)


def test_a_pod_without_its_group_key_is_in_no_gang_and_says_why() -> None:
    broken = copy.deepcopy(pods("leaderworkerset")[1])
    del broken["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"]
    gang_plan = plan(workload("leaderworkerset").resolve(), [broken])
    (unplaced,) = gang_plan.unplaced
    assert unplaced.gang is None
    assert unplaced.error is not None and "group-index" in unplaced.error and "query result is empty" in unplaced.error
    assert [gang.pods for gang in gang_plan.gangs] == [(), ()]


def test_keys_that_split_one_gang_further_get_their_values_in_the_names() -> None:
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "upstream-lws.karta.yaml").read_text()
    definition = karta_from_text(
        text.replace("name: upstream-style-lws", "name: team-split").replace(
            """          - .metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]""",
            """          - .metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]
          - .metadata.labels.team""",
        )
    )
    value = obj("leaderworkerset")
    value["spec"]["leaderWorkerTemplate"]["size"] = 1
    members = []
    for index, team in enumerate(("blue", "green")):
        member = copy.deepcopy(pods("leaderworkerset")[0])
        member["metadata"]["name"] = f"p{index}"
        member["metadata"]["labels"]["team"] = team
        members.append(member)
    gang_plan = plan(Workload(definition, value).resolve(), members)
    assert [gang.name for gang in gang_plan.gangs] == ["llm-0-blue", "llm-0-green"]
    assert [pod.gang for pod in gang_plan.pods] == ["llm-0-blue", "llm-0-green"]


# --- the KAI-native podGroup format -------------------------------------------------------------------------------


def test_native_pod_group_has_sub_groups_with_their_subtree_minimums() -> None:
    gang_plan = plan(workload("inferencegraph").resolve())
    assert gang_plan.format == "podGroup"
    (gang,) = gang_plan.gangs
    assert gang.name == "chat"
    assert [(group.name, group.min_member, group.parent) for group in gang.sub_groups] == [
        ("prefill", 2, None),
        ("decode", 4, None),
    ]
    assert gang.min_sub_group == 2
    assert gang.min_member == 6
    assert gang.topology is not None and gang.topology.required_level == "topology.kubernetes.io/zone"
    prefill = gang.sub_groups[0].topology
    assert prefill is not None and (prefill.topology, prefill.preferred_level) == (
        "gpu-cluster",
        "nvidia.com/gpu-clique",
    )


def test_native_pods_are_listed_in_the_sub_group_their_selector_matches() -> None:
    def member(name: str, role: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": "serving", "labels": {"serving.example.com/role": role}}}

    gang_plan = plan(
        workload("inferencegraph").resolve(), [member("r", "router"), member("p", "prefill"), member("d", "decode")]
    )
    (gang,) = gang_plan.gangs
    assert [(group.name, group.pods) for group in gang.sub_groups] == [("prefill", ("p",)), ("decode", ("d",))]
    assert [(pod.name, pod.gang, pod.sub_group) for pod in gang_plan.pods] == [
        ("r", "chat", None),
        ("p", "chat", "prefill"),
        ("d", "chat", "decode"),
    ]


FIXTURE_DEFINITION = Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "inferencegraph.karta.yaml"
DEFAULT_TOPOLOGY = """        topology:
          topologyName: gpu-cluster
          requiredTopologyLevel: topology.kubernetes.io/zone
          preferredTopologyLevel: ""
"""


def native_variant(
    sub_groups: str, *, topology: str | None = None, nested: bool = False, validate: bool = True
) -> Workload:
    """The inferencegraph definition with other sub-groups (and topology); `nested` puts prefill and decode under
    a logical `engines` component."""
    head, _, _ = FIXTURE_DEFINITION.read_text().partition("        subGroups:")
    if topology is not None:
        head = head.replace(DEFAULT_TOPOLOGY, topology)
    if nested:
        head = head.replace(
            "    - name: prefill\n      ownerRef: graph",
            "    - name: engines\n      ownerRef: graph\n    - name: prefill\n      ownerRef: engines",
        ).replace("    - name: decode\n      ownerRef: graph", "    - name: decode\n      ownerRef: engines")
    return Workload(karta_from_text(head + sub_groups + "\n"), obj("inferencegraph"), validate=validate)


def test_nested_sub_groups_make_the_enclosing_one_a_parent_that_requires_its_children() -> None:
    nested = native_variant(
        "        subGroups:\n        - componentName: engines\n        - componentName: prefill\n"
        "        - componentName: decode",
        nested=True,
    )
    (gang,) = plan(nested.resolve()).gangs
    assert [(group.name, group.min_member, group.min_sub_group, group.parent) for group in gang.sub_groups] == [
        ("engines", None, 2, None),
        ("prefill", 2, None, "engines"),
        ("decode", 4, None, "engines"),
    ]
    assert gang.min_sub_group == 1
    assert gang.min_member == 6


def test_a_parent_with_pods_no_nested_sub_group_covers_is_an_error() -> None:
    nested = native_variant(
        "        subGroups:\n        - componentName: engines\n        - componentName: prefill", nested=True
    )
    with pytest.raises(GangError, match="sub-group engines holds pods of decode that no nested sub-group covers"):
        plan(nested.resolve())


def test_a_sub_group_whose_pods_cannot_be_counted_is_an_error() -> None:
    value = obj("inferencegraph")
    value["spec"]["decode"]["replicas"] = 0
    with pytest.raises(MissingScaleError, match="component decode must expose a replica scale definition"):
        plan(workload("inferencegraph", value).resolve())


def test_an_unknown_sub_group_component_is_an_error() -> None:
    with pytest.raises(GangError, match="subgroup component ghost not found"):
        plan(native_variant("        subGroups:\n        - componentName: ghost", validate=False).resolve())


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        (
            '        topology: {topologyName: "", requiredTopologyLevel: zone, preferredTopologyLevel: ""}\n',
            "topology constraint must include topology name",
        ),
        (
            '        topology: {topologyName: t, requiredTopologyLevel: "", preferredTopologyLevel: ""}\n',
            "topology constraint must include preferred or required topology level",
        ),
    ],
)
def test_a_topology_without_name_or_level_is_an_error(topology: str, message: str) -> None:
    with pytest.raises(GangError, match=message):
        plan(
            native_variant(
                "        subGroups:\n        - componentName: decode", topology=topology, validate=False
            ).resolve()
        )


def test_native_without_sub_groups_gangs_the_whole_subtree() -> None:
    (gang,) = plan(native_variant("        subGroups: []").resolve()).gangs
    assert gang.sub_groups == ()
    assert gang.min_sub_group is None
    assert gang.min_member == 1 + 2 + 4


# --- names and paths ------------------------------------------------------------------------------------------------


def test_sub_group_names_are_lowercase_dns_labels_even_from_odd_instance_ids() -> None:
    value = obj("jobset")
    value["spec"]["replicatedJobs"][1]["name"] = "Workers_GPU"
    gang_plan = plan(workload("jobset", value).resolve())
    names = [group.name for group in gang_plan.gangs[0].sub_groups if group.parent is None]
    assert names == ["driver", "workers-gpu"]
    assert "sub-group of component replicatedjob instance Workers_GPU is named workers-gpu" in " ".join(gang_plan.notes)


def test_long_gang_names_are_cut_to_63_characters_with_a_hash() -> None:
    value = obj("leaderworkerset")
    value["metadata"]["name"] = "a" * 62
    names = [gang.name for gang in plan(workload("leaderworkerset", value).resolve()).gangs]
    assert all(len(name) <= 63 and is_dns1123_label(name) for name in names)
    assert len(set(names)) == 2


def test_several_pod_group_definitions_put_their_names_in_the_gang_names() -> None:
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "upstream-lws.karta.yaml").read_text()
    text = text.replace("name: upstream-style-lws", "name: split-roles")
    text = text.replace(
        """      podGroups:
      - name: group
        members:
        - componentName: group""",
        """      podGroups:
      - name: leaders
        members:
        - componentName: leader
      - name: workers
        members:
        - componentName: worker""",
    )
    text = text.replace(
        """          groupByKeyPaths:
          - .metadata.labels["leaderworkerset.sigs.k8s.io/name"]
          - .metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]
""",
        "",
    )
    gang_plan = plan(Workload(karta_from_text(text), obj("leaderworkerset")).resolve())
    assert [gang.name for gang in gang_plan.gangs] == ["llm-leaders", "llm-workers"]


def test_jq_paths_compare_in_one_spelling() -> None:
    assert canonical_path('.metadata.labels["a/b"]') == canonical_path('.metadata.labels."a/b"')
    assert canonical_path(".metadata.labels.app") == canonical_path('.metadata.labels["app"]')
    assert canonical_path(".a | .b") == canonical_path(".a|.b")
    assert canonical_path(".a.b") != canonical_path(".a.c")


def test_the_plan_serialises_with_its_schema_version() -> None:
    document = plan(workload("leaderworkerset").resolve(), pods("leaderworkerset")).to_dict()
    assert document["schemaVersion"] == "workloadmap.io/gang/v2"
    assert document["workload"]["kind"] == "LeaderWorkerSet"
    assert document["gangs"][0]["minMember"] == 4
    assert document["gangs"][0]["minResources"] == {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "32"}
    assert document["pods"][0]["gang"] == "llm-0"
    assert yaml.safe_load(yaml.safe_dump(document)) == document
