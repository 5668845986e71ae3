"""Owner chains and pod attribution (kli-cli §4.2-4.3): which pods are the workload's, and where each one goes.

Test design: workloads from tests/fixtures/view (catalog definitions and one local definition), pods and owners
built there with the labels and owner references the operators write. Every test names what a user would see go
wrong: a pod of another workload shown, a pod dropped, a pod under the wrong component or instance.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures import view as fx
from workload_map.pods import AttributedPod, OwnerIndex, attribute, attribute_many, owned_by
from workload_map.resolve import Workload

NS = "serving"


def deployment_with_pods(
    name: str, *, replicaset_uid: str | None = None, pods: int = 2
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """A Deployment (from the fixture, renamed), its ReplicaSet and its pods."""
    obj = fx.workload("deployment-gpu-limit")
    obj["metadata"]["name"] = name
    obj["metadata"]["uid"] = fx.uid_for(NS, "Deployment", name)
    replicaset = fx.owner("ReplicaSet", f"{name}-6d8f7b9c54", NS, obj, uid=replicaset_uid)
    members = [
        fx.pod(f"{name}-6d8f7b9c54-{index}", namespace=NS, owned_by=replicaset, labels={"app": "web"})
        for index in range(pods)
    ]
    return obj, replicaset, members


# --- owner chains ---------------------------------------------------------------------------------------------


def test_a_pod_owned_through_a_replicaset_belongs_to_the_deployment() -> None:
    deployment, replicaset, pods = deployment_with_pods("web")
    assert owned_by(pods[0], deployment["metadata"]["uid"], [replicaset])


def test_a_direct_owner_reference_is_enough_without_any_owner_objects() -> None:
    job = fx.workload("pytorchjob")
    worker = fx.pod("llama-finetune-worker-0", namespace="ml-team", owned_by=job)
    assert owned_by(worker, job["metadata"]["uid"])


def test_a_missing_owner_is_no_match() -> None:
    deployment, _, pods = deployment_with_pods("web")
    assert not owned_by(pods[0], deployment["metadata"]["uid"], [])


def test_an_owner_of_the_same_name_with_another_uid_is_no_match() -> None:
    # The ReplicaSet was deleted and recreated under the same name: the pod's reference has the old UID.
    deployment, replicaset, pods = deployment_with_pods("web")
    recreated = fx.owner("ReplicaSet", replicaset["metadata"]["name"], NS, deployment, uid=fx.uid_for("recreated"))
    assert not owned_by(pods[0], deployment["metadata"]["uid"], [recreated])


def test_owners_can_be_given_by_uid_or_by_namespace_kind_and_name() -> None:
    deployment, replicaset, pods = deployment_with_pods("web")
    metadata = replicaset["metadata"]
    by_name = {(NS, "ReplicaSet", metadata["name"]): {"metadata": metadata}}
    by_uid = {metadata["uid"]: {"metadata": metadata}}
    assert owned_by(pods[0], deployment["metadata"]["uid"], by_name)
    assert owned_by(pods[0], deployment["metadata"]["uid"], by_uid)


def test_metadata_list_items_take_their_kind_from_the_list() -> None:
    deployment, replicaset, pods = deployment_with_pods("web")
    item = {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": replicaset["metadata"]}
    index = OwnerIndex([item], kind="ReplicaSet")
    assert owned_by(pods[0], deployment["metadata"]["uid"], index)


def test_a_cluster_scoped_intermediate_owner_is_followed() -> None:
    root: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Fleet",
        "metadata": {"name": "f", "uid": fx.uid_for("fleet")},
    }
    pool = {
        "apiVersion": "example.com/v1",
        "kind": "Pool",
        "metadata": {"name": "pool-a", "uid": fx.uid_for("pool-a"), "ownerReferences": [fx.owner_of(root)]},
    }
    member = fx.pod("p", namespace=NS, owned_by=None)
    member["metadata"]["ownerReferences"] = [fx.ref("Pool", "pool-a", "")]  # no uid: found by kind and name
    assert owned_by(member, root["metadata"]["uid"], [pool])


def chain(depth: int) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """A pod under `depth` intermediate owners below a root: (root uid, owners, pod)."""
    root: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Root",
        "metadata": {"name": "root", "uid": fx.uid_for("root")},
    }
    owners: list[dict[str, Any]] = []
    parent = root
    for level in range(depth):
        parent = fx.owner("Level", f"level-{level}", NS, parent, api_version="example.com/v1")
        owners.append(parent)
    return root["metadata"]["uid"], owners, fx.pod("deep", namespace=NS, owned_by=parent)


def test_the_walk_follows_at_most_six_owners() -> None:
    uid, owners, member = chain(6)
    assert owned_by(member, uid, owners)
    uid, owners, member = chain(7)
    assert not owned_by(member, uid, owners)


def test_an_owner_cycle_ends_without_a_match() -> None:
    first = fx.owner("Loop", "a", NS, None, api_version="example.com/v1")
    second = fx.owner("Loop", "b", NS, first, api_version="example.com/v1")
    first["metadata"]["ownerReferences"] = [fx.owner_of(second)]
    member = fx.pod("looped", namespace=NS, owned_by=first)
    assert not owned_by(member, fx.uid_for("elsewhere"), [first, second])


def test_only_the_controller_reference_is_followed() -> None:
    deployment, replicaset, pods = deployment_with_pods("web")
    member = pods[0]
    member["metadata"]["ownerReferences"][0].pop("controller")
    assert not owned_by(member, deployment["metadata"]["uid"], [replicaset])


# --- attribution ----------------------------------------------------------------------------------------------


def names(pods: list[AttributedPod]) -> list[str]:
    return sorted(pod.name for pod in pods)


def test_pods_of_two_workloads_of_one_type_in_one_namespace_never_mix() -> None:
    web, web_rs, web_pods = deployment_with_pods("web", pods=3)
    api, api_rs, api_pods = deployment_with_pods("api", pods=2)  # the same labels: app=web
    pods = web_pods + api_pods
    owners = [web_rs, api_rs]
    web_result = attribute(Workload(fx.catalog("apps-deployment-v1"), web).resolve(), pods, owners)
    api_result = attribute(Workload(fx.catalog("apps-deployment-v1"), api).resolve(), pods, owners)
    assert names(web_result.claimed) == names([AttributedPod(p, p["metadata"]["name"]) for p in web_pods])
    assert names(api_result.claimed) == [p["metadata"]["name"] for p in api_pods]
    assert web_result.foreign == 2
    assert api_result.foreign == 3


def test_attribute_many_gives_each_workload_what_attribute_gives_it() -> None:
    web, web_rs, web_pods = deployment_with_pods("web", pods=3)
    api, api_rs, api_pods = deployment_with_pods("api", pods=2)
    stray = fx.pod("stray", namespace=NS, owned_by=None, labels={"app": "web"})
    pods = [*web_pods, stray, *api_pods]
    workloads = [Workload(fx.catalog("apps-deployment-v1"), obj).resolve() for obj in (web, api)]
    together = attribute_many(workloads, pods, [web_rs, api_rs])
    alone = [attribute(workload, pods, [web_rs, api_rs]) for workload in workloads]
    assert [(names(a.claimed), a.foreign) for a in together] == [(names(a.claimed), a.foreign) for a in alone]
    assert [len(a.claimed) for a in together] == [3, 2]


def test_pytorchjob_pods_go_to_master_and_worker_by_their_replica_type_label() -> None:
    job = fx.workload("pytorchjob")
    pods = [
        fx.pod(
            f"llama-finetune-{role}-{index}",
            namespace="ml-team",
            owned_by=job,
            labels={"training.kubeflow.org/replica-type": role},
        )
        for role, count in (("master", 1), ("worker", 4))
        for index in range(count)
    ]
    result = attribute(Workload(fx.catalog("kubeflow-org-pytorchjob-v1"), job).resolve(), pods)
    grouped = result.by_component()
    assert sorted(grouped) == ["master", "worker"]
    assert len(grouped["master"][""]) == 1
    assert len(grouped["worker"][""]) == 4


def test_an_owned_pod_no_component_claims_is_unclaimed_not_dropped() -> None:
    job = fx.workload("pytorchjob")
    pods = [
        fx.pod(
            "llama-finetune-master-0",
            namespace="ml-team",
            owned_by=job,
            labels={"training.kubeflow.org/replica-type": "master"},
        ),
        fx.pod("llama-finetune-debug", namespace="ml-team", owned_by=job, labels={"purpose": "debug"}),
    ]
    result = attribute(Workload(fx.catalog("kubeflow-org-pytorchjob-v1"), job).resolve(), pods)
    assert names(result.unclaimed) == ["llama-finetune-debug"]
    assert result.unclaimed[0].component is None


def test_a_sole_pod_bearing_component_takes_every_owned_pod() -> None:
    deployment, replicaset, pods = deployment_with_pods("web", pods=2)
    pods[1]["metadata"]["labels"] = {"unrelated": "labels"}
    result = attribute(Workload(fx.catalog("apps-deployment-v1"), deployment).resolve(), pods, [replicaset])
    assert [(pod.component, pod.instance) for pod in result.claimed] == [("deployment", ""), ("deployment", "")]


def test_a_bare_pod_is_its_own_workload() -> None:
    obj = fx.pod("notebook", namespace="lab", owned_by=None)
    result = attribute(Workload(fx.catalog("core-pod-v1"), obj).resolve(), [obj])
    assert [(pod.name, pod.component) for pod in result.claimed] == [("notebook", "pod")]


def lws_pods(obj: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The pods and StatefulSets the LWS controller creates: a leader StatefulSet owned by the LWS, and per group a
    worker StatefulSet owned by the group's leader pod."""
    name = obj["metadata"]["name"]
    leaders_sts = fx.owner("StatefulSet", name, NS, obj)
    pods: list[dict[str, Any]] = []
    owners = [leaders_sts]
    for group in range(obj["spec"]["replicas"]):
        labels = {
            "leaderworkerset.sigs.k8s.io/name": name,
            "leaderworkerset.sigs.k8s.io/group-index": str(group),
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
        }
        leader = fx.pod(
            f"{name}-{group}",
            namespace=NS,
            owned_by=leaders_sts,
            labels=labels,
            node=f"gpu-{group}-0",
            containers=[fx.gpu_container(8, cpu="32", memory="500Gi")],
        )
        workers_sts = fx.owner("StatefulSet", f"{name}-{group}", NS, leader)
        owners.append(workers_sts)
        pods.append(leader)
        for worker in range(1, obj["spec"]["leaderWorkerTemplate"]["size"]):
            pods.append(
                fx.pod(
                    f"{name}-{group}-{worker}",
                    namespace=NS,
                    owned_by=workers_sts,
                    labels={**labels, "leaderworkerset.sigs.k8s.io/worker-index": str(worker)},
                    node=f"gpu-{group}-{worker}",
                    containers=[fx.gpu_container(8, cpu="32", memory="500Gi")],
                )
            )
    return pods, owners


