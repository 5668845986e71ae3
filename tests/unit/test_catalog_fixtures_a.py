"""The built-in definitions of core kinds, Kubeflow, Ray, JobSet and LWS read their realistic fixtures right.

Each fixture (tests/fixtures/catalog/<slug>/) is a workload mid-run with the status its operator writes, the pods
with the labels the operator sets, and the intermediate owners (ReplicaSets, Jobs, StatefulSets, RayClusters).
"""

from __future__ import annotations

import copy
import functools
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import DefinitionRegistry, builtin_registry
from workload_map.model import Karta

FIXTURES = Path(__file__).parents[1] / "fixtures" / "catalog"


@dataclass(frozen=True)
class Expected:
    phase: str
    # component -> instance id -> replicas ("" is the id of a single-instance component)
    replicas: dict[str, dict[str, int | None]]
    min_replicas: dict[str, dict[str, int | None]] = field(default_factory=dict)
    max_replicas: dict[str, dict[str, int | None]] = field(default_factory=dict)
    # after suspend(): the field the action set and the phase read back (None: no native suspend)
    suspended: tuple[tuple[str, ...], str] | None = None


EXPECTED: dict[str, Expected] = {
    "core-pod-v1": Expected("Running", {"pod": {"": None}}),
    "apps-deployment-v1": Expected("Running", {"deployment": {"": 3}}),
    "apps-statefulset-v1": Expected("Running", {"statefulset": {"": 3}}),
    "batch-job-v1": Expected("Running", {"job": {"": 2}}, suspended=(("spec", "suspend"), "Suspending")),
    "batch-cronjob-v1": Expected("Running", {"cronjob": {"": 1}}, suspended=(("spec", "suspend"), "Suspended")),
    "jobset-x-k8s-io-jobset-v1alpha2": Expected(
        "Running",
        {"jobset": {"": None}, "replicatedjob": {"driver": 1, "workers": 8}},
        suspended=(("spec", "suspend"), "Suspending"),
    ),
    "kubeflow-org-pytorchjob-v1": Expected(
        "Running",
        {"pytorchjob": {"": None}, "master": {"": 1}, "worker": {"": 4}},
        suspended=(("spec", "runPolicy", "suspend"), "Suspending"),
    ),
    "kubeflow-org-mpijob-v2beta1": Expected(
        "Running",
        {"mpijob": {"": None}, "launcher": {"": 1}, "worker": {"": 2}},
        suspended=(("spec", "runPolicy", "suspend"), "Suspending"),
    ),
    "ray-io-raycluster-v1": Expected(
        "Running",
        {"raycluster": {"": None}, "head": {"": 1}, "worker": {"gpu-workers": 2, "cpu-workers": 1}},
        min_replicas={"worker": {"gpu-workers": 1, "cpu-workers": 0}},
        max_replicas={"worker": {"gpu-workers": 4, "cpu-workers": 2}},
        suspended=(("spec", "suspend"), "Suspending"),
    ),
    "ray-io-rayjob-v1": Expected(
        "Running",
        {"rayjob": {"": None}, "raycluster": {"": None}, "head": {"": 1}, "worker": {"gpu": 2}},
        suspended=(("spec", "suspend"), "Suspending"),
    ),
    "ray-io-rayservice-v1": Expected(
        "Running",
        {"rayservice": {"": None}, "raycluster": {"": None}, "head": {"": 1}, "worker": {"gpu": 2}},
        suspended=(("spec", "suspend"), "Suspending"),
    ),
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": Expected(
        "Running", {"leaderworkerset": {"": None}, "group": {"": 2}, "leader": {"": 1}, "worker": {"": 3}}
    ),
}
SLUGS = sorted(EXPECTED)

