"""Our KAI export against KAI Scheduler's own pod grouper, case by case (tests/fixtures/kai, docs/kai-facts.md).

Each fixture case states one of KAI's rules (v0.17.0-9, commit d5bc503a), with the pods its operator creates and
the PodGroups KAI's grouper makes of them (checked by running KAI's code: scripts/kai-oracle). For every case we
plan the workload through the built-in catalog with those pods, export it for KAI, join each pod to its gang and
compare: the same number of PodGroups, the same minimums and sub-groups, each pod in the same PodGroup and
sub-group. Where we differ on purpose the case is listed in DIFFERENCES with the passage of docs/gang.md that
says why; the test checks that such a case does differ (the list stays true) and that the docs say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kai_facts import KaiCase, KaiShape, expected_shape, load_cases, normalize_kai
from workload_map.catalog import builtin_registry
from workload_map.gang import GangError, export, joined_pod, min_member_of, plan
from workload_map.resolve import Workload

CASES = load_cases()
GANG_DOC = " ".join((Path(__file__).resolve().parents[2] / "docs" / "gang.md").read_text().split())

# case id -> (the words of docs/gang.md that explain the difference, whether the minimum pods still agree)
DIFFERENCES: dict[str, tuple[str, bool]] = {
    "jobset.yaml:template-min-member-above-parallelism": ("A plan that could still never be met raises", False),
    "jobset.yaml:depends-on-workers-not-created": ("grouper ignores `dependsOn`; ours defers", False),
    "jobset.yaml:existing-flat-podgroup-kept": ("KAI keeps the flat PodGroup it made before", False),
    "knative-service.yaml:revision-with-per-pod-podgroups-kept": ("KAI keeps the flat PodGroup it made before", False),
    "mpijob.yaml:launcher-two-workers": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob.yaml:at-startup-before-launcher-pod": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob.yaml:wait-for-workers-no-launcher-pod": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob.yaml:wait-for-workers-launcher-pod-exists": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob.yaml:wait-for-workers-launcher-terminating": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob.yaml:scheduling-policy-min-available": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob.yaml:min-available-and-wait-for-workers": ("KAI has no sub-groups for an MPIJob", True),
    "mpijob-v1.yaml:v1-launcher-and-workers-counted": ("KAI has no sub-groups for an MPIJob", True),
    "tfjob.yaml:every-replica-type-counted": ("groupers are flat too", True),
    "tfjob.yaml:scheduling-policy-min-available": ("groupers are flat too", True),
    "xgboostjob.yaml:master-and-workers-counted": ("groupers are flat too", True),
    "jaxjob.yaml:every-worker-counted": ("groupers are flat too", True),
    "paddlejob.yaml:no-grouper-default-one-podgroup": ("KAI has no PaddleJob grouper", False),
    "podcliqueset.yaml:standalone-cliques": ("Grove sub-groups are named by clique", True),
    "podcliqueset.yaml:two-podcliqueset-replicas": ("Grove sub-groups are named by clique", True),
    "podcliqueset.yaml:podgang-without-pod-references": ("Grove sub-groups are named by clique", True),
    "podcliqueset.yaml:scaling-group-base-and-scaled-gangs": ("scaled PodGangs are gangs of their own", True),
    "podcliqueset.yaml:scaling-group-topology-parent": ("a parent per scaling-group replica", True),
    "pytorchjob.yaml:elastic-min-replicas-with-master": ("the training operator applies it to the workers", False),
    "leaderworkerset.yaml:single-segment-size-minus-one-equal-to-segment": ("counts the leader into it twice", False),
    "leaderworkerset.yaml:leader-ready-segments-leader-unscheduled": ("makes no PodGroup for the leader", False),
    "llminferenceservice.yaml:multi-node-group-default-grouper": ("KAI has no grouper for it", False),
    "minicluster.yaml:no-grouper-default-one-podgroup": ("KAI has no MiniCluster grouper", False),
    "minicluster.yaml:services-pod-in-the-same-podgroup": ("KAI has no MiniCluster grouper", False),
    "raycluster.yaml:suspended-worker-group-still-counted": ("KubeRay creates none of its pods", False),
    "raycluster.yaml:min-replicas-above-replicas": ("KubeRay raises `replicas` to `minReplicas`", False),
    "rayjob.yaml:cluster-name-not-in-status": ("before the RayCluster exists", False),
    "rayservice.yaml:upgrade-two-clusters-one-podgroup": ("sized from the active cluster", False),
    "dynamographdeployment.yaml:dgd-v1alpha1-llm-agg": ("groups the Grove PodGang the operator creates", False),
    "dynamographdeployment.yaml:dgd-v1beta1-llm-disagg": ("groups the Grove PodGang the operator creates", False),
}


def ours(case: KaiCase) -> KaiShape | str:
    """Our KAI export of the case's workload with its pods, as a KaiShape; or the error that refused it."""
    resolved = builtin_registry().for_object(case.workload)
    assert resolved is not None, f"{case.id}: no built-in definition for {case.kind}"
    pods = [dict(pod) for pod in case.pods]
    try:
        gang_plan = plan(Workload(resolved.karta, dict(case.workload)).resolve(), pods)
    except GangError as error:
        return str(error)
    return normalize_kai([*export(gang_plan, "kai"), *(joined_pod(gang_plan, pod, "kai") for pod in pods)])


def _minimums(shape: KaiShape | str) -> list[int]:
    if isinstance(shape, str):
        return []
    manifests = []
    for group in shape.pod_groups:
        spec: dict[str, object] = {"subGroups": []}
        if group.min_member is not None:
            spec["minMember"] = group.min_member
        if group.min_sub_group is not None:
            spec["minSubGroup"] = group.min_sub_group
        spec["subGroups"] = [
            {
                "name": sub.name,
                **({"parent": sub.parent} if sub.parent else {}),
                **({"minMember": sub.min_member} if sub.min_member is not None else {}),
                **({"minSubGroup": sub.min_sub_group} if sub.min_sub_group is not None else {}),
            }
            for sub in group.sub_groups
        ]
        manifests.append({"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "spec": spec})
    return sorted(min_member_of(manifest) for manifest in manifests)


@pytest.mark.parametrize("case", [case for case in CASES if case.id not in DIFFERENCES], ids=lambda case: case.id)
def test_our_kai_export_is_what_kais_grouper_makes(case: KaiCase) -> None:
    expected = expected_shape(case)
    got = ours(case)
    if not expected.pod_groups:  # KAI makes no PodGroup (an invalid spec): we refuse it too
        assert isinstance(got, str), f"{case.id}: KAI refuses this workload ({case.fact}); we planned {got}"
        return
    assert got == expected, case.fact


@pytest.mark.parametrize("case_id", sorted(DIFFERENCES))
def test_each_deliberate_difference_is_real_and_documented(case_id: str) -> None:
    words, same_minimum = DIFFERENCES[case_id]
    assert words in GANG_DOC, f"{case_id}: docs/gang.md does not explain the difference ({words!r})"
    (case,) = [case for case in CASES if case.id == case_id]
    expected, got = expected_shape(case), ours(case)
    assert got != expected, f"{case_id} is listed as a difference but agrees with KAI: take it off the list"
    if same_minimum:
        assert _minimums(got) == _minimums(expected), f"{case_id}: the minimum pods should still agree"


def test_every_case_is_compared() -> None:
    ids = {case.id for case in CASES}
    assert set(DIFFERENCES) <= ids
    assert len(ids) >= 70
    assert sum(1 for case in CASES if case.id not in DIFFERENCES) >= 45