def test_lws_workers_owned_through_their_leader_pod_get_component_and_group() -> None:
    obj = fx.workload("leaderworkerset")
    pods, owners = lws_pods(obj)
    result = attribute(Workload(fx.catalog("leaderworkerset-x-k8s-io-leaderworkerset-v1"), obj).resolve(), pods, owners)
    assert result.foreign == 0 and not result.unclaimed
    placed = sorted((pod.component or "", pod.replica or "") for pod in result.pods)
    assert placed == [("leader", "0"), ("leader", "1")] + [("worker", "0")] * 3 + [("worker", "1")] * 3


def fleet_pod(name: str, fleet: dict[str, Any], labels: dict[str, str], **kwargs: Any) -> dict[str, Any]:
    return fx.pod(name, namespace="lab", owned_by=fleet, labels=labels, **kwargs)


def test_instance_and_inherited_replica_key_come_from_the_pod_labels() -> None:
    fleet = fx.workload("fleet")
    pods = [
        fleet_pod("gpu-0", fleet, {"example.com/role": "gpu", "example.com/rack": "0"}),
        fleet_pod("cpu-1", fleet, {"example.com/role": "cpu", "example.com/rack": "1"}),
    ]
    result = attribute(Workload(fx.local_definition("fleet"), fleet).resolve(), pods)
    assert [(p.component, p.instance, p.replica, p.errors) for p in result.pods] == [
        ("server", "gpu", "0", ()),
        ("server", "cpu", "1", ()),
    ]