# How many pods each fixture's pod-bearing components claim (the rest belong to no component).
POD_COUNTS: dict[str, dict[str, int]] = {
    "apps-deployment-v1": {"deployment": 3},
    "apps-statefulset-v1": {"statefulset": 3},
    "batch-job-v1": {"job": 2},
    "batch-cronjob-v1": {"cronjob": 1},
    "jobset-x-k8s-io-jobset-v1alpha2": {"replicatedjob": 9},
    "kubeflow-org-pytorchjob-v1": {"master": 1, "worker": 4},
    "kubeflow-org-mpijob-v2beta1": {"launcher": 1, "worker": 2},
    "ray-io-raycluster-v1": {"head": 1, "worker": 3},
    "ray-io-rayjob-v1": {"head": 1, "worker": 2},
    "ray-io-rayservice-v1": {"head": 1, "worker": 2},
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": {"leader": 2, "worker": 6},
}


@functools.cache
def _parsed(slug: str, name: str) -> list[dict[str, Any]]:
    path = FIXTURES / slug / name
    if not path.exists():
        return []
    value = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return list(value["items"]) if value.get("kind") == "List" else [value]


def _read(slug: str, name: str) -> list[dict[str, Any]]:
    return copy.deepcopy(_parsed(slug, name))


def _workload(slug: str) -> dict[str, Any]:
    return _read(slug, "workload.yaml")[0]


@functools.cache
def _registry() -> DefinitionRegistry:
    return builtin_registry()


def _definition(slug: str) -> Karta:
    resolved = _registry().for_object(_workload(slug))
    assert resolved is not None
    return resolved.karta


def _workload_class() -> Any:
    cls = getattr(importlib.import_module("workload_map.resolve"), "Workload", None)
    if cls is None:
        pytest.skip("workload_map.resolve.Workload is not written yet")
    return cls


# --- the fixtures themselves ------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_workload_gets_the_builtin_definition_of_its_slug(slug: str) -> None:
    resolved = _registry().for_object(_workload(slug))
    assert resolved is not None
    assert (resolved.karta.name, resolved.origin, resolved.exact) == (slug, "catalog", True)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_fixture_pod_leads_to_the_workload_through_controller_owners(slug: str) -> None:
    workload = _workload(slug)
    objects = {obj["metadata"]["uid"]: obj for obj in _read(slug, "pods.yaml") + _read(slug, "owners.yaml")}
    for pod in _read(slug, "pods.yaml"):
        current, hops = pod, 0
        while current["metadata"]["uid"] != workload["metadata"]["uid"]:
            controllers = [ref for ref in current["metadata"].get("ownerReferences", []) if ref.get("controller")]
            assert len(controllers) == 1, f"{pod['metadata']['name']}: no single controller at {current['kind']}"
            ref = controllers[0]
            current = workload if ref["uid"] == workload["metadata"]["uid"] else objects[ref["uid"]]
            assert (current["kind"], current["metadata"]["name"]) == (ref["kind"], ref["name"])
            hops += 1
            assert hops <= 6, f"{pod['metadata']['name']}: more than 6 owner hops"


@pytest.mark.parametrize("slug", sorted(POD_COUNTS))
def test_fixture_pods_carry_the_labels_of_their_component(slug: str) -> None:
    """Every component selecting by matchLabels claims exactly the pods expected, and no pod twice."""
    karta = _definition(slug)
    selecting = {
        component.name: component.pod_selector.component_type_selector.match_labels
        for component in karta.components
        if component.pod_selector
        and component.pod_selector.component_type_selector
        and component.pod_selector.component_type_selector.match_labels
    }
    pods = _read(slug, "pods.yaml")
    claims: dict[str, int] = {}
    for pod in pods:
        labels = pod["metadata"].get("labels", {})
        matched = [name for name, wanted in selecting.items() if all(labels.get(k) == v for k, v in wanted.items())]
        assert len(matched) <= 1, f"{pod['metadata']['name']} matches {matched}"
        for name in matched:
            claims[name] = claims.get(name, 0) + 1
    assert claims == {name: count for name, count in POD_COUNTS[slug].items() if name in selecting}


@pytest.mark.parametrize("slug", [slug for slug in SLUGS if slug != "apps-statefulset-v1"])  # a vector DB: no GPUs
def test_ai_fixtures_ask_for_gpus(slug: str) -> None:
    requested = [
        container.get("resources", {}).get("requests", {}).get("nvidia.com/gpu")
        for pod in _read(slug, "pods.yaml")
        for container in pod["spec"]["containers"]
    ]
    assert any(requested)


