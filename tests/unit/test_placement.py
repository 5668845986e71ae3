"""Placement rules on synthetic clusters (workload_map.placement, docs/placement.md).

Test design: nodes and pods are built as the API returns them; gangs are built as `workload_map.gang` types (and
one from the LWS example through the real plan). Each test pins one rule: requests against what is free, node
selectors, taints and tolerations, each affinity operator, whole gangs, sub-group minimums, topology domains, the
score and ranking, and the first reason in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map import Workload, builtin_registry
from workload_map.gang import Gang, GangPlan, GangRole, SubGroupPlan, Topology, plan, unganged
from workload_map.placement import (
    NOT_MODELLED,
    POD_BY_POD,
    ClusterSnapshot,
    PlacementError,
    PodByPod,
    PodConstraints,
    capacity,
    expression_matches,
    place,
    rank,
)
from workload_map.resolve import ObjectRef

GPU = "nvidia.com/gpu"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def node(
    name: str,
    gpus: int = 8,
    *,
    cpu: str = "64",
    labels: Mapping[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    pods: int | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    allocatable: dict[str, Any] = {"cpu": cpu, "memory": "2Ti", GPU: str(gpus)}
    if pods is not None:
        allocatable["pods"] = str(pods)
    spec: dict[str, Any] = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
        "status": {"capacity": dict(allocatable), "allocatable": allocatable},
    }


def bound(node_name: str, gpus: int, *, cpu: str = "1", phase: str = "Running", name: str = "p") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, GPU: str(gpus)}}}],
        },
        "status": {"phase": phase},
    }


def template(**spec: Any) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"containers": [{"name": "c"}], **spec}}


def role(name: str, count: int, gpus: int, *, cpu: int = 1, tmpl: dict[str, Any] | None = None) -> GangRole:
    requests = {"cpu": Fraction(cpu), GPU: Fraction(gpus)} if gpus else {"cpu": Fraction(cpu)}
    return GangRole(name, name, "", count, count, requests, tmpl or template())


def gang_plan(*gangs: Gang, name: str = "train") -> GangPlan:
    ref = ObjectRef("example.com/v1", "Train", name, "default")
    return GangPlan(ref, "", "train", "podGroups", "by-definition", tuple(gangs))


def gang(name: str, *roles: GangRole, **kwargs: Any) -> Gang:
    return Gang(name, name, tuple(r.component for r in roles), sum(r.min_count for r in roles), roles, **kwargs)


def snapshot(*nodes: dict[str, Any], pods: tuple[dict[str, Any], ...] = (), name: str = "c1") -> ClusterSnapshot:
    return ClusterSnapshot.from_objects(nodes, pods, name=name)


# --- requests against what is free ----------------------------------------------------------------------------


def test_a_gang_of_whole_node_pods_fits_one_pod_per_node() -> None:
    result = place([gang_plan(gang("g", role("worker", 4, 8)))], snapshot(*(node(f"n{i}") for i in range(4))))
    assert result.fits
    assert result.gangs[0].nodes == (("n0", 1), ("n1", 1), ("n2", 1), ("n3", 1))
    assert result.score == 0  # every node used is full
    assert result.nodes_used == 4


def test_bound_pods_take_their_requests_and_finished_pods_do_not() -> None:
    cluster = snapshot(
        node("n0"),
        node("n1"),
        pods=(bound("n0", 4), bound("n1", 8, phase="Succeeded"), bound("elsewhere", 8)),
    )
    assert cluster.nodes[0].free(GPU) == 4_000_000_000
    assert cluster.nodes[1].free(GPU) == 8_000_000_000
    result = place([gang_plan(gang("g", role("worker", 2, 8)))], cluster)
    assert not result.fits
    assert result.reason == (
        "Train/train: gang g, role worker: needs 2 pods of 8 nvidia.com/gpu; only 1 fit on the 2 nodes that accept them"
    )


def test_the_first_reason_names_the_largest_free_amount() -> None:
    cluster = snapshot(node("n0", 8), node("n1", 8), pods=(bound("n0", 4), bound("n1", 4)))
    result = place([gang_plan(gang("g", role("worker", 8, 8)))], cluster)
    assert not result.fits and result.score is None
    assert result.gangs[0].reason == (
        "gang g, role worker: needs 8 pods of 8 nvidia.com/gpu; the largest node has 4 free"
    )


def test_a_gang_fits_only_whole_and_takes_nothing_when_it_does_not() -> None:
    cluster = snapshot(node("n0"), node("n1"))
    big = gang("big", role("worker", 3, 8))
    small = gang("small", role("worker", 2, 8))
    result = place([gang_plan(big, small)], cluster)
    assert [g.fits for g in result.gangs] == [False, True]  # big took nothing: small still has both nodes
    assert not result.fits
    assert result.gangs[1].nodes == (("n0", 1), ("n1", 1))


def test_gangs_are_placed_in_order_on_what_the_ones_before_left() -> None:
    cluster = snapshot(node("n0"), node("n1"))
    result = place([gang_plan(gang("a", role("w", 1, 8))), gang_plan(gang("b", role("w", 2, 8)), name="b")], cluster)
    assert [g.fits for g in result.gangs] == [True, False]
    assert "Train/b: gang b, role w: needs 2 pods of 8 nvidia.com/gpu" in (result.reason or "")


def test_cpu_binds_when_gpus_are_free() -> None:
    cluster = snapshot(node("n0", cpu="4"))
    result = place([gang_plan(gang("g", role("w", 1, 1, cpu=8)))], cluster)
    assert result.gangs[0].reason == "gang g, role w: needs 1 pod of 8 cpu; the largest node has 4 free"


def test_a_reason_reads_cpu_in_cores_and_memory_in_binary_units() -> None:
    """Issue 20: quantities in every text a person reads, the reasons of `wmap place` too (not `47100m`, not
    `878906250Ki`)."""
    cluster = snapshot(node("n0", cpu="4"))
    cpu = GangRole("w", "w", "", 2, 2, {"cpu": Fraction(471, 10)}, template())
    result = place([gang_plan(gang("g", cpu))], cluster)
    assert result.gangs[0].reason == "gang g, role w: needs 2 pods of 47.1 cpu; the largest node has 4 free"
    memory = GangRole("w", "w", "", 1, 1, {"memory": Fraction(900 * 10**9) * 3}, template())
    result = place([gang_plan(gang("g", memory))], cluster)
    assert result.gangs[0].reason == "gang g, role w: needs 1 pod of 2.46Ti memory; the largest node has 2Ti free"


def test_the_pod_limit_of_a_node_counts() -> None:
    cluster = snapshot(node("n0", pods=2), pods=(bound("n0", 0, name="a"), bound("n0", 0, name="b")))
    result = place([gang_plan(gang("g", role("w", 1, 1)))], cluster)
    assert result.gangs[0].reason == "gang g, role w: needs 1 pod; every node that accepts them is at its pod limit"


def test_best_fit_fills_a_fragmented_node_before_opening_a_whole_one() -> None:
    cluster = snapshot(node("a-whole"), node("b-half"), pods=(bound("b-half", 4),))
    result = place([gang_plan(gang("g", role("w", 4, 1)))], cluster)
    assert result.gangs[0].nodes == (("b-half", 4),)
    assert result.score == 0


# --- node selectors, taints, affinity -----------------------------------------------------------------------------


def test_node_selector_keeps_pods_to_matching_nodes() -> None:
    cluster = snapshot(node("h100", labels={"pool": "h100"}), node("a100", labels={"pool": "a100"}))
    result = place([gang_plan(gang("g", role("w", 1, 8, tmpl=template(nodeSelector={"pool": "a100"}))))], cluster)
    assert result.gangs[0].nodes == (("a100", 1),)
    none = place([gang_plan(gang("g", role("w", 1, 8, tmpl=template(nodeSelector={"pool": "tpu"}))))], cluster)
    assert none.gangs[0].reason == (
        "gang g, role w: needs 1 pod; no node accepts them (nodeSelector pool=tpu does not match on 2 nodes)"
    )


@pytest.mark.parametrize(
    ("toleration", "fits"),
    [
        ({"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}, True),
        ({"key": "gpu", "value": "yes"}, True),  # no effect: every effect
        ({"key": "gpu", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),  # empty key + Exists: every taint
        ({"key": "gpu", "value": "no"}, False),
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
    ],
)
def test_tolerations_against_a_no_schedule_taint(toleration: dict[str, str], fits: bool) -> None:
    cluster = snapshot(node("n0", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]))
    result = place([gang_plan(gang("g", role("w", 1, 8, tmpl=template(tolerations=[toleration]))))], cluster)
    assert result.fits is fits
    if not fits:
        assert "the taint gpu=yes:NoSchedule is not tolerated on 1 node" in (result.reason or "")


def test_prefer_no_schedule_taints_do_not_block_and_unschedulable_nodes_do() -> None:
    soft = snapshot(node("n0", taints=[{"key": "x", "effect": "PreferNoSchedule"}]))
    assert place([gang_plan(gang("g", role("w", 1, 8)))], soft).fits
    cordoned = snapshot(node("n0", unschedulable=True))
    result = place([gang_plan(gang("g", role("w", 1, 8)))], cordoned)
    assert "node.kubernetes.io/unschedulable:NoSchedule is not tolerated" in (result.reason or "")


@pytest.mark.parametrize(
    ("operator", "values", "labels", "matches"),
    [
        ("In", ["a", "b"], {"k": "b"}, True),
        ("In", ["a"], {"k": "c"}, False),
        ("In", ["a"], {}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("NotIn", ["a"], {}, True),
        ("NotIn", ["a"], {"k": "a"}, False),
        ("Exists", [], {"k": ""}, True),
        ("Exists", [], {}, False),
        ("DoesNotExist", [], {}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("Gt", ["4"], {"k": "8"}, True),
        ("Gt", ["8"], {"k": "8"}, False),
        ("Gt", ["4"], {"k": "eight"}, False),
        ("Lt", ["4"], {"k": "2"}, True),
        ("Lt", ["4"], {"k": "4"}, False),
        ("Lt", ["4"], {}, False),
    ],
)
def test_match_expression_operators(operator: str, values: list[str], labels: dict[str, str], matches: bool) -> None:
    assert expression_matches({"key": "k", "operator": operator, "values": values}, labels) is matches


def affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def test_required_node_affinity_terms_are_ored_and_expressions_anded() -> None:
    cluster = snapshot(
        node("a", labels={"zone": "z1", "gen": "9"}),
        node("b", labels={"zone": "z2", "gen": "9"}),
        node("c", labels={"zone": "z2", "gen": "7"}),
    )
    terms = (
        {
            "matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["z2"]},
                {"key": "gen", "operator": "Gt", "values": ["8"]},
            ]
        },
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
    )
    tmpl = template(affinity=affinity(*terms))
    result = place([gang_plan(gang("g", role("w", 2, 8, tmpl=tmpl)))], cluster)
    assert result.gangs[0].nodes == (("a", 1), ("b", 1))
    three = place([gang_plan(gang("g", role("w", 3, 8, tmpl=tmpl)))], cluster)
    assert three.reason == (
        "Train/train: gang g, role w: needs 3 pods of 8 nvidia.com/gpu; only 2 fit on the 2 nodes that accept them "
        "(the others: the required node affinity does not match on 1 node)"
    )


def test_an_empty_term_matches_no_node() -> None:
    constraints = PodConstraints.from_template(template(affinity=affinity({})))
    assert constraints.mismatch(snapshot(node("a")).nodes[0]) == "the required node affinity does not match"


def test_a_malformed_constraint_is_a_one_line_error_naming_the_field() -> None:
    with pytest.raises(PlacementError, match=r"^pod template: spec.nodeSelector is not an object$"):
        PodConstraints.from_template(template(nodeSelector=["a"]))
    with pytest.raises(PlacementError, match="unknown operator 'Near'"):
        expression_matches({"key": "k", "operator": "Near"}, {})


# --- sub-groups and topology --------------------------------------------------------------------------------------


def tree_gang(min_sub_group: int | None, *leaves: tuple[str, int, int]) -> Gang:
    sub_groups = tuple(
        SubGroupPlan(name, name, min_member=count, count=count, roles=(role(name, count, gpus),))
        for name, count, gpus in leaves
    )
    roles = tuple(group.roles[0] for group in sub_groups)
    return Gang("g", "g", tuple(r.name for r in roles), 0, roles, sub_groups=sub_groups, min_sub_group=min_sub_group)


def test_every_sub_group_is_required_when_the_gang_names_no_minimum() -> None:
    cluster = snapshot(node("n0"), node("n1"))
    result = place([gang_plan(tree_gang(None, ("leader", 1, 8), ("workers", 2, 8)))], cluster)
    assert not result.fits
    assert result.gangs[0].pods == 3
    assert "gang g, sub-group workers, role workers: needs 2 pods of 8 nvidia.com/gpu" in (result.reason or "")


def test_a_parent_needs_only_min_sub_group_children_cheapest_first() -> None:
    cluster = snapshot(node("n0"), node("n1"))
    gang_ = tree_gang(2, ("big", 4, 8), ("a", 1, 8), ("b", 1, 8))
    result = place([gang_plan(gang_)], cluster)
    assert result.fits
    assert result.gangs[0].pods == 2
    assert result.gangs[0].nodes == (("n0", 1), ("n1", 1))
    every = place([gang_plan(tree_gang(3, ("big", 4, 8), ("a", 1, 8), ("b", 1, 8)))], cluster)
    assert every.reason == (
        "Train/train: gang g, sub-group big, role big: needs 4 pods of 8 nvidia.com/gpu; the largest node has 0 free"
    )
    some = place([gang_plan(tree_gang(2, ("big", 4, 8), ("a", 1, 8), ("c", 3, 8)))], cluster)
    assert (some.reason or "").startswith(
        "Train/train: gang g: 1 of the 2 sub-groups it needs fit; gang g, sub-group c, role c: needs 3 pods"
    )


def test_a_topology_key_keeps_the_gang_inside_one_label_value() -> None:
    zones = snapshot(
        node("a1", labels={"zone": "a"}),
        node("b1", labels={"zone": "b"}),
        node("b2", labels={"zone": "b"}),
        node("c1", labels={"zone": "c"}),
    )
    two = gang_plan(gang("g", role("w", 2, 8)))
    result = place([two], zones, topology_key="zone")
    assert result.fits and result.gangs[0].domain == "b"
    assert result.gangs[0].nodes == (("b1", 1), ("b2", 1))
    three = place([gang_plan(gang("g", role("w", 3, 8)))], zones, topology_key="zone")
    assert not three.fits
    assert three.reason == (
        "Train/train: gang g: no single zone value holds it (3 tried); "
        "in zone=a: gang g: needs 24 nvidia.com/gpu in all; its nodes have 8 free"
    )
    assert place([gang_plan(gang("g", role("w", 3, 8)))], zones).fits  # without the key it spreads


def test_a_domain_with_enough_in_all_is_still_tried_pod_by_pod() -> None:
    # zone b has 8 GPUs free in all, the gang needs 2 x 4, but no node has 4 free: the per-pod reason is given
    zones = snapshot(
        node("b1", labels={"zone": "b"}),
        node("b2", labels={"zone": "b"}),
        pods=(bound("b1", 5, name="x"), bound("b2", 3, name="y")),
    )
    result = place([gang_plan(gang("g", role("w", 2, 4)))], zones, topology_key="zone")
    assert result.reason == (
        "Train/train: gang g: no single zone value holds it (1 tried); in zone=b: gang g, role w: needs 2 pods of "
        "4 nvidia.com/gpu; only 1 fit on the 2 nodes that accept them"
    )


def test_the_gangs_own_required_topology_level_applies() -> None:
    zones = snapshot(node("a1", labels={"rack": "r1"}), node("b1", labels={"rack": "r2"}))
    topo = Topology("default", required_level="rack")
    result = place([gang_plan(gang("g", role("w", 2, 8), topology=topo))], zones)
    assert not result.fits
    assert "no single rack value holds it" in (result.reason or "")
    unlabelled = place([gang_plan(gang("g", role("w", 1, 8), topology=Topology("t", required_level="x")))], zones)
    assert unlabelled.reason == "Train/train: gang g: no node has the topology label x"


# --- score and ranking --------------------------------------------------------------------------------------------


def test_score_counts_nodes_left_partly_used_and_rank_orders_by_it() -> None:
    gang_ = gang_plan(gang("g", role("w", 3, 4)))
    # c1: 8-GPU nodes: 4+4 on one node, 4 on another -> one node left with 4 free
    c1 = place([gang_], snapshot(node("n0"), node("n1"), name="c1"))
    # c2: 4-GPU nodes: each pod fills one
    c2 = place([gang_], snapshot(*(node(f"m{i}", 4) for i in range(3)), name="c2"))
    c3 = place([gang_], snapshot(node("x", 4), name="c3"))
    assert (c1.score, c1.nodes_used) == (1, 2)
    assert (c2.score, c2.nodes_used) == (0, 3)
    assert [p.cluster for p in rank([c3, c1, c2])] == ["c2", "c1", "c3"]
    assert [p.cluster for p in rank(iter([c3, c1, c2]))] == ["c2", "c1", "c3"]  # any iterable, read once


def test_the_lws_example_plan_places_two_groups_of_four_whole_nodes() -> None:
    obj = yaml.safe_load((EXAMPLES / "leaderworkerset.yaml").read_text())
    found = builtin_registry().for_object(obj)
    assert found is not None
    lws_plan = plan(Workload(found.karta, obj).resolve())
    cluster = snapshot(*(node(f"n{i}", cpu="64") for i in range(8)))
    assert lws_plan.gangs[0].sub_groups  # a tree: leader and workers
    result = place([lws_plan], cluster)
    assert result.fits
    assert [g.pods for g in result.gangs] == [4, 4]
    assert result.nodes_used == 8
    smaller = place([lws_plan], snapshot(*(node(f"n{i}") for i in range(6))))
    assert [g.fits for g in smaller.gangs] == [True, False]


def test_a_workload_without_gangs_is_a_note_and_what_is_not_modelled_is_listed() -> None:
    empty = GangPlan(ObjectRef("apps/v1", "Deployment", "web"), "", "d", "podGroups", "by-definition", (), no_gang="x")
    result = place([empty], snapshot(node("n0")))
    assert result.fits
    assert result.notes == (
        "Deployment/web: no gang (x): the plan carries no pods, so they are not checked "
        "(give PodByPod.of(resolution) to place them one by one)",
    )
    assert any("DRA" in item for item in NOT_MODELLED)
    assert any("quotas" in item for item in NOT_MODELLED)
    assert any("pod affinity" in item for item in NOT_MODELLED)


# --- capacity -------------------------------------------------------------------------------------------------


def test_capacity_per_accelerator_and_pool() -> None:
    h100 = {"node.kubernetes.io/instance-type": "p5.48xlarge", "nvidia.com/gpu.product": "H100"}
    cluster = snapshot(
        node("a", 8, labels=h100),
        node("b", 8, labels=h100),
        node("c", 4),
        pods=(bound("a", 6), bound("c", 4)),
    )
    report = capacity(cluster)
    assert [r.resource for r in report.resources] == [GPU]
    assert report.resources[0].quantities() == ("20", "10", "10")
    assert [(dict(p.labels), p.nodes, p.resources[0].quantities()) for p in report.pools] == [
        (
            {"node.kubernetes.io/instance-type": "<none>", "nvidia.com/gpu.product": "<none>"},
            1,
            ("4", "4", "0"),
        ),
        (h100, 2, ("16", "6", "10")),
    ]
    cpu = capacity(cluster, pool_labels=("nvidia.com/gpu.product",), resources=["cpu"])
    assert cpu.resources[0].quantities() == ("192", "2", "190")
    assert cpu.to_dict()["pools"][1] == {
        "labels": {"nvidia.com/gpu.product": "H100"},
        "nodes": 2,
        "resources": {"cpu": {"allocatable": "128", "requested": "1", "free": "127"}},
    }


def test_an_unreadable_node_quantity_is_a_note_not_an_error() -> None:
    bad = node("n0")
    bad["status"]["allocatable"][GPU] = "eight"
    cluster = snapshot(bad)
    assert cluster.notes == (f"node n0: allocatable {GPU} is not a quantity; counted as none",)
    assert cluster.nodes[0].free(GPU) == 0


# --- a workload without a gang: its pods one by one -----------------------------------------------------------


def pod_by_pod(*roles: GangRole, name: str = "web") -> PodByPod:
    return PodByPod(f"Deployment/{name}", roles, "the replicas are independent")


def test_pods_without_a_gang_are_placed_one_by_one_across_nodes_none_of_which_holds_them_all() -> None:
    # 3 pods of 4 GPUs on two nodes with 4 and 8 free: no node holds all three, but each pod has a place
    snapshot = ClusterSnapshot.from_objects([node("a", 4), node("b", 8)], [], name="c1")
    result = place([pod_by_pod(role("web", 3, 4))], snapshot)
    assert result.fits
    (placed,) = result.gangs
    assert placed.pod_by_pod and placed.gang == POD_BY_POD and placed.pods == 3
    assert placed.nodes == (("a", 1), ("b", 2))  # best fit: the node with room for the fewest first
    assert result.score == 0 and result.nodes_used == 2
    assert placed.to_dict() == {
        "workload": "Deployment/web",
        "gang": POD_BY_POD,
        "pods": 3,
        "fits": True,
        "podByPod": True,
        "nodes": {"a": 1, "b": 2},
    }


def test_pods_without_a_gang_fit_only_when_every_pod_does_and_those_that_fit_stay_placed() -> None:
    snapshot = ClusterSnapshot.from_objects([node("a", 4), node("b", 4)], [bound("b", 2)], name="c1")
    result = place([pod_by_pod(role("web", 4, 2)), gang_plan(gang("g", role("w", 1, 2)))], snapshot)
    assert not result.fits
    web, later = result.gangs
    assert not web.fits and web.pod_by_pod
    assert web.nodes == (("a", 2), ("b", 1))  # the 3 that fit run: they are scheduled one by one
    assert (
        web.reason
        == "pod by pod, role web: needs 4 pods of 2 nvidia.com/gpu; only 3 fit on the 2 nodes that accept them"
    )
    assert result.reason == f"Deployment/web: {web.reason}"
    # what the pods that fit took is gone for the next workload
    assert not later.fits and later.reason is not None and "the largest node has 0 free" in later.reason


def test_pods_without_a_gang_keep_their_node_rules_and_ignore_the_topology_key() -> None:
    gpu_pool = template(nodeSelector={"pool": "gpu"})
    nodes = [
        node("cpu-1", 8, labels={"pool": "cpu", "zone": "a"}),
        node("gpu-1", 2, labels={"pool": "gpu", "zone": "b"}),
    ]
    snapshot = ClusterSnapshot.from_objects(nodes, [], name="c1")
    web = GangRole("web", "web", "", 2, 2, {GPU: Fraction(2)}, gpu_pool)
    result = place([pod_by_pod(web)], snapshot, topology_key="zone")
    assert not result.fits
    assert result.gangs[0].nodes == (("gpu-1", 1),)
    assert result.gangs[0].reason == (
        "pod by pod, role web: needs 2 pods of 2 nvidia.com/gpu; only 1 fit on the 1 node that accept them "
        "(the others: nodeSelector pool=gpu does not match on 1 node)"
    )
    assert "Deployment/web: its pods are placed one by one: the topology key does not apply" in result.notes


def test_pod_by_pod_of_a_resolution_counts_every_pod_the_spec_asks_for() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", GPU: "1"}}}]},
            },
        },
    }
    resolution = Workload(builtin_registry().for_object(deployment).karta, deployment).resolve()  # type: ignore[union-attr]
    demand = PodByPod.of(resolution)
    assert demand.workload == "Deployment/web"
    assert demand.reason == "the replicas are independent: each pod is scheduled on its own"
    ((web),) = demand.roles
    assert (web.count, web.requests) == (3, {"cpu": Fraction(2), GPU: Fraction(1)})
    snapshot = ClusterSnapshot.from_objects([node("a", 1), node("b", 1)], [], name="c1")
    result = place([demand], snapshot)
    assert not result.fits
    assert result.reason == (
        "Deployment/web: pod by pod, role deployment: needs 3 pods of 1 nvidia.com/gpu; "
        "only 2 fit on the 2 nodes that accept them"
    )
    # the plan of a workload without a gang, given as it is, carries no pods: a note, nothing placed
    unplanned = place([unganged(resolution, reason="no gang")], snapshot)
    assert unplanned.fits and unplanned.gangs == ()
    assert any("the plan carries no pods" in note for note in unplanned.notes)