def test_a_pod_of_a_removed_instance_is_unclaimed_with_the_reason() -> None:
    fleet = fx.workload("fleet")
    leftover = fleet_pod("tpu-0", fleet, {"example.com/role": "tpu", "example.com/rack": "0"})
    (pod,) = attribute(Workload(fx.local_definition("fleet"), fleet).resolve(), [leftover]).pods
    assert not pod.claimed
    assert pod.component == "server" and pod.instance is None
    assert 'could not match instance id "tpu"' in pod.errors[0]


def test_a_broken_replica_key_is_recorded_on_the_pod_and_the_pod_stays_placed() -> None:
    fleet = fx.workload("fleet")
    member = fleet_pod("gpu-x", fleet, {"example.com/role": "gpu"})  # no rack label
    (pod,) = attribute(Workload(fx.local_definition("fleet"), fleet).resolve(), [member]).pods
    assert pod.claimed and pod.replica is None
    assert "failed to extract replica key" in pod.errors[0]


def test_a_component_without_type_selector_claims_nothing_when_others_bear_pods() -> None:
    fleet = fx.workload("fleet")
    member = fleet_pod("helper-0", fleet, {"example.com/part": "helper"})
    (pod,) = attribute(Workload(fx.local_definition("fleet"), fleet).resolve(), [member]).pods
    assert pod.component is None


