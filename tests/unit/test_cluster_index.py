"""The shared index of workloads and pods by owner chain, and the resolution cache over it (issue 21): changes in
any order, incremental updates, and a view recomputed only when the workload or one of its pods changed."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from workload_map import builtin_registry
from workload_map.cluster.index import ResolutionCache, WorkloadIndex
from workload_map.pods import OwnerIndex, attribute
from workload_map.resolve import resolve
from workload_map.view import WorkloadView, build_view


def deployment(rv: str = "1", replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ml", "uid": "dep-1", "resourceVersion": rv},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
            },
        },
    }


def replicaset(uid: str = "rs-1", owner: str = "dep-1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"web-{uid}",
            "namespace": "ml",
            "uid": uid,
            "resourceVersion": "5",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": owner, "controller": True}
            ],
        },
    }


def pod(name: str, rv: str = "1", owner: str = "rs-1", kind: str = "ReplicaSet") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"pod-{name}",
            "resourceVersion": rv,
            "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": "x", "uid": owner, "controller": True}],
        },
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running"},
    }


def names(index: WorkloadIndex, uid: str = "dep-1") -> list[str]:
    return [p["metadata"]["name"] for p in index.pods_of(uid)]


ARRIVALS = ["workload", "owner", "pod-a", "pod-b"]


@pytest.mark.parametrize("order", list(itertools.permutations(ARRIVALS)))
def test_pods_reach_their_workload_whatever_order_the_informers_list_in(order: tuple[str, ...]) -> None:
    index = WorkloadIndex()
    touched: set[str] = set()
    for arrival in order:
        if arrival == "workload":
            touched |= index.set_workload(deployment())
        elif arrival == "owner":
            touched |= index.set_owner(replicaset())
        else:
            touched |= index.set_pod(pod(arrival.removeprefix("pod-")))
    assert names(index) == ["a", "b"]
    assert touched == {"dep-1"}
    assert index.unknown_owner_kinds() == set()
    assert index.root_of("ml/a") == "dep-1"
    owners = index.owner_index("dep-1")
    assert len(owners) == 1
    found = owners.resolve("ml", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "uid": "rs-1"})
    assert found is not None
    assert found.uid == "rs-1"


def test_an_unknown_owner_kind_is_reported_until_its_objects_arrive() -> None:
    index = WorkloadIndex()
    index.set_workload(deployment())
    assert index.set_pod(pod("a")) == set()  # its chain stops at rs-1, not known yet
    assert index.unknown_owner_kinds() == {("apps/v1", "ReplicaSet")}
    assert index.set_owner(replicaset()) == {"dep-1"}
    assert index.unknown_owner_kinds() == set()


def test_changes_touch_only_the_workloads_they_concern() -> None:
    index = WorkloadIndex()
    other = deployment()
    other["metadata"] = {**other["metadata"], "name": "db", "uid": "dep-2"}
    index.set_workload(deployment())
    index.set_workload(other)
    index.set_owner(replicaset())
    index.set_owner(replicaset("rs-2", owner="dep-2"))
    index.set_pod(pod("a"))
    assert index.set_pod(pod("d", owner="rs-2")) == {"dep-2"}
    assert index.set_pod(pod("a", rv="2")) == {"dep-1"}
    # a pod adopted by another ReplicaSet (same name) moves: both workloads are touched
    assert index.set_pod(pod("a", rv="3", owner="rs-2")) == {"dep-1", "dep-2"}
    assert names(index, "dep-1") == []
    assert names(index, "dep-2") == ["a", "d"]
    assert index.remove_pod(pod("d")) == {"dep-2"}
    assert index.remove_pod(pod("d")) == set()  # twice: nothing left to do


def test_an_owner_deleted_unlinks_only_the_pods_through_it() -> None:
    index = WorkloadIndex()
    index.set_workload(deployment())
    index.set_owner(replicaset("rs-1"))
    index.set_owner(replicaset("rs-2"))  # a rollout: two ReplicaSets of one Deployment
    index.set_pod(pod("old", owner="rs-1"))
    index.set_pod(pod("new", owner="rs-2"))
    assert index.remove_owner(replicaset("rs-1")) == {"dep-1"}
    assert names(index) == ["new"]
    assert index.unknown_owner_kinds() == {("apps/v1", "ReplicaSet")}  # "old" now waits on rs-1


def test_a_workload_deleted_and_recreated() -> None:
    index = WorkloadIndex()
    index.set_workload(deployment())
    index.set_pod(pod("a", owner="dep-1", kind="Deployment"))  # owned directly (as a PyTorchJob's pods are)
    assert names(index) == ["a"]
    assert index.remove_workload(deployment()) == {"dep-1"}
    assert names(index) == []
    assert index.set_workload(deployment(rv="9")) == {"dep-1"}
    assert names(index) == ["a"]


def test_an_owner_cycle_ends_the_walk() -> None:
    index = WorkloadIndex()
    index.set_workload(deployment())
    index.set_owner(replicaset("rs-1", owner="rs-2"))
    index.set_owner(replicaset("rs-2", owner="rs-1"))
    index.set_pod(pod("a"))
    assert index.root_of("ml/a") is None


def view_of(workload: dict[str, Any], pods: list[dict[str, Any]], owners: OwnerIndex) -> WorkloadView:
    """What `wmap watch` computes: the resolution, the pods attributed, the view (the library's own functions)."""
    definition = builtin_registry().for_gvk("apps", "v1", "Deployment")
    assert definition is not None
    resolution = resolve(definition.karta, workload)
    return build_view(resolution, attribute(resolution, pods, owners), origin=definition.origin)


def test_the_view_is_recomputed_only_when_the_workload_or_one_of_its_pods_changed() -> None:
    index = WorkloadIndex()
    cache = ResolutionCache(view_of)
    index.set_workload(deployment())
    index.set_owner(replicaset())
    index.set_pod(pod("a"))
    first = cache.get(index, "dep-1")
    assert first is not None
    assert first.replicas.desired == 2
    assert first.replicas.current == 1
    assert cache.get(index, "dep-1") is first
    index.set_owner({**replicaset(), "metadata": {**replicaset()["metadata"], "resourceVersion": "6"}})
    assert cache.get(index, "dep-1") is first  # an owner's new version changes no pod and not the workload
    other = pod("z", owner="rs-9")
    index.set_pod(other)  # a pod of something else
    assert cache.get(index, "dep-1") is first
    assert cache.computed == 1
    index.set_pod(pod("b"))
    second = cache.get(index, "dep-1")
    assert second is not None
    assert second.replicas.current == 2
    index.set_pod(pod("b", rv="2"))
    assert cache.get(index, "dep-1") is not second
    index.set_workload(deployment(rv="2", replicas=3))
    third = cache.get(index, "dep-1")
    assert third is not None
    assert third.replicas.desired == 3
    assert cache.computed == 4
    index.remove_workload(deployment())
    assert cache.get(index, "dep-1") is None
