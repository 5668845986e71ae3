"""The Flux Operator MiniCluster definition (flux-framework-org-minicluster-v1alpha2) against its fixtures.

The fixture (tests/fixtures/catalog/flux-framework-org-minicluster-v1alpha2/) is a MiniCluster of four GPU brokers
with the status the operator writes, the indexed Job it makes (owners.yaml) and the Job's pods; the `services`
variant adds a registry in spec.services, whose pod the operator creates beside the Job. What is checked is what the
operator builds (flux-framework/flux-operator 0d75cef8, controllers/flux/job.go, containers.go, pods.go): the pod
template, the replica counts and their bounds, the phase read from the MiniCluster and the Job it follows, where
each pod lands, and the gang the brokers form.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.gang import export, plan
from workload_map.model import Karta
from workload_map.pods import attribute
from workload_map.resolve import Scale, Workload
from workload_map.resolve.references import follow, references_of
from workload_map.view import build_view

SLUG = "flux-framework-org-minicluster-v1alpha2"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / SLUG
SERVICES = FIXTURE / "variants" / "services"
GIB = 1024**3


def _read(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@cache
def _karta() -> Karta:
    found = builtin_registry().by_name(SLUG)
    assert found is not None
    return found.karta


def _minicluster(directory: Path = FIXTURE) -> dict[str, Any]:
    obj: dict[str, Any] = _read(directory / "workload.yaml")
    return obj


def _job(directory: Path = FIXTURE) -> dict[str, Any]:
    (job,) = _read(directory / "owners.yaml")["items"]
    assert isinstance(job, dict)
    return job


def _pods(directory: Path = FIXTURE) -> list[dict[str, Any]]:
    pods: list[dict[str, Any]] = _read(directory / "pods.yaml")["items"]
    return pods


def _workload(obj: dict[str, Any], job: dict[str, Any] | None = None) -> Workload:
    """The MiniCluster as the CLI resolves it: with the Job it names followed (resolve.references.follow), when
    the Job is given."""
    related = [job] if job is not None else []
    return Workload(_karta(), follow(_karta(), obj, related).object, related=related)


def _with_job_status(status: dict[str, Any] | None, *, suspend: bool = False) -> dict[str, Any]:
    job = _job()
    job["spec"]["suspend"] = suspend
    if status is None:
        job.pop("status", None)
    else:
        job["status"] = status
    return job


def _broker_template(obj: dict[str, Any]) -> dict[str, Any]:
    template = _workload(obj).resolve().component("broker").instances[""].pod_template
    assert template is not None
    return template


def test_the_fixture_gets_the_minicluster_definition_by_its_kind() -> None:
    resolved = builtin_registry().for_object(_minicluster())
    assert resolved is not None and resolved.exact
    assert resolved.karta.name == SLUG


def test_the_broker_template_is_the_one_the_operator_builds_from_the_spec() -> None:
    template = _broker_template(_minicluster())
    metadata, spec = template["metadata"], template["spec"]
    assert metadata["labels"] == {
        "selector": "lammps",
        "namespace": "hpc",
        "app": "flux-operator",
        "app.kubernetes.io/name": "lammps",
        "hpa-selector": "lammps",
    }
    # One container: it runs Flux (Validate sets runFlux), named as the MiniCluster, started by wait-0.sh.
    (container,) = spec["containers"]
    assert container["name"] == "lammps"
    assert container["command"] == ["/bin/bash", "/flux_operator/wait-0.sh"]
    assert container["image"] == "ghcr.io/converged-computing/metric-lammps-gpu:latest"
    assert container["resources"]["requests"] == {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"}
    # The flux view the operator always adds as the one init container.
    (init,) = spec["initContainers"]
    assert init["name"] == "flux-view"
    assert init["image"] == "ghcr.io/converged-computing/flux-view-rocky:tag-9"
    assert init["command"] == ["/bin/bash", "/flux_operator/flux-init.sh"]
    assert init["resources"] == {"requests": {"cpu": "100m", "memory": "128Mi"}}
    assert spec["subdomain"] == "lammps"
    assert spec["restartPolicy"] == "OnFailure"
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    anti = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert [term["podAffinityTerm"]["topologyKey"] for term in anti] == ["kubernetes.io/hostname"]
    assert "nodeAffinity" not in spec["affinity"]


def test_the_template_matches_the_pods_the_job_made() -> None:
    template = _broker_template(_minicluster())
    pod = _pods()[0]
    for key in (
        "subdomain",
        "restartPolicy",
        "nodeSelector",
        "affinity",
        "shareProcessNamespace",
        "setHostnameAsFQDN",
        "automountServiceAccountToken",
    ):
        assert template["spec"][key] == pod["spec"][key], key
    assert template["spec"]["affinity"] == _job()["spec"]["template"]["spec"]["affinity"]
    assert {key: pod["metadata"]["labels"][key] for key in template["metadata"]["labels"]} == template["metadata"][
        "labels"
    ]
    for ours, theirs in zip(
        template["spec"]["containers"] + template["spec"]["initContainers"],
        pod["spec"]["containers"] + pod["spec"]["initContainers"],
        strict=True,
    ):
        assert (ours["name"], ours["image"], ours["command"], ours["resources"]) == (
            theirs["name"],
            theirs["image"],
            theirs["command"],
            theirs["resources"],
        )


def test_only_the_flux_runner_is_named_as_the_minicluster_and_the_others_get_a_start_script() -> None:
    obj = _minicluster()
    obj["spec"]["containers"] = [
        {"name": "sidecar", "image": "example/sidecar:1", "ports": [8080], "environment": {"MODE": "watch"}},
        {"image": "example/app:1", "runFlux": True, "pullAlways": True},
        {"name": "raw", "image": "example/raw:1", "noWrapEntrypoint": True, "imagePullSecret": "regcred"},
    ]
    spec = _broker_template(obj)["spec"]
    sidecar, app, raw = spec["containers"]
    assert (sidecar["name"], sidecar["command"]) == ("sidecar", ["/bin/bash", "/flux_operator/start-0.sh"])
    assert sidecar["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert sidecar["env"] == [{"name": "MODE", "value": "watch"}]
    assert (app["name"], app["command"], app["imagePullPolicy"]) == (
        "lammps",
        ["/bin/bash", "/flux_operator/wait-1.sh"],
        "Always",
    )
    assert raw["name"] == "raw" and "command" not in raw
    assert spec["imagePullSecrets"] == [{"name": "regcred"}]


def test_disable_affinity_drops_the_affinity_and_node_affinity_becomes_required_terms() -> None:
    obj = _minicluster()
    obj["spec"]["pod"]["nodeAffinity"] = {"node.kubernetes.io/instance-type": ["p4d.24xlarge", "p5.48xlarge"]}
    required = _broker_template(obj)["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert required == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {
                        "key": "node.kubernetes.io/instance-type",
                        "operator": "In",
                        "values": ["p4d.24xlarge", "p5.48xlarge"],
                    }
                ]
            }
        ]
    }
    obj["spec"]["network"] = {"disableAffinity": True}
    assert "affinity" not in _broker_template(obj)["spec"]


def test_one_broker_requests_the_container_and_the_pod_overhead_spec_pod_resources_sets() -> None:
    instance = _workload(_minicluster()).resolve().component("broker").instances[""]
    assert instance.requests == {"cpu": Fraction(8), "memory": Fraction(32 * GIB), "nvidia.com/gpu": Fraction(1)}
    obj = _minicluster()
    obj["spec"]["pod"]["resources"] = {"cpu": "500m"}  # NewMiniClusterJob puts it in the pod's overhead
    with_overhead = _workload(obj).resolve().component("broker").instances[""].requests
    assert with_overhead is not None and with_overhead["cpu"] == Fraction(17, 2)


def test_replicas_are_the_size_bounded_by_the_quorum_and_the_maximum_size() -> None:
    obj = _minicluster()
    assert _workload(obj).component("broker").scales == {"": Scale(4, None, 6)}
    obj["spec"]["minSize"] = 2
    del obj["status"]
    # Before the operator wrote status.maximumSize: the larger of size and maxSize (Validate).
    assert _workload(obj).component("broker").scales == {"": Scale(4, 2, 6)}
    del obj["spec"]["maxSize"]
    assert _workload(obj).component("broker").scales == {"": Scale(4, 2, 4)}


def test_the_view_counts_the_brokers_and_their_gpus_cpus_and_memory() -> None:
    resolution = _workload(_minicluster(), _job()).resolve()
    view = build_view(resolution, attribute(resolution, _pods(), [_job()]), origin="catalog")
    assert (view.replicas.desired, view.replicas.current, view.replicas.ready) == (4, 4, 4)
    assert view.resources.gpus == 4
    assert view.resources.cpu_millis == 32_000
    assert view.resources.memory_bytes == 128 * GIB
    assert [node.component for node in view.components] == ["broker"]
    assert view.unclaimed_pods == ()


def test_the_services_pod_is_a_component_of_its_own_beside_the_brokers() -> None:
    obj, job = _minicluster(SERVICES), _job(SERVICES)
    resolution = _workload(obj, job).resolve()
    services = resolution.component("services").instances["services"]
    template = services.pod_template
    assert template is not None
    assert template["metadata"]["name"] == "registry-lammps-services"
    assert [c["name"] for c in template["spec"]["containers"]] == ["registry"]
    assert "initContainers" not in template["spec"]
    view = build_view(resolution, attribute(resolution, _pods(SERVICES), [job]), origin="catalog")
    assert (view.replicas.desired, view.resources.gpus, view.resources.cpu_millis) == (5, 4, 32_500)
    attribution = attribute(resolution, _pods(SERVICES), [job])
    placed = {pod.name: (pod.component, pod.instance, pod.replica) for pod in attribution.pods}
    assert placed["registry-lammps-services"] == ("services", "services", None)
    assert placed["registry-lammps-0-x7k2p"] == ("broker", "", "0")
    obj["spec"]["services"][0]["secrets"] = {"REGISTRY_TOKEN": {"name": "registry", "key": "token"}}
    with_secret = _workload(obj).resolve().component("services").instances["services"].pod_template
    assert with_secret is not None
    (container,) = with_secret["spec"]["containers"]
    assert container["env"] == [
        {"name": "REGISTRY_TOKEN", "valueFrom": {"secretKeyRef": {"name": "registry", "key": "token"}}}
    ]
    assert "command" not in container  # a service container keeps its image's entrypoint
    # Without spec.services there is no instance and no pod template.
    assert _workload(_minicluster()).resolve().component("services").instances == {}


def test_each_broker_pod_is_placed_by_its_completion_index_through_the_job() -> None:
    resolution = _workload(_minicluster()).resolve()
    attribution = attribute(resolution, _pods(), [_job()])
    assert attribution.foreign == 0 and list(attribution.unclaimed) == []
    assert sorted((pod.name, pod.component, pod.replica) for pod in attribution.pods) == [
        ("lammps-0-x7k2p", "broker", "0"),
        ("lammps-1-m4q9d", "broker", "1"),
        ("lammps-2-c8v3n", "broker", "2"),
        ("lammps-3-h2w6t", "broker", "3"),
    ]


@pytest.mark.parametrize(
    ("job", "phase", "reason"),
    [
        (None, "Running", "JobMiniClusterReady=True"),  # the Job not at hand (get, watch): the MiniCluster alone
        (_with_job_status({"active": 4, "ready": 0}), "Initializing", "JobMiniClusterReady=True"),
        (_with_job_status({"active": 4, "ready": 4}), "Running", "JobMiniClusterReady=True"),
        (_with_job_status({"active": 4, "ready": 3, "failed": 1}), "Degraded", None),
        (
            _with_job_status(
                {"succeeded": 4, "conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}]}
            ),
            "Completed",
            "Complete=True (CompletionsReached)",
        ),
        (
            _with_job_status(
                {"failed": 4, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}
            ),
            "Failed",
            "Failed=True (BackoffLimitExceeded)",
        ),
        (
            _with_job_status(
                {"active": 0, "conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended"}]},
                suspend=True,
            ),
            "Suspended",
            "Suspended=True (JobSuspended)",
        ),
        (_with_job_status({"active": 4, "ready": 4}, suspend=True), "Suspending", None),
    ],
    ids=["no-job", "pending", "running", "retrying", "succeeded", "failed", "held-by-kueue", "evicted"],
)
def test_the_phase_comes_from_the_conditions_and_the_job_the_operator_made(
    job: dict[str, Any] | None, phase: str, reason: str | None
) -> None:
    status = _workload(_minicluster(), copy.deepcopy(job) if job else None).status
    assert status.phase == phase, status.phases
    if reason is not None:
        assert status.reason is not None and status.reason.startswith(reason), status.reason


def test_the_conditions_read_are_the_miniclusters_then_its_jobs() -> None:
    job = _with_job_status({"conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}]})
    status = _workload(_minicluster(), job).status
    assert [condition.type for condition in status.conditions] == [
        "JobRequested",
        "JobWaitingForResources",
        "JobRunning",
        "JobMiniClusterReady",
        "JobFinished",
        "Complete",
    ]


def test_a_minicluster_just_created_or_still_creating_its_job_is_initializing() -> None:
    obj = _minicluster()
    del obj["status"]
    assert _workload(obj).status.phase == "Initializing"
    obj["status"] = {"conditions": [{"type": "JobRequested", "status": "True", "reason": "JobRequested"}]}
    assert _workload(obj).status.phase == "Initializing"


def test_a_manifest_not_yet_applied_names_no_job_to_follow() -> None:
    obj = _minicluster()
    wanted, problems = references_of(_karta(), obj)
    assert [(ref.api_version, ref.kind, ref.object_name, ref.namespace) for ref in wanted] == [
        ("batch/v1", "Job", "lammps", "hpc")
    ]
    assert problems == ()
    del obj["metadata"]["uid"]
    assert references_of(_karta(), obj) == ((), ())


def test_the_brokers_are_one_gang_requiring_the_quorum() -> None:
    resolution = _workload(_minicluster()).resolve()
    gang_plan = plan(resolution, _pods())
    (gang,) = gang_plan.gangs
    assert (gang.name, gang.min_member, gang.count) == ("lammps", 4, 4)
    assert gang.min_resources == {"cpu": Fraction(32), "memory": Fraction(128 * GIB), "nvidia.com/gpu": Fraction(4)}
    assert sorted(pod.name for pod in gang_plan.pods if pod.gang == "lammps") == sorted(
        pod["metadata"]["name"] for pod in _pods()
    )
    (pod_group,) = export(gang_plan, "kai", queue="hpc")
    assert pod_group["kind"] == "PodGroup" and pod_group["spec"]["minMember"] == 4
    assert pod_group["spec"]["queue"] == "hpc"


def test_min_size_lowers_the_gang_to_the_quorum_and_the_services_pod_joins_it() -> None:
    obj = _minicluster(SERVICES)
    obj["spec"]["minSize"] = 2
    (gang,) = plan(_workload(obj).resolve()).gangs
    assert (gang.min_member, gang.count) == (3, 5)
    assert {role.name: role.min_count for role in gang.roles} == {"broker": 2, "services-services": 1}


def test_the_kueue_export_asks_for_every_broker_of_the_gang() -> None:
    manifests = export(plan(_workload(_minicluster()).resolve()), "kueue", queue="hpc-queue")
    counts = [pod_set["count"] for doc in manifests for pod_set in doc.get("spec", {}).get("podSets", [])]
    assert sum(counts) == 4


def test_the_pod_grouper_files_the_brokers_under_the_minicluster_and_groups_them_once() -> None:
    """The controller's index (cluster.index) and grouping: the Job, owned by the MiniCluster, is an owner on the
    pods' chains, not a workload of its own (as KAI takes the MiniCluster as the top owner); the KAI objects are one
    PodGroup owned by the MiniCluster, and each unscheduled broker is linked to it."""
    from workload_map.cluster.index import WorkloadIndex
    from workload_map.cluster.owners import controller_of
    from workload_map.controller.grouping import grouping_for

    obj, job = _minicluster(), _job()
    pods = [copy.deepcopy(pod) for pod in _pods()]
    for pod in pods:
        del pod["spec"]["nodeName"]  # pending: the grouper links only pods not yet bound
    assert controller_of(job) is not None and controller_of(obj) is None
    index = WorkloadIndex()
    index.set_workload(obj)
    index.set_owner(job)
    for pod in pods:
        index.set_pod(pod)
    uid = obj["metadata"]["uid"]
    assert sorted(pod["metadata"]["name"] for pod in index.pods_of(uid)) == sorted(p["metadata"]["name"] for p in pods)
    grouping = grouping_for(_workload(obj).resolve(), index.pods_of(uid), "kai")
    (pod_group,) = grouping.objects
    assert pod_group["spec"]["minMember"] == 4
    assert [ref["kind"] for ref in pod_group["metadata"]["ownerReferences"]] == ["MiniCluster"]
    assert sorted(grouping.pod_patches) == sorted(f"hpc/{p['metadata']['name']}" for p in pods)
    assert grouping.unplaced == []