# --- resolved through the definition ---------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_resolves_to_the_expected_instances_scales_and_primary_phase(slug: str) -> None:
    workload = _workload_class()(_definition(slug), _workload(slug))
    expected = EXPECTED[slug]
    assert workload.status.phase == expected.phase
    for name, replicas in expected.replicas.items():
        component = workload.components[name]
        assert sorted(component.instance_ids) == sorted(replicas), name
        scales = component.scales
        if all(value is None for value in replicas.values()):
            assert scales is None or all(scale.replicas is None for scale in scales.values()), name
        else:
            assert {key: scale.replicas for key, scale in scales.items()} == replicas, name
    for name, bounds in expected.min_replicas.items():
        assert {key: scale.min_replicas for key, scale in workload.components[name].scales.items()} == bounds
    for name, bounds in expected.max_replicas.items():
        assert {key: scale.max_replicas for key, scale in workload.components[name].scales.items()} == bounds


@pytest.mark.parametrize("slug", [slug for slug in SLUGS if EXPECTED[slug].suspended])
def test_suspending_a_running_fixture_sets_its_native_field_and_resuming_clears_it(slug: str) -> None:
    cls = _workload_class()
    expected = EXPECTED[slug]
    assert expected.suspended is not None
    path, phase = expected.suspended
    karta = _definition(slug)
    workload = cls(karta, _workload(slug))
    workload.components[karta.root.name].suspend()
    suspended = workload.to_object()
    assert _get(suspended, path) is True
    assert cls(karta, suspended).status.phase == phase
    resumed_workload = cls(karta, suspended)
    resumed_workload.components[karta.root.name].resume()
    resumed = resumed_workload.to_object()
    assert _get(resumed, path) is False
    assert cls(karta, resumed).status.phase == expected.phase


@pytest.mark.parametrize(
    "slug", ["jobset-x-k8s-io-jobset-v1alpha2", "ray-io-raycluster-v1", "ray-io-rayjob-v1", "ray-io-rayservice-v1"]
)
def test_the_pods_of_a_multi_instance_component_name_one_of_its_instances(slug: str) -> None:
    karta = _definition(slug)
    workload = _workload_class()(karta, _workload(slug))
    for component in karta.components:
        selector = component.pod_selector
        if not (selector and selector.component_instance_selector and selector.component_type_selector):
            continue
        label = _label_key(selector.component_instance_selector.id_path)
        wanted = selector.component_type_selector.match_labels or {}
        ids = set(workload.components[component.name].instance_ids)
        pods = [
            pod
            for pod in _read(slug, "pods.yaml")
            if label in pod["metadata"].get("labels", {})
            and all(pod["metadata"]["labels"].get(k) == v for k, v in wanted.items())
        ]
        assert pods, component.name
        assert {pod["metadata"]["labels"][label] for pod in pods} <= ids


def _label_key(id_path: str) -> str:
    match = re.fullmatch(r'\.metadata\.labels\["([^"]+)"\]', id_path)
    assert match, id_path
    return match.group(1)


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


# --- status flows the recordings do not cover (states written from each controller's code) -----------------


def _cond(type_: str, status: str, reason: str = "") -> dict[str, str]:
    condition = {"type": type_, "status": status}
    if reason:
        condition["reason"] = reason
    return condition


def _merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


_WORKERS_2_OF_2 = [{"name": "driver", "ready": 1}, {"name": "workers", "ready": 2}]