def test_a_component_declaring_no_pod_spec_can_still_claim_pods_by_selector() -> None:
    fleet = fx.workload("fleet")
    member = fleet_pod("monitor-0", fleet, {"example.com/part": "monitor"})
    (pod,) = attribute(Workload(fx.local_definition("fleet"), fleet).resolve(), [member]).pods
    assert (pod.component, pod.instance) == ("monitor", "")


def test_check_ownership_false_takes_every_given_pod() -> None:
    fleet = fx.workload("fleet")
    stranger = fx.pod(
        "gpu-9", namespace="lab", owned_by=None, labels={"example.com/role": "gpu", "example.com/rack": "1"}
    )
    workload = Workload(fx.local_definition("fleet"), fleet)
    assert attribute(workload.resolve(), [stranger]).foreign == 1
    assert attribute(workload.resolve(), [stranger], check_ownership=False).claimed[0].instance == "gpu"


@pytest.mark.parametrize("bad_uid", ["", None])
def test_a_workload_without_uid_owns_no_pods(bad_uid: str | None) -> None:
    job = fx.workload("pytorchjob")
    member = fx.pod("x", namespace="ml-team", owned_by=job, labels={"training.kubeflow.org/replica-type": "master"})
    if bad_uid is None:
        del job["metadata"]["uid"]
    else:
        job["metadata"]["uid"] = bad_uid
    assert attribute(Workload(fx.catalog("kubeflow-org-pytorchjob-v1"), job).resolve(), [member]).foreign == 1
