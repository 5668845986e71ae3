"""The training operator's TFJob, XGBoostJob, PaddleJob, JAXJob and MPIJob v1, and the core DaemonSet and ReplicaSet,
against their catalog fixtures (tests/fixtures/catalog/<slug>/, issue 25).

Each fixture is a workload mid-run with the status its controller writes and the pods it creates, labelled as the
controller labels them (kubeflow/training-operator v1.9.0 pkg/controller.v1/common/pod.go createNewPod; the MPIJob
v1 launcher and workers from mpi/mpijob_controller.go). Through the real APIs (`Workload`, `attribute`, `plan`):
the definition's phase and scales, where each pod lands, suspend and resume through `runPolicy.suspend`, and the
gang the training operator asks for (pkg/controller.v1/common/job.go ReconcileJobs: `minMember` is
`runPolicy.schedulingPolicy.minAvailable`, else every replica), with a sub-group per replica type.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import DefinitionRegistry, builtin_registry
from workload_map.gang import GangPlan, UnsatisfiableGang, plan
from workload_map.model import Karta
from workload_map.pods import attribute
from workload_map.resolve import Workload

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"


@dataclass(frozen=True)
class Expected:
    phase: str
    replicas: dict[str, int | None]  # component -> replicas (single-instance components)
    pods: dict[str, int]  # leaf component -> fixture pods attributed to it
    gang_min: int  # the root's minMember
    sub_groups: dict[str, int] = field(default_factory=dict)  # sub-group -> minMember
    spec_key: str = ""  # the replica-spec map of a training-operator kind (suspend and minAvailable apply)


EXPECTED: dict[str, Expected] = {
    "kubeflow-org-tfjob-v1": Expected(
        "Running",
        {"tfjob": None, "chief": 1, "ps": 2, "worker": 3, "evaluator": 1},
        {"chief": 1, "ps": 2, "worker": 3, "evaluator": 1},
        7,
        {"chief": 1, "ps": 2, "worker": 3, "evaluator": 1},
        "tfReplicaSpecs",
    ),
    "kubeflow-org-xgboostjob-v1": Expected(
        "Running",
        {"master": 1, "worker": 3},
        {"master": 1, "worker": 3},
        4,
        {"master": 1, "worker": 3},
        "xgbReplicaSpecs",
    ),
    "kubeflow-org-paddlejob-v1": Expected(
        "Running",
        {"master": 1, "worker": 2},
        {"master": 1, "worker": 2},
        3,
        {"master": 1, "worker": 2},
        "paddleReplicaSpecs",
    ),
    "kubeflow-org-jaxjob-v1": Expected("Running", {"worker": 4}, {"worker": 4}, 4, {"worker": 4}, "jaxReplicaSpecs"),
    "kubeflow-org-mpijob-v1": Expected(
        "Running",
        {"launcher": 1, "worker": 2},
        {"launcher": 1, "worker": 2},
        3,
        {"launcher": 1, "worker": 2},
        "mpiReplicaSpecs",
    ),
    "apps-daemonset-v1": Expected("Running", {"daemonset": 3}, {"daemonset": 3}, 1),
    "apps-replicaset-v1": Expected("Running", {"replicaset": 2}, {"replicaset": 2}, 1),
}
SLUGS = sorted(EXPECTED)
TRAINING = sorted(slug for slug in SLUGS if EXPECTED[slug].spec_key)


@cache
def _registry() -> DefinitionRegistry:
    return builtin_registry()


@cache
def _parsed(slug: str, name: str) -> list[dict[str, Any]]:
    path = FIXTURES / slug / name
    if not path.exists():
        return []
    value = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(value["items"]) if value.get("kind") == "List" else [value]


def _workload(slug: str) -> dict[str, Any]:
    return copy.deepcopy(_parsed(slug, "workload.yaml")[0])


def _pods(slug: str) -> list[dict[str, Any]]:
    return copy.deepcopy(_parsed(slug, "pods.yaml"))


def _definition(slug: str) -> Karta:
    resolved = _registry().for_object(_workload(slug))
    assert resolved is not None
    return resolved.karta


def _plan(slug: str, obj: dict[str, Any], pods: list[dict[str, Any]] | None = None) -> GangPlan:
    return plan(Workload(_definition(slug), obj).resolve(), pods)


def _minimums(gang_plan: GangPlan) -> tuple[int, dict[str, int | None]]:
    (gang,) = gang_plan.gangs
    return gang.min_member, {node.name: node.min_member for node in gang.sub_groups}


@pytest.mark.parametrize("slug", SLUGS)
def test_the_fixture_gets_the_builtin_definition_of_its_slug(slug: str) -> None:
    resolved = _registry().for_object(_workload(slug))
    assert resolved is not None
    assert (resolved.karta.name, resolved.origin, resolved.exact) == (slug, "catalog", True)


@pytest.mark.parametrize("slug", SLUGS)
def test_the_fixture_resolves_to_its_phase_and_replicas(slug: str) -> None:
    workload = Workload(_definition(slug), _workload(slug))
    expected = EXPECTED[slug]
    assert workload.status.phase == expected.phase
    for name, replicas in expected.replicas.items():
        scales = workload.components[name].scales
        if replicas is None:
            assert scales is None or all(scale.replicas is None for scale in scales.values()), name
        else:
            assert scales is not None, name
            assert {key: scale.replicas for key, scale in scales.items()} == {"": replicas}, name


@pytest.mark.parametrize("slug", SLUGS)
def test_each_fixture_pod_is_attributed_to_the_component_of_its_labels(slug: str) -> None:
    resolution = Workload(_definition(slug), _workload(slug)).resolve()
    attribution = attribute(resolution, _pods(slug), _parsed(slug, "owners.yaml"))
    assert attribution.foreign == 0 and attribution.unclaimed == []
    assert Counter(pod.component for pod in attribution.claimed) == Counter(EXPECTED[slug].pods)
    for pod in attribution.claimed:
        if EXPECTED[slug].spec_key:  # the training operator names its pods <job>-<type>-<index> (or -launcher)
            assert pod.component is not None and f"-{pod.component}" in pod.name


@pytest.mark.parametrize("slug", TRAINING)
def test_suspend_sets_run_policy_suspend_and_resume_clears_it(slug: str) -> None:
    karta = _definition(slug)
    workload = Workload(karta, _workload(slug))
    workload.components[karta.root.name].suspend()
    suspended = workload.to_object()
    assert suspended["spec"]["runPolicy"]["suspend"] is True
    assert Workload(karta, suspended).status.phase == "Suspending"
    again = Workload(karta, suspended)
    again.components[karta.root.name].resume()
    resumed = again.to_object()
    assert resumed["spec"]["runPolicy"]["suspend"] is False
    assert Workload(karta, resumed).status.phase == "Running"


@pytest.mark.parametrize("slug", SLUGS)
def test_the_gang_requires_what_the_controller_asks_for_and_places_every_pod(slug: str) -> None:
    expected = EXPECTED[slug]
    gang_plan = _plan(slug, _workload(slug), _pods(slug))
    assert gang_plan.no_gang is None and gang_plan.unplaced == []
    assert _minimums(gang_plan) == (expected.gang_min, expected.sub_groups)
    for pod in gang_plan.pods:
        if expected.sub_groups:  # each pod in the sub-group of its replica type
            assert pod.sub_group == pod.component, pod.name


@pytest.mark.parametrize(
    ("slug", "min_available", "sub_groups"),
    [
        # The workers take what minAvailable leaves once the other replica types are counted in full.
        ("kubeflow-org-tfjob-v1", 5, {"chief": 1, "ps": 2, "worker": 1, "evaluator": 1}),
        ("kubeflow-org-xgboostjob-v1", 3, {"master": 1, "worker": 2}),
        ("kubeflow-org-paddlejob-v1", 2, {"master": 1, "worker": 1}),
        ("kubeflow-org-jaxjob-v1", 2, {"worker": 2}),
        ("kubeflow-org-mpijob-v1", 2, {"launcher": 1, "worker": 1}),
    ],
)
def test_scheduling_policy_min_available_sets_the_root_minimum(
    slug: str, min_available: int, sub_groups: dict[str, int]
) -> None:
    obj = _workload(slug)
    obj["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": min_available}
    assert _minimums(_plan(slug, obj)) == (min_available, sub_groups)


def test_a_tfjob_with_only_workers_has_one_sub_group_and_a_master_is_the_chief() -> None:
    slug = "kubeflow-org-tfjob-v1"
    obj = _workload(slug)
    specs = obj["spec"]["tfReplicaSpecs"]
    obj["spec"]["tfReplicaSpecs"] = {"Worker": specs["Worker"]}
    gang_plan = _plan(slug, obj)
    assert _minimums(gang_plan) == (3, {"worker": 3})
    assert "component ps asks for no pods: no sub-group" in gang_plan.notes

    obj["spec"]["tfReplicaSpecs"] = {"Master": specs["Chief"], "Worker": specs["Worker"]}
    workload = Workload(_definition(slug), obj)
    scales = workload.components["chief"].scales
    assert scales is not None and {key: scale.replicas for key, scale in scales.items()} == {"": 1}
    master_pod = next(pod for pod in _pods(slug) if pod["metadata"]["name"].endswith("-chief-0"))
    master_pod["metadata"]["name"] = "resnet-ps-master-0"
    master_pod["metadata"]["labels"]["training.kubeflow.org/replica-type"] = "master"
    placed = attribute(workload.resolve(), [master_pod]).claimed
    assert [(pod.name, pod.component) for pod in placed] == [("resnet-ps-master-0", "chief")]


def test_a_jaxjob_asking_for_more_than_its_workers_can_never_start() -> None:
    slug = "kubeflow-org-jaxjob-v1"
    obj = _workload(slug)
    obj["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": 5}
    with pytest.raises(UnsatisfiableGang):
        _plan(slug, obj)


def test_a_daemonset_before_the_controller_counts_its_nodes_is_initializing() -> None:
    slug = "apps-daemonset-v1"
    obj = _workload(slug)
    del obj["status"]
    assert Workload(_definition(slug), obj).status.phase == "Initializing"


@pytest.mark.parametrize(
    ("patch", "phase"),
    [
        ({"numberReady": 2, "numberAvailable": 2, "numberUnavailable": 1}, "Degraded"),
        ({"updatedNumberScheduled": 1, "numberAvailable": 2}, "Initializing"),
        ({"observedGeneration": 1}, "Initializing"),
    ],
)
def test_a_daemonset_short_of_pods_is_degraded_unless_a_rollout_or_a_new_spec_explains_it(
    patch: dict[str, int], phase: str
) -> None:
    slug = "apps-daemonset-v1"
    obj = _workload(slug)
    obj["status"].update(patch)
    assert Workload(_definition(slug), obj).status.phase == phase