# (slug, what happened, spec patch, the whole status, expected primary phase)
FLOWS: list[tuple[str, str, dict[str, Any], dict[str, Any] | None, str]] = [
    (
        "core-pod-v1",
        "a container in CrashLoopBackOff",
        {},
        {
            "phase": "Running",
            "containerStatuses": [{"name": "notebook", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
        },
        "Degraded",
    ),
    ("core-pod-v1", "all containers exited 0", {}, {"phase": "Succeeded"}, "Completed"),
    ("apps-deployment-v1", "no status yet", {}, None, "Initializing"),
    (
        "apps-deployment-v1",
        "first rollout below minimum availability",
        {},
        {
            "conditions": [
                _cond("Available", "False", "MinimumReplicasUnavailable"),
                _cond("Progressing", "True", "ReplicaSetUpdated"),
            ]
        },
        "Initializing",
    ),
    (
        "apps-deployment-v1",
        "progress deadline exceeded",
        {},
        {
            "conditions": [
                _cond("Available", "False", "MinimumReplicasUnavailable"),
                _cond("Progressing", "False", "ProgressDeadlineExceeded"),
            ]
        },
        "Failed",
    ),
    (
        "apps-deployment-v1",
        "one of three pods lost after the rollout",
        {},
        {
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "conditions": [_cond("Available", "True"), _cond("Progressing", "True", "NewReplicaSetAvailable")],
        },
        "Degraded",
    ),
    (
        "apps-deployment-v1",
        "rolling update in progress",
        {},
        {
            "replicas": 4,
            "updatedReplicas": 1,
            "readyReplicas": 2,
            "availableReplicas": 3,
            "conditions": [_cond("Available", "True"), _cond("Progressing", "True", "ReplicaSetUpdated")],
        },
        "Running",
    ),
    (
        "apps-deployment-v1",
        "rolled out, then below minimum availability",
        {},
        {
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 1,
            "conditions": [
                _cond("Available", "False", "MinimumReplicasUnavailable"),
                _cond("Progressing", "True", "NewReplicaSetAvailable"),
            ],
        },
        "Degraded",
    ),
    (
        "apps-statefulset-v1",
        "OrderedReady still creating pods",
        {},
        {"replicas": 2, "readyReplicas": 1, "currentRevision": "r1", "updateRevision": "r1"},
        "Initializing",
    ),
    (
        "apps-statefulset-v1",
        "rolling update",
        {},
        {"replicas": 3, "readyReplicas": 2, "currentRevision": "r1", "updateRevision": "r2"},
        "Initializing",  # issue 15: a rollout in progress with fewer ready pods than desired
    ),
    (
        "apps-statefulset-v1",
        "rolling update, every pod ready again",
        {},
        {"replicas": 3, "readyReplicas": 3, "currentRevision": "r1", "updateRevision": "r2"},
        "Running",
    ),
    (
        "apps-statefulset-v1",
        "a pod not ready after all were created",
        {},
        {"replicas": 3, "readyReplicas": 2, "currentRevision": "r1", "updateRevision": "r1"},
        "Degraded",
    ),
    (
        "batch-job-v1",
        "created suspended, controller caught up",
        {"suspend": True},
        {"conditions": [_cond("Suspended", "True", "JobSuspended")]},
        "Suspended",
    ),
    ("batch-job-v1", "suspend requested", {"suspend": True}, {"active": 2, "ready": 2}, "Suspending"),
    (
        "batch-job-v1",
        "resumed, controller not caught up",
        {"suspend": False},
        {"conditions": [_cond("Suspended", "True", "JobSuspended")]},
        "Resuming",
    ),
    ("batch-job-v1", "running with a failed pod being retried", {}, {"active": 2, "ready": 2, "failed": 1}, "Degraded"),
    (
        "batch-job-v1",
        "success criteria met, pods terminating",
        {},
        {"conditions": [_cond("SuccessCriteriaMet", "True")]},
        "Completed",
    ),
    (
        "batch-job-v1",
        "all completions done",
        {},
        {"succeeded": 4, "conditions": [_cond("Complete", "True")]},
        "Completed",
    ),
    ("batch-job-v1", "failure target reached", {}, {"conditions": [_cond("FailureTarget", "True")]}, "Failed"),
    (
        "batch-job-v1",
        "backoff limit exceeded",
        {},
        {"failed": 4, "conditions": [_cond("Failed", "True", "BackoffLimitExceeded")]},
        "Failed",
    ),
    ("batch-cronjob-v1", "never scheduled", {}, {}, "Initializing"),
    ("batch-cronjob-v1", "suspended", {"suspend": True}, {"lastScheduleTime": "2026-09-14T02:00:00Z"}, "Suspended"),
    (
        "batch-cronjob-v1",
        "idle after a successful run",
        {},
        {"lastScheduleTime": "2026-09-14T02:00:00Z", "lastSuccessfulTime": "2026-09-14T03:10:00Z"},
        "Running",
    ),
    (
        "batch-cronjob-v1",
        "idle after a failed run",
        {},
        {"lastScheduleTime": "2026-09-14T02:00:00Z", "lastSuccessfulTime": "2026-09-13T03:10:00Z"},
        "Degraded",
    ),
    ("jobset-x-k8s-io-jobset-v1alpha2", "no status yet", {}, None, "Initializing"),
    (
        "jobset-x-k8s-io-jobset-v1alpha2",
        "one worker Job not ready",
        {},
        {"replicatedJobsStatus": [{"name": "driver", "ready": 1}, {"name": "workers", "ready": 1, "active": 2}]},
        "Initializing",
    ),
    (
        "jobset-x-k8s-io-jobset-v1alpha2",
        "driver done, workers still running",
        {},
        {"replicatedJobsStatus": [{"name": "driver", "succeeded": 1}, {"name": "workers", "ready": 2}]},
        "Running",
    ),
    (
        "jobset-x-k8s-io-jobset-v1alpha2",
        "completed",
        {},
        {"terminalState": "Completed", "conditions": [_cond("Completed", "True", "AllJobsCompleted")]},
        "Completed",
    ),
    (
        "jobset-x-k8s-io-jobset-v1alpha2",
        "failed",
        {},
        {"terminalState": "Failed", "conditions": [_cond("Failed", "True", "FailedJobs")]},
        "Failed",
    ),
    (
        "jobset-x-k8s-io-jobset-v1alpha2",
        "suspended",
        {"suspend": True},
        {"conditions": [_cond("Suspended", "True", "SuspendedJobs")]},
        "Suspended",
    ),
    (
        "jobset-x-k8s-io-jobset-v1alpha2",
        "resumed, controller not caught up",
        {"suspend": False},
        {"conditions": [_cond("Suspended", "True", "SuspendedJobs")], "replicatedJobsStatus": _WORKERS_2_OF_2},
        "Resuming",
    ),
    (
        "kubeflow-org-pytorchjob-v1",
        "a replica is restarting",
        {},
        {"conditions": [_cond("Created", "True"), _cond("Running", "False"), _cond("Restarting", "True")]},
        "Degraded",
    ),
    (
        "kubeflow-org-pytorchjob-v1",
        "master exited 1",
        {},
        {"conditions": [_cond("Created", "True"), _cond("Running", "False"), _cond("Failed", "True")]},
        "Failed",
    ),
    (
        "kubeflow-org-pytorchjob-v1",
        "succeeded",
        {},
        {"conditions": [_cond("Created", "True"), _cond("Running", "False"), _cond("Succeeded", "True")]},
        "Completed",
    ),
    (
        "kubeflow-org-mpijob-v2beta1",
        "created suspended",
        {"runPolicy": {"suspend": True}},
        {"conditions": [_cond("Created", "True"), _cond("Suspended", "True", "MPIJobSuspended")]},
        "Suspended",
    ),
    (
        "kubeflow-org-mpijob-v2beta1",
        "resume requested",
        {"runPolicy": {"suspend": False}},
        {"conditions": [_cond("Created", "True"), _cond("Suspended", "True", "MPIJobSuspended")]},
        "Resuming",
    ),
    (
        "kubeflow-org-mpijob-v2beta1",
        "resumed and running",
        {"runPolicy": {"suspend": False}},
        {
            "conditions": [
                _cond("Created", "True"),
                _cond("Suspended", "False", "MPIJobResumed"),
                _cond("Running", "True"),
            ]
        },
        "Running",
    ),
    ("ray-io-raycluster-v1", "no status yet", {}, None, "Initializing"),
    (
        "ray-io-raycluster-v1",
        "suspending",
        {"suspend": True},
        {
            "state": "ready",
            "conditions": [
                _cond("RayClusterProvisioned", "True"),
                _cond("HeadPodReady", "True"),
                _cond("RayClusterSuspending", "True"),
                _cond("RayClusterSuspended", "False"),
            ],
        },
        "Suspending",
    ),
    (
        "ray-io-raycluster-v1",
        "suspended",
        {"suspend": True},
        {
            "state": "suspended",
            "conditions": [
                _cond("RayClusterProvisioned", "True"),
                _cond("HeadPodReady", "False"),
                _cond("RayClusterSuspending", "False"),
                _cond("RayClusterSuspended", "True"),
            ],
        },
        "Suspended",
    ),
    (
        "ray-io-raycluster-v1",
        "resume requested",
        {"suspend": False},
        {"state": "suspended", "conditions": [_cond("RayClusterSuspended", "True")]},
        "Resuming",
    ),
    (
        "ray-io-raycluster-v1",
        "head pod lost after provisioning",
        {},
        {"state": "ready", "conditions": [_cond("RayClusterProvisioned", "True"), _cond("HeadPodReady", "False")]},
        "Degraded",
    ),
    (
        "ray-io-raycluster-v1",
        "a worker pod could not be created",
        {},
        {
            "state": "ready",
            "conditions": [
                _cond("RayClusterProvisioned", "True"),
                _cond("HeadPodReady", "True"),
                _cond("ReplicaFailure", "True", "FailedCreateWorkerPod"),
            ],
        },
        "Degraded",
    ),
    ("ray-io-raycluster-v1", "failed (older KubeRay)", {}, {"state": "failed"}, "Failed"),
    (
        "ray-io-rayjob-v1",
        "job succeeded",
        {},
        {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"},
        "Completed",
    ),
    ("ray-io-rayjob-v1", "job failed", {}, {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED"}, "Failed"),
    (
        "ray-io-rayjob-v1",
        "job failed (older KubeRay)",
        {},
        {"jobDeploymentStatus": "Complete", "jobStatus": "FAILED"},
        "Failed",
    ),
    ("ray-io-rayjob-v1", "retrying on a new cluster", {}, {"jobDeploymentStatus": "Retrying"}, "Initializing"),
    ("ray-io-rayjob-v1", "resume requested", {"suspend": False}, {"jobDeploymentStatus": "Suspended"}, "Resuming"),
    (
        "ray-io-rayservice-v1",
        "initializing",
        {},
        {"conditions": [_cond("Ready", "False", "Initializing")]},
        "Initializing",
    ),
    (
        "ray-io-rayservice-v1",
        "no serve endpoint left",
        {},
        {"conditions": [_cond("Ready", "False", "ZeroServeEndpoints")]},
        "Degraded",
    ),
    (
        "ray-io-rayservice-v1",
        "initializing timed out",
        {},
        {"conditions": [_cond("Ready", "False", "InitializingTimeout")]},
        "Failed",
    ),
    (
        "ray-io-rayservice-v1",
        "an application is unhealthy",
        {},
        {
            "serviceStatus": "Running",
            "conditions": [_cond("Ready", "True", "NonZeroServeEndpoints")],
            "activeServiceStatus": {"applicationStatuses": {"llm": {"status": "UNHEALTHY"}}},
        },
        "Degraded",
    ),
    (
        "ray-io-rayservice-v1",
        "upgrading to a new cluster",
        {},
        {
            "serviceStatus": "Running",
            "conditions": [
                _cond("Ready", "True"),
                _cond("UpgradeInProgress", "True", "BothActivePendingClustersExist"),
            ],
        },
        "Running",
    ),
    (
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "one of two groups not ready",
        {},
        {"replicas": 2, "readyReplicas": 1, "conditions": [_cond("Progressing", "True", "GroupsProgressing")]},
        "Initializing",  # issue 15: Progressing=True is a scale-up or recovery in progress, not Degraded
    ),
    (
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "one of two groups not ready, no progress reported",
        {},
        {"replicas": 2, "readyReplicas": 1},
        "Degraded",
    ),
    (
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "rolling update",
        {},
        {
            "replicas": 2,
            "readyReplicas": 1,
            "conditions": [
                _cond("UpdateInProgress", "True", "GroupsUpdating"),
                _cond("Progressing", "True", "GroupsProgressing"),
            ],
        },
        "Initializing",  # issue 15: a rollout in progress with fewer ready groups than desired
    ),
    (
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "rolling update with a surge group, every desired group ready",
        {},
        {
            "replicas": 3,
            "readyReplicas": 2,
            "conditions": [
                _cond("UpdateInProgress", "True", "GroupsUpdating"),
                _cond("Progressing", "True", "GroupsProgressing"),
            ],
        },
        "Running",
    ),
]


@pytest.mark.parametrize(
    ("slug", "spec_patch", "status", "phase"),
    [pytest.param(slug, spec, status, phase, id=f"{slug}: {what}") for slug, what, spec, status, phase in FLOWS],
)
def test_the_definition_reads_each_state_its_controller_writes(
    slug: str, spec_patch: dict[str, Any], status: dict[str, Any] | None, phase: str
) -> None:
    obj = _workload(slug)
    obj["spec"] = _merge(obj["spec"], spec_patch)
    if status is None:
        obj.pop("status", None)
    else:
        obj["status"] = status
    assert _workload_class()(_definition(slug), obj).status.phase == phase


# --- pod attribution --------------------------------------------------------------------------------------

# component -> instance id -> pods, for every fixture; the pods no component claims; LWS replica keys.
ATTRIBUTION: dict[str, dict[str, dict[str, int]]] = {
    "core-pod-v1": {"pod": {"": 1}},
    "apps-deployment-v1": {"deployment": {"": 3}},
    "apps-statefulset-v1": {"statefulset": {"": 3}},
    "batch-job-v1": {"job": {"": 2}},
    "batch-cronjob-v1": {"cronjob": {"": 1}},
    "jobset-x-k8s-io-jobset-v1alpha2": {"replicatedjob": {"driver": 1, "workers": 8}},
    "kubeflow-org-pytorchjob-v1": {"master": {"": 1}, "worker": {"": 4}},
    "kubeflow-org-mpijob-v2beta1": {"launcher": {"": 1}, "worker": {"": 2}},
    "ray-io-raycluster-v1": {"head": {"": 1}, "worker": {"gpu-workers": 2, "cpu-workers": 1}},
    "ray-io-rayjob-v1": {"head": {"": 1}, "worker": {"gpu": 2}},
    "ray-io-rayservice-v1": {"head": {"": 1}, "worker": {"gpu": 2}},
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": {"leader": {"": 2}, "worker": {"": 6}},
}
UNCLAIMED: dict[str, list[str]] = {"ray-io-rayjob-v1": ["batch-infer-04598"]}  # the submitter Job's pod


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_pods_are_attributed_to_their_components_and_instances(slug: str) -> None:
    from workload_map.pods import attribute

    workload = _workload_class()(_definition(slug), _workload(slug))
    result = attribute(workload.resolve(), _read(slug, "pods.yaml"), _read(slug, "owners.yaml"))
    counts = {
        component: {instance: len(pods) for instance, pods in instances.items()}
        for component, instances in result.by_component().items()
    }
    assert counts == ATTRIBUTION[slug]
    assert [pod.name for pod in result.unclaimed] == UNCLAIMED.get(slug, [])
    assert result.foreign == 0


def test_lws_pods_are_split_into_their_groups_by_group_index() -> None:
    from workload_map.pods import attribute

    slug = "leaderworkerset-x-k8s-io-leaderworkerset-v1"
    workload = _workload_class()(_definition(slug), _workload(slug))
    result = attribute(workload.resolve(), _read(slug, "pods.yaml"), _read(slug, "owners.yaml"))
    groups: dict[str, list[str]] = {}
    for pod in result.claimed:
        groups.setdefault(str(pod.replica), []).append(f"{pod.component}:{pod.name}")
    assert sorted(groups) == ["0", "1"]
    assert sorted(groups["1"]) == [
        "leader:vllm-405b-1",
        "worker:vllm-405b-1-1",
        "worker:vllm-405b-1-2",
        "worker:vllm-405b-1-3",
    ]
