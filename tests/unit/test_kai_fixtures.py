"""The KAI pod-grouper fixtures (tests/fixtures/kai) are well-formed and obey KAI's own PodGroup rules.

The structural rules are those KAI's admission webhook enforces on a v2alpha2 PodGroup
(pkg/apis/scheduling/v2alpha2/podgroup_webhook.go at the pinned commit: validatePodGroupSpec,
validateSubGroups, validateSubGroupMinFields, validateParent, detectCycle) and the CRD's name pattern
(podgroup_types.go, SubGroup.Name and SubGroup.Parent): an expectation KAI itself would reject is a broken fixture.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.kai_facts import (
    FIXTURE_DIR,
    KAI_COMMIT,
    VERIFIED_VALUES,
    FixtureError,
    KaiCase,
    PodGroupShape,
    SubGroup,
    expected_shape,
    load_cases,
    normalize_kai,
)

CASES = load_cases()
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
KINDS = {
    "JobSet",
    "PyTorchJob",
    "MPIJob",
    "RayCluster",
    "RayJob",
    "RayService",
    "LeaderWorkerSet",
    "PodCliqueSet",
    "DynamoGraphDeployment",
    "Job",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "Pod",
    "Service",
    "TFJob",
    "XGBoostJob",
    "JAXJob",
    "PaddleJob",
    "DaemonSet",
    "ReplicaSet",
    "Notebook",
    "DevWorkspace",
    "TaskRun",
    "PipelineRun",
    "SeldonDeployment",
    "VirtualMachineInstance",
    "VirtualMachine",
    "ScheduledWorkflow",
    "LLMInferenceService",
    "MiniCluster",
}


def by_id() -> list[object]:
    return [pytest.param(c, id=c.id) for c in CASES]


def test_every_kind_has_cases() -> None:
    per_kind = Counter(c.kind for c in CASES)
    assert set(per_kind) == KINDS
    assert len(CASES) >= 50


def test_case_names_unique_dns_labels_per_file() -> None:
    seen: Counter[str] = Counter(c.id for c in CASES)
    assert [i for i, n in seen.items() if n > 1] == []
    assert [c.id for c in CASES if not DNS_LABEL.match(c.name)] == []


@pytest.mark.parametrize("case", by_id())
def test_case_header(case: KaiCase) -> None:
    assert case.verified in VERIFIED_VALUES
    assert len(case.fact.split()) >= 8, "a fact is a sentence in our words"
    assert case.sources, "every fact cites where KAI implements it"
    for source in case.sources:
        assert source.file.startswith("pkg/") and source.file.endswith(".go")
        assert source.function
    assert case.workload["kind"] == case.kind
    assert case.workload.get("metadata", {}).get("uid"), "KAI names PodGroups after the top owner's UID"


@pytest.mark.parametrize("case", by_id())
def test_pods_are_realistic_objects(case: KaiCase) -> None:
    names = case.pod_names()
    assert names, "KAI groups pods: every case has some"
    assert len(set(names)) == len(names)
    for pod in case.pods:
        assert pod["apiVersion"] == "v1"
        assert pod["kind"] == "Pod"
        meta = pod["metadata"]
        assert meta.get("namespace") and meta.get("uid")
        containers = pod["spec"]["containers"]
        assert containers and all(c.get("resources", {}).get("requests") for c in containers)


@pytest.mark.parametrize("case", by_id())
def test_owner_chain_resolves(case: KaiCase) -> None:
    """Each pod's ownerReferences lead, through `related`, to the case's workload: the top owner KAI looks up."""
    objects = {(o["kind"], o["metadata"]["name"]): o for o in (*case.related, *case.pods)}
    top = case.workload
    objects[(top["kind"], top["metadata"]["name"])] = top
    for pod in case.pods:
        current = pod
        for _ in range(10):
            owners = current["metadata"].get("ownerReferences") or []
            if not owners:
                break
            assert len(owners) == 1, "KAI refuses objects with several owners"
            ref = owners[0]
            owner = objects.get((ref["kind"], ref["name"]))
            assert owner is not None, f"{pod['metadata']['name']}: owner {ref['kind']}/{ref['name']} not in the case"
            assert owner["metadata"]["uid"] == ref["uid"], "KAI checks the owner's UID"
            current = owner
        reached = (current["kind"], current["metadata"]["name"], current["metadata"]["uid"])
        assert reached == (top["kind"], top["metadata"]["name"], top["metadata"]["uid"]), (
            f"{pod['metadata']['name']}: top owner is {current['kind']}/{current['metadata']['name']}"
        )


@pytest.mark.parametrize("case", by_id())
def test_expected_pods_and_placement(case: KaiCase) -> None:
    names = set(case.pod_names())
    grouped = [p for g in case.pod_groups for p in g.pods]
    assert len(grouped) == len(set(grouped)), "a pod is in at most one PodGroup"
    assert set(grouped) <= names
    assert set(case.placement) == names, "placement covers every pod, null where KAI sets no sub-group"
    group_of = {p: g for g in case.pod_groups for p in g.pods}
    for pod, sub in case.placement.items():
        if sub is None:
            continue
        group = group_of.get(pod)
        assert group is not None, f"{pod} is placed in {sub} but in no PodGroup"
        leaves = {s.name for s in _leaves(group)}
        assert sub in leaves, f"{pod}: sub-group {sub} is not a leaf of its PodGroup"


def _leaves(group: PodGroupShape) -> list[SubGroup]:
    parents = {s.parent for s in group.sub_groups if s.parent}
    return [s for s in group.sub_groups if s.name not in parents]


@pytest.mark.parametrize("case", by_id())
def test_pod_groups_pass_kai_validation(case: KaiCase) -> None:
    for group in case.pod_groups:
        # validatePodGroupSpec: root minMember and minSubGroup are mutually exclusive; exactly one is written
        assert (group.min_member is None) != (group.min_sub_group is None)
        names = [s.name for s in group.sub_groups]
        assert len(names) == len(set(names)), "validateSubGroups: duplicate sub-group name"
        assert all(DNS_LABEL.match(n) for n in names), "SubGroup.Name pattern"
        by_name = {s.name: s for s in group.sub_groups}
        children: dict[str, list[str]] = {}
        for sub in group.sub_groups:
            if sub.parent is not None:
                assert sub.parent in by_name, f"validateParent: parent {sub.parent} of {sub.name} not found"
                children.setdefault(sub.parent, []).append(sub.name)
        _assert_acyclic(by_name)
        for sub in group.sub_groups:
            assert (sub.min_member is None) or (sub.min_sub_group is None), f"{sub.name}: both minimums"
            kids = children.get(sub.name, [])
            if kids:
                # validateSubGroupMinFields: a mid-level sub-group carries minSubGroup, never minMember
                assert sub.min_member is None and sub.min_sub_group is not None, sub.name
                # KAI only warns here; in a fixture it would be a gang that can never form, so it is an error
                assert sub.min_sub_group <= len(kids), f"{sub.name}: minSubGroup above its child count"
            else:
                assert sub.min_sub_group is None and sub.min_member is not None, f"leaf {sub.name} needs minMember"
            for value in (sub.min_member, sub.min_sub_group):
                assert value is None or value >= 0, "CRD minimum is 0"
        if group.min_sub_group is not None:
            roots = [s for s in group.sub_groups if s.parent is None]
            assert roots, "minSubGroup only applies with sub-groups"
            assert group.min_sub_group <= len(roots)
        if group.min_member is not None:
            assert group.min_member >= 0


def _assert_acyclic(by_name: dict[str, SubGroup]) -> None:
    for start, sub in by_name.items():
        seen = {start}
        current = sub.parent
        while current is not None:
            assert current not in seen, f"detectCycle: cycle through {current}"
            seen.add(current)
            current = by_name[current].parent


def test_fixture_files_pin_one_kai_commit() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURE_DIR.glob("*.yaml"))]
    assert texts and all(f"commit: {KAI_COMMIT}" in t for t in texts)


def test_normalize_kai_matches_an_equivalent_export() -> None:
    """normalize_kai ignores PodGroup names and sub-group order and links pods by annotation and label."""
    case = next(c for c in CASES if c.id == "jobset.yaml:anyorder-leader-two-workers")
    group = case.pod_groups[0]
    subs = [
        {
            k: v
            for k, v in (
                ("name", s.name),
                ("minMember", s.min_member),
                ("minSubGroup", s.min_sub_group),
                ("parent", s.parent),
            )
            if v is not None
        }
        for s in reversed(group.sub_groups)
    ]
    manifests: list[dict[str, object]] = [
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "our-own-name", "namespace": "ml"},
            "spec": {"minSubGroup": group.min_sub_group, "queue": "default-queue", "subGroups": subs},
        }
    ]
    for name, sub in case.placement.items():
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "annotations": {"pod-group-name": "our-own-name"},
                    "labels": {"kai.scheduler/subgroup-name": sub},
                },
            }
        )
    assert normalize_kai(manifests) == expected_shape(case)

    wrong_leaf = [dict(m) for m in manifests]
    wrong_leaf[0] = {**manifests[0], "spec": {"minSubGroup": 1, "subGroups": subs}}
    assert normalize_kai(wrong_leaf) != expected_shape(case)
    assert normalize_kai(manifests[:1]).structure() == expected_shape(case).structure()


def test_normalize_kai_rejects_unknown_pod_group_reference() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p", "annotations": {"pod-group-name": "missing"}}}
    with pytest.raises(FixtureError, match="missing"):
        normalize_kai([pod])
