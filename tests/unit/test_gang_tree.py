"""Gang plans as trees (workload_map.gang.tree): minimums from each framework's start-up order, deferred members,
refused plans, unplaced pods, the `workloadmap.io/gang` annotation and `wmap gang -o text`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import Result, invoke
from tests.fixtures.gang import obj, pods, workload
from workload_map.catalog import builtin_registry
from workload_map.gang import GangError, UnsatisfiableGang, export, joined_pod, min_member_of, plan
from workload_map.model import dump_yaml, karta_from_dict
from workload_map.resolve import Workload
from workload_map.validation import validate

CATALOG = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"


def catalog(slug: str, edit: Any = None) -> tuple[Workload, list[dict[str, Any]]]:
    value = yaml.safe_load((CATALOG / slug / "workload.yaml").read_text())
    if edit is not None:
        edit(value)
    resolved = builtin_registry().for_object(value)
    assert resolved is not None
    listed = yaml.safe_load((CATALOG / slug / "pods.yaml").read_text())["items"]
    return Workload(resolved.karta, value), listed


def wmap(*args: str, home: Path) -> Result:
    return invoke(list(args), home=home)


def kai(gang_plan: Any) -> dict[str, Any]:
    (pod_group,) = export(gang_plan, "kai")
    spec: dict[str, Any] = pod_group["spec"]
    return spec


# --- JobSet: start-up order, dependsOn, KAI's override ------------------------------------------------------------


def test_jobset_anyorder_requires_every_replicated_job_and_kai_gets_the_tree() -> None:
    spec = kai(plan(workload("jobset").resolve()))
    assert spec == {
        "minSubGroup": 2,
        "subGroups": [
            {"name": "driver", "minSubGroup": 1},
            {"name": "driver-replica-0", "parent": "driver", "minMember": 1},
            {"name": "workers", "minSubGroup": 2},
            {"name": "workers-replica-0", "parent": "workers", "minMember": 4},
            {"name": "workers-replica-1", "parent": "workers", "minMember": 4},
        ],
    }


def test_jobset_inorder_requires_one_replicated_job_at_a_time() -> None:
    value = obj("jobset")
    value["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    gang_plan = plan(workload("jobset", value).resolve())
    assert kai(gang_plan)["minSubGroup"] == 1
    assert gang_plan.gangs[0].min_member == 1  # a flat scheduler can only ask for the smallest replicatedJob


def test_kai_min_member_annotations_on_the_jobset_and_on_a_replicated_job_template() -> None:
    value = obj("jobset")
    value["metadata"]["annotations"] = {"kai.scheduler/batch-min-member": "1"}
    value["spec"]["replicatedJobs"][1]["template"]["metadata"] = {
        "annotations": {"kai.scheduler/batch-min-member": "2"}
    }
    spec = kai(plan(workload("jobset", value).resolve()))
    assert spec["minSubGroup"] == 1
    assert [group.get("minMember") for group in spec["subGroups"] if "parent" in group] == [1, 2, 2]


def test_a_replicated_job_that_depends_on_another_is_deferred_until_its_jobs_exist() -> None:
    value = obj("jobset")
    value["spec"]["replicatedJobs"][1]["dependsOn"] = [{"name": "driver", "status": "Ready"}]
    gang_plan = plan(workload("jobset", value).resolve())
    (gang,) = gang_plan.gangs
    workers = next(group for group in gang.sub_groups if group.name == "workers")
    assert workers.deferred == "the JobSet controller creates its Jobs once driver is Ready (dependsOn)"
    assert (gang.min_sub_group, gang.min_member) == (1, 1)
    assert any("sub-group workers is deferred" in note for note in gang_plan.notes)
    with_pods = plan(workload("jobset", value).resolve(), pods("jobset"))
    assert (with_pods.gangs[0].min_sub_group, with_pods.gangs[0].min_member) == (2, 9)


def test_a_jobset_pod_without_its_job_index_is_unplaced_and_says_why() -> None:
    broken = copy.deepcopy(pods("jobset")[1])
    del broken["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]
    gang_plan = plan(workload("jobset").resolve(), [broken])
    (unplaced,) = gang_plan.unplaced
    assert unplaced.gang is None
    assert unplaced.error is not None and "replica key" in unplaced.error
    assert gang_plan.gangs[0].pods == ()


def test_a_leaf_minimum_above_the_jobs_pods_is_refused() -> None:
    value = obj("jobset")
    value["spec"]["replicatedJobs"][1]["template"]["metadata"] = {
        "annotations": {"kai.scheduler/batch-min-member": "5"}
    }
    with pytest.raises(UnsatisfiableGang, match="sub-group workers-replica-0 requires 5 pods but the spec asks for 4"):
        plan(workload("jobset", value).resolve())


# --- MPIJob: the launcher created after the workers ----------------------------------------------------------------


def test_mpijob_launcher_waiting_for_workers_is_deferred_until_its_pod_exists() -> None:
    mpijob, listed = catalog("kubeflow-org-mpijob-v2beta1")
    spec_only = plan(mpijob.resolve())
    (gang,) = spec_only.gangs
    assert (gang.min_sub_group, gang.min_member) == (None, 2)  # launcher + workers, the launcher subtracted
    launcher = next(group for group in gang.sub_groups if group.name == "launcher")
    assert launcher.deferred is not None and "WaitForWorkersReady" in launcher.deferred
    assert kai(spec_only) == {"minMember": 2, "subGroups": [{"name": "worker", "minMember": 2}]}
    workers_only = [
        pod for pod in listed if pod["metadata"]["labels"].get("training.kubeflow.org/job-role") != "launcher"
    ]
    assert plan(mpijob.resolve(), workers_only).gangs[0].min_member == 2
    assert plan(mpijob.resolve(), listed).gangs[0].min_member == 3


def test_mpijob_min_available_counts_the_launcher_only_once_it_exists() -> None:
    def edit(value: dict[str, Any]) -> None:
        value["spec"].setdefault("runPolicy", {})["schedulingPolicy"] = {"minAvailable": 3}

    mpijob, listed = catalog("kubeflow-org-mpijob-v2beta1", edit)
    assert plan(mpijob.resolve()).gangs[0].min_member == 2
    assert kai(plan(mpijob.resolve()))["minMember"] == 2
    assert plan(mpijob.resolve(), listed).gangs[0].min_member == 3


def test_mpijob_min_available_above_the_workers_alone_is_refused_while_the_launcher_waits() -> None:
    def edit(value: dict[str, Any]) -> None:
        value["spec"].setdefault("runPolicy", {})["schedulingPolicy"] = {"minAvailable": 4}

    mpijob, _ = catalog("kubeflow-org-mpijob-v2beta1", edit)
    with pytest.raises(UnsatisfiableGang, match=r"requires 3 pods, but only 2 can exist before .*launcher"):
        plan(mpijob.resolve())


# --- LeaderWorkerSet: workers after the leader ---------------------------------------------------------------------


def test_lws_is_a_gang_per_group_with_leader_and_workers_sub_groups() -> None:
    gang_plan = plan(workload("leaderworkerset").resolve())
    assert [gang.name for gang in gang_plan.gangs] == ["llm-0", "llm-1"]
    with_leader = plan(workload("leaderworkerset").resolve(), [pods("leaderworkerset")[0]])
    assert [gang.min_member for gang in with_leader.gangs] == [4, 4]  # LeaderCreated: the whole group at once
    first = export(gang_plan, "kai")[0]["spec"]
    assert first == {
        "minMember": 4,
        "subGroups": [{"name": "leader", "minMember": 1}, {"name": "workers", "minMember": 3}],
    }


def test_lws_leader_ready_waits_for_the_leader_alone_until_workers_exist() -> None:
    value = obj("leaderworkerset")
    value["spec"]["startupPolicy"] = "LeaderReady"
    leaders = [
        pod
        for pod in pods("leaderworkerset")
        if pod["metadata"]["labels"].get("leaderworkerset.sigs.k8s.io/worker-index") == "0"
    ]
    assert [gang.min_member for gang in plan(workload("leaderworkerset", value).resolve(), leaders).gangs] == [1, 1]
    everything = plan(workload("leaderworkerset", value).resolve(), pods("leaderworkerset"))
    assert [gang.min_member for gang in everything.gangs] == [4, 4]


def test_an_lws_pod_without_its_group_index_is_unplaced() -> None:
    broken = copy.deepcopy(pods("leaderworkerset")[1])
    del broken["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"]
    gang_plan = plan(workload("leaderworkerset").resolve(), [broken])
    (unplaced,) = gang_plan.unplaced
    assert unplaced.error is not None and "group-index" in unplaced.error
    assert [gang.pods for gang in gang_plan.gangs] == [(), ()]


# --- PyTorchJob and RayCluster --------------------------------------------------------------------------------------


def test_pytorchjob_min_available_is_the_root_minimum_and_the_workers_share() -> None:
    value = obj("pytorchjob")
    value["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 3}}
    spec = kai(plan(workload("pytorchjob", value).resolve()))
    assert spec == {
        "minMember": 3,
        "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 2}],
    }


def test_pytorchjob_elastic_min_replicas_counts_workers_with_the_master_on_top() -> None:
    value = obj("pytorchjob")
    value["spec"]["elasticPolicy"] = {"minReplicas": 2, "maxReplicas": 8}
    gang_plan = plan(workload("pytorchjob", value).resolve())
    assert gang_plan.gangs[0].min_member == 3
    assert [group.min_member for group in gang_plan.gangs[0].sub_groups] == [1, 2]


def test_raycluster_head_and_worker_groups_with_a_suspended_group_not_waited_for() -> None:
    ray, _ = catalog("ray-io-raycluster-v1")
    spec = kai(plan(ray.resolve()))
    assert spec["minMember"] == 3
    assert [group["name"] for group in spec["subGroups"]] == ["headgroup", "gpu-workers", "cpu-workers"]

    def suspend(value: dict[str, Any]) -> None:
        value["spec"]["workerGroupSpecs"][1]["suspend"] = True

    suspended, _ = catalog("ray-io-raycluster-v1", suspend)
    spec = kai(plan(suspended.resolve()))
    assert spec["minMember"] == 2
    # the suspended group stays a sub-group with nothing to wait for (KubeRay creates none of its pods)
    assert [group.get("minMember") for group in spec["subGroups"]] == [1, 1, 0]


# --- the annotation: validated, its jq checked ----------------------------------------------------------------------


def _jobset_definition(annotation: str) -> dict[str, Any]:
    resolved = builtin_registry().for_object(obj("jobset"))
    assert resolved is not None
    document: dict[str, Any] = yaml.safe_load(dump_yaml(resolved.karta))
    document["metadata"]["annotations"]["workloadmap.io/gang"] = annotation
    return document


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        ("subGroups: [1", "not YAML"),
        ("minMembers: '1'", "unknown key 'minMembers'"),
        ("subGroups: {ghost: {}}", "ghost is not a sub-group"),
        ("subGroups: {replicatedjob: {replicas: '1'}}", "replicas and replicaKey go together"),
        ("gangPerReplicaOf: replicatedjob", "has no podSelector.replicaSelector"),
        ("gangKey: .x\ngangPerReplicaOf: replicatedjob", "gangKey and gangPerReplicaOf exclude each other"),
        ("subGroups: {replicatedjob: {after: replicatedjob}}", "after: needs deferred"),
        ("subGroups: {replicatedjob: {deferred: '\"x\"', after: ghost}}", "ghost is not a sub-group"),
    ],
)
def test_a_malformed_annotation_is_a_finding_at_the_annotation(annotation: str, message: str) -> None:
    findings = validate(karta_from_dict(_jobset_definition(annotation)))
    matching = [f for f in findings if message in f.message]
    assert matching, [f.message for f in findings]
    assert all(f.path.startswith('metadata.annotations["workloadmap.io/gang"]') for f in matching)


def test_the_annotations_jq_passes_the_same_safety_check() -> None:
    findings = validate(karta_from_dict(_jobset_definition("minSubGroup: 'del(.a)'")))
    assert [(f.rule, f.path) for f in findings if f.severity == "error"] == [
        ("jq-unsafe", 'metadata.annotations["workloadmap.io/gang"].minSubGroup')
    ]


def test_an_expression_giving_the_wrong_number_of_outputs_names_its_field() -> None:
    definition = karta_from_dict(
        _jobset_definition("subGroups: {replicatedjob: {perInstance: true, minMember: '1, 2, 3'}}")
    )
    with pytest.raises(GangError, match=r"subGroups.replicatedjob.minMember: gave 3 outputs"):
        plan(Workload(definition, obj("jobset"), validate=False).resolve())


# --- wmap gang: the tree on a terminal -----------------------------------------------------------------------------


def test_wmap_gang_text_prints_the_tree(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "jobset.yaml"
    result = wmap("gang", "-f", str(fixture), "-o", "text", home=tmp_path)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["JobSet", "research/train", "(jobset-x-k8s-io-jobset-v1alpha2)"]
    assert lines[1].startswith("gang train   requires 2 of 2 sub-groups · at least 9 pods")
    assert [line.split()[:5] for line in lines[2:]] == [
        ["├──", "driver", "1", "of", "1"],
        ["│", "└──", "driver-replica-0", "1", "of"],
        ["└──", "workers", "2", "of", "2"],
        ["├──", "workers-replica-0", "4", "of", "4"],
        ["└──", "workers-replica-1", "4", "of", "4"],
    ]


def test_wmap_gang_text_counts_one_pod_as_one_pod(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "batch-job-v1" / "workload.yaml"
    result = wmap("gang", "-f", str(fixture), "-o", "text", home=tmp_path)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines()[1] == "gang eval-shards   requires 1 pod · min nvidia.com/gpu 2"


def test_wmap_gang_text_lists_an_unplaced_pod_with_its_reason(tmp_path: Path) -> None:
    broken = copy.deepcopy(pods("jobset")[1])
    del broken["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]
    pods_file = tmp_path / "pods.yaml"
    pods_file.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [broken]}))
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "jobset.yaml"
    result = wmap("gang", "-f", str(fixture), "--pods", str(pods_file), "-o", "text", home=tmp_path)
    assert result.code == 0, result.stderr
    name = broken["metadata"]["name"]
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("unplaced ")]
    assert line.startswith(f"unplaced {name}: ") and "replica key" in line
    assert f"pod {name} is in no gang" in result.stderr


def test_text_is_for_the_plan_only(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "jobset.yaml"
    result = wmap("gang", "-f", str(fixture), "--format", "kai", "-o", "text", home=tmp_path)
    assert result.code == 2
    assert "-o text shows the plan as a tree" in result.stderr


def test_a_refused_plan_is_exit_1_naming_the_reason(tmp_path: Path) -> None:
    value = obj("jobset")
    value["spec"]["replicatedJobs"][1]["template"]["metadata"] = {
        "annotations": {"kai.scheduler/batch-min-member": "5"}
    }
    manifest = tmp_path / "jobset.yaml"
    manifest.write_text(yaml.safe_dump(value))
    result = wmap("gang", "-f", str(manifest), home=tmp_path)
    assert result.code == 1
    assert "gang train: sub-group workers-replica-0 requires 5 pods but the spec asks for 4" in result.stderr
    assert "Traceback" not in result.output


def test_min_member_of_a_kai_tree_is_its_cheapest_way_to_be_met() -> None:
    value = obj("jobset")
    value["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    (pod_group,) = export(plan(workload("jobset", value).resolve()), "kai")
    assert min_member_of(pod_group) == 1


# --- a gang per object: multi-node NIMService and InferenceService; Grove and Dynamo ---------------------------------


def test_a_single_node_nimservice_needs_no_gang_and_a_multi_node_one_has_one_per_group() -> None:
    single, listed = catalog("apps-nvidia-com-nimservice-v1alpha1")
    gang_plan = plan(single.resolve(), listed)
    assert (gang_plan.gangs, gang_plan.no_gang) == ((), "not multi-node: each pod is scheduled on its own")
    assert gang_plan.unplaced == []
    assert export(plan(single.resolve()), "kai") == []
    # KAI schedules every pod through a PodGroup: with the pods, one of minMember 1 each, as KAI's grouper makes
    assert [pod_group["spec"] for pod_group in export(gang_plan, "kai")] == [{"minMember": 1}] * len(listed)
    multinode, pods_of = catalog("apps-nvidia-com-nimservice-v1alpha1/variants/multinode")
    (gang,) = plan(multinode.resolve(), pods_of).gangs
    assert [(group.name, group.min_member, len(group.pods)) for group in gang.sub_groups] == [
        ("leader", 1, 1),
        ("workers", 1, 1),
    ]
    assert gang.min_resources == {"nvidia.com/gpu": 16}


def test_a_multi_node_inferenceservice_gangs_its_head_and_workers() -> None:
    def multinode(value: dict[str, Any]) -> None:
        value["spec"]["predictor"]["minReplicas"] = 1
        value["spec"]["predictor"]["workerSpec"] = {
            "pipelineParallelSize": 3,
            "containers": [{"name": "worker", "resources": {"limits": {"nvidia.com/gpu": 2}}}],
        }

    single, _ = catalog("serving-kserve-io-inferenceservice-v1beta1")
    assert plan(single.resolve()).no_gang == "a single-node predictor: each pod is scheduled on its own"
    isvc, _ = catalog("serving-kserve-io-inferenceservice-v1beta1", multinode)
    spec = kai(plan(isvc.resolve()))
    assert spec == {
        "minSubGroup": 2,
        "subGroups": [{"name": "predictor", "minMember": 1}, {"name": "predictor-worker", "minMember": 2}],
    }


def test_grove_is_a_gang_per_replica_and_a_pod_without_its_replica_index_is_unplaced() -> None:
    grove, listed = catalog("grove-io-podcliqueset-v1alpha1")
    gang_plan = plan(grove.resolve(), listed)
    # the base PodGang and, for the prefill scaling group's replica above its minAvailable, a scaled one
    assert [gang.name for gang in gang_plan.gangs] == ["disagg-0", "disagg-0-prefill-0"]
    base, scaled = gang_plan.gangs
    assert [(group.name, group.parent, group.min_member, group.min_sub_group) for group in base.sub_groups] == [
        ("frontend", None, 1, None),
        ("decode", None, 1, None),
        ("prefill-0", None, None, 2),
        ("prefill-0-pleader", "prefill-0", 1, None),
        ("prefill-0-pworker", "prefill-0", 1, None),
    ]
    assert [(group.name, group.parent) for group in scaled.sub_groups] == [
        ("prefill-1", None),
        ("prefill-1-pleader", "prefill-1"),
        ("prefill-1-pworker", "prefill-1"),
    ]
    assert (base.min_member, scaled.min_member) == (4, 2)
    assert {pod.name: pod.sub_group for pod in gang_plan.pods if pod.gang == scaled.name} == {
        "disagg-0-prefill-1-pleader-l1x9d": "prefill-1-pleader",
        "disagg-0-prefill-1-pworker-w1z3f": "prefill-1-pworker",
    }
    assert gang_plan.unplaced == []
    broken = copy.deepcopy(listed[0])
    del broken["metadata"]["labels"]["grove.io/podcliqueset-replica-index"]
    broken_plan = plan(grove.resolve(), [broken])
    (unplaced,) = broken_plan.unplaced
    assert unplaced.error is not None and broken["metadata"]["name"] in unplaced.error
    assert [gang.name for gang in broken_plan.gangs] == ["disagg-0", "disagg-0-prefill-0"]  # no gang of its own


def test_dynamo_is_one_gang_a_sub_group_per_service() -> None:
    dynamo, listed = catalog("nvidia-com-dynamographdeployment-v1alpha1")
    gang_plan = plan(dynamo.resolve(), listed)
    (gang,) = gang_plan.gangs
    assert [(group.name, group.min_member, len(group.pods)) for group in gang.sub_groups] == [
        ("frontend", 1, 1),
        ("vllmdecodeworker", 2, 2),
        ("vllmprefillworker", 2, 2),
    ]
    assert not any("named" in note for note in gang_plan.notes)  # lower-casing a name is routine, not a note


def test_rayjob_gangs_its_clusters_head_and_worker_groups() -> None:
    rayjob, listed = catalog("ray-io-rayjob-v1")
    (gang,) = plan(rayjob.resolve(), listed).gangs
    assert kai(plan(rayjob.resolve()))["minMember"] == 3
    assert [(group.name, len(group.pods)) for group in gang.sub_groups] == [("headgroup", 1), ("gpu", 2)]


# --- Volcano's subGroupPolicy (Volcano >= 1.14) -----------------------------------------------------------------------


def test_volcano_sub_group_policy_is_the_tree_and_pods_carry_its_labels() -> None:
    gang_plan = plan(workload("jobset").resolve(), pods("jobset"))
    (pod_group,) = export(gang_plan, "volcano", volcano_sub_groups=True)
    spec = pod_group["spec"]
    assert "minTaskMember" not in spec  # never both (Volcano advises against combining them)
    assert spec["subGroupPolicy"][1] == {
        "name": "workers",
        "subGroupSize": 4,
        "minSubGroups": 2,
        "matchLabelKeys": ["workloadmap.io/replica"],
        "labelSelector": {"matchLabels": {"workloadmap.io/sub-group": "workers"}},
    }
    worker = next(pod for pod in pods("jobset") if pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] == "1")
    labels = joined_pod(gang_plan, worker, "volcano", volcano_sub_groups=True)["metadata"]["labels"]
    assert (labels["workloadmap.io/sub-group"], labels["workloadmap.io/replica"]) == ("workers", "1")
    default = export(gang_plan, "volcano")[0]["spec"]
    assert default["minTaskMember"] == {"driver-replica-0": 1, "workers-replica-0": 4, "workers-replica-1": 4}


def test_a_tree_deeper_than_volcanos_policy_is_refused() -> None:
    from tests.unit.test_gang_plan import native_variant

    nested = native_variant(
        "        subGroups:\n        - componentName: engines\n        - componentName: prefill\n"
        "        - componentName: decode",
        nested=True,
    )
    with pytest.raises(GangError, match="nests deeper than Volcano's subGroupPolicy"):
        export(plan(nested.resolve()), "volcano", volcano_sub_groups=True)


def test_volcanos_own_min_member_annotation_sets_its_export_only() -> None:
    value = obj("pytorchjob")
    value["metadata"]["annotations"] = {"scheduling.volcano.sh/group-min-member": "3"}
    gang_plan = plan(workload("pytorchjob", value).resolve())
    assert export(gang_plan, "volcano")[0]["spec"]["minMember"] == 3
    assert export(gang_plan, "kai")[0]["spec"]["minMember"] == 5  # KAI reads its own knob, not Volcano's
    value["metadata"]["annotations"] = {"scheduling.volcano.sh/group-min-member": "three"}
    with pytest.raises(GangError, match="group-min-member is 'three', not a count"):
        export(plan(workload("pytorchjob", value).resolve()), "volcano")
