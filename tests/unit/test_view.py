"""The rolled-up view (issue 6): desired/current/ready, requests x replicas, pods, unclaimed pods, JSON.

Test design: each test builds a workload from tests/fixtures/view through its catalog definition (or the local
Fleet definition), adds the pods its operator would create, and checks the figures a user reads in `wmap describe`:
GPU totals, pod counts, readiness, reasons, and the JSON document front ends consume.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from tests.fixtures import view as fx
from tests.unit.test_attribution import lws_pods
from workload_map.model import karta_from_dict, to_dict
from workload_map.pods import attribute
from workload_map.resolve import Workload
from workload_map.view import SCHEMA_VERSION, ComponentView, WorkloadView, build_view


def pytorchjob_view(*, worker_reason: str | None = None, extra: Sequence[dict[str, Any]] = ()) -> WorkloadView:
    job = fx.workload("pytorchjob")
    pods = [
        fx.pod(
            "llama-finetune-master-0",
            namespace="ml-team",
            owned_by=job,
            labels={"training.kubeflow.org/replica-type": "master"},
            containers=[fx.gpu_container(1)],
            node="node-01",
        )
    ]
    for index in range(4):
        pods.append(
            fx.pod(
                f"llama-finetune-worker-{index}",
                namespace="ml-team",
                owned_by=job,
                labels={"training.kubeflow.org/replica-type": "worker"},
                containers=[fx.gpu_container(8)],
                node=f"node-0{index + 2}",
                reason=worker_reason if index == 3 else None,
            )
        )
    resolution = Workload(fx.catalog("kubeflow-org-pytorchjob-v1"), job).resolve()
    return build_view(resolution, attribute(resolution, [*pods, *extra]), origin="catalog")


def node(view: WorkloadView, component: str, instance: str | None = None) -> ComponentView:
    found = view.find(component, instance)
    assert found is not None, f"{component}/{instance} not in {[n.name for _, n in view.walk()]}"
    return found


# --- the acceptance figures --------------------------------------------------------------------------------------


def test_pytorchjob_with_one_master_and_four_eight_gpu_workers_totals_33_gpus_and_5_pods() -> None:
    view = pytorchjob_view(worker_reason="Unschedulable")
    assert view.resources.gpus == 33
    assert (view.replicas.desired, view.replicas.current, view.replicas.ready) == (5, 5, 4)
    assert [component.name for component in view.components] == ["master", "worker"]
    worker = node(view, "worker")
    assert (worker.replicas.desired, worker.replicas.current, worker.replicas.ready) == (4, 4, 3)
    assert worker.resources.gpus == 32 and worker.resources.cpu_millis == 16000
    assert worker.resources.memory_bytes == 4 * 16 * 2**30
    assert worker.nodes == ("node-02", "node-03", "node-04")  # the unscheduled pod has no node
    pending = worker.pods[-1]
    assert (pending.name, pending.phase, pending.ready, pending.node, pending.reason) == (
        "llama-finetune-worker-3",
        "Pending",
        False,
        None,
        "Unschedulable",
    )
    assert pending.resources.gpus == 8
    assert view.phase == "Running" and view.definition == "kubeflow-org-pytorchjob-v1"


def test_deployment_of_three_with_a_two_gpu_limit_and_no_request_totals_six() -> None:
    view = build_view(Workload(fx.catalog("apps-deployment-v1"), fx.workload("deployment-gpu-limit")).resolve())
    assert view.resources.gpus == 6
    (deployment,) = view.components
    assert deployment.name == "deployment" and deployment.replicas.desired == 3  # the root bears the pods


def test_pod_level_cpu_overhead_and_a_container_give_4200m_for_two_replicas() -> None:
    view = build_view(Workload(fx.catalog("apps-deployment-v1"), fx.workload("deployment-pod-level")).resolve())
    assert view.resources.cpu_millis == 4200
    assert view.resources.gpus == 2
    assert view.resources.to_dict()["requests"]["cpu"] == "4200m"


def test_an_init_container_with_4_gpus_before_a_main_container_with_2_counts_4() -> None:
    view = build_view(Workload(fx.catalog("batch-job-v1"), fx.workload("job-init-gpus")).resolve())
    assert view.resources.gpus == 4


def test_lws_of_two_groups_of_four_with_eight_gpus_per_pod_is_8_pods_and_64_gpus() -> None:
    obj = fx.workload("leaderworkerset")
    pods, owners = lws_pods(obj)
    resolution = Workload(fx.catalog("leaderworkerset-x-k8s-io-leaderworkerset-v1"), obj).resolve()
    view = build_view(resolution, attribute(resolution, pods, owners))
    assert view.replicas.desired == 8 and view.replicas.current == 8
    assert view.resources.gpus == 64
    group = node(view, "group")
    assert group.scale is not None and group.scale.replicas == 2  # 2 groups, declared once
    assert group.grouping and group.own_replicas.desired == 0  # not counted again on top of its children
    assert node(view, "leader").replicas.desired == 2  # 1 per group
    assert node(view, "worker").replicas.desired == 6  # 3 per group
    assert sorted({pod.replica or "" for pod in node(view, "worker").pods}) == ["0", "1"]


def test_mig_slices_and_other_accelerators_are_shown_per_name_never_as_gpus() -> None:
    view = build_view(Workload(fx.catalog("apps-deployment-v1"), fx.workload("deployment-mig")).resolve())
    assert view.resources.gpus == 0
    assert dict(view.resources.accelerators) == {"aws.amazon.com/neuroncore": 6, "nvidia.com/mig-1g.5gb": 3}
    assert view.resources.to_dict()["requests"]["nvidia.com/mig-1g.5gb"] == "3"


def test_configured_gpu_names_count_as_gpus() -> None:
    view = build_view(
        Workload(fx.catalog("apps-deployment-v1"), fx.workload("deployment-mig")).resolve(),
        gpu_resource_names=["nvidia.com/mig-1g.5gb"],
    )
    assert view.resources.gpus == 3
    assert dict(view.resources.accelerators) == {"aws.amazon.com/neuroncore": 6}


def test_an_owned_pod_no_component_claims_is_listed_as_unclaimed() -> None:
    job = fx.workload("pytorchjob")
    debug = fx.pod("llama-finetune-debug", namespace="ml-team", owned_by=job, containers=[fx.gpu_container(1)])
    view = pytorchjob_view(extra=[debug])
    assert [pod.name for pod in view.unclaimed_pods] == ["llama-finetune-debug"]
    assert view.replicas.current == 5  # not counted in any component
    assert view.resources.gpus == 33  # totals come from the spec
    assert view.to_dict()["unclaimedPods"][0]["resources"]["gpus"] == 1


def test_pods_of_another_workload_of_the_same_type_stay_out_of_the_view() -> None:
    other = fx.workload("pytorchjob")
    other["metadata"]["uid"] = fx.uid_for("another-job")
    stranger = fx.pod(
        "other-master-0", namespace="ml-team", owned_by=other, labels={"training.kubeflow.org/replica-type": "master"}
    )
    view = pytorchjob_view(extra=[stranger])
    assert "other-master-0" not in [pod.name for pod in view.pods]
    assert not view.unclaimed_pods
    assert node(view, "master").replicas.current == 1


# --- pods -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "shown"),
    [
        ("Unschedulable", "Unschedulable"),
        ("ImagePullBackOff", "ImagePullBackOff"),
        ("CrashLoopBackOff", "CrashLoopBackOff"),
        ("Evicted", "Evicted"),
        (None, None),
    ],
)
def test_a_pod_that_is_not_ready_says_why(reason: str | None, shown: str | None) -> None:
    view = pytorchjob_view(worker_reason=reason)
    pod = node(view, "worker").pods[-1]
    assert pod.reason == shown
    assert pod.unhealthy is (reason is not None)


def test_a_completed_pod_reads_pod_completed_and_is_not_unhealthy() -> None:
    job = fx.workload("job-init-gpus")
    done = fx.pod("warmup-abcde", namespace="ml-team", owned_by=job, phase="Succeeded", ready=False)
    done["status"]["conditions"][-1]["reason"] = "PodCompleted"
    resolution = Workload(fx.catalog("batch-job-v1"), job).resolve()
    view = build_view(resolution, attribute(resolution, [done]))
    (pod,) = view.pods
    assert (pod.phase, pod.ready, pod.reason, pod.unhealthy) == ("Succeeded", False, "PodCompleted", False)


def test_pods_are_listed_by_name_and_a_ready_pod_has_no_reason() -> None:
    view = pytorchjob_view()
    assert [pod.name for pod in node(view, "worker").pods] == [f"llama-finetune-worker-{i}" for i in range(4)]
    assert all(pod.reason is None and pod.ready for pod in view.pods)


# --- the tree ---------------------------------------------------------------------------------------------------


def fleet_view(pods: list[dict[str, Any]] | None = None) -> WorkloadView:
    resolution = Workload(fx.local_definition("fleet"), fx.workload("fleet")).resolve()
    return build_view(resolution, attribute(resolution, pods) if pods is not None else None)


def fleet_pods() -> list[dict[str, Any]]:
    fleet = fx.workload("fleet")
    pods = []
    for rack in range(2):
        for role, count, gpus in (("gpu", 2, 4), ("cpu", 1, 0)):
            for index in range(count):
                pods.append(
                    fx.pod(
                        f"{role}-{rack}-{index}",
                        namespace="lab",
                        owned_by=fleet,
                        labels={"example.com/role": role, "example.com/rack": str(rack)},
                        containers=[fx.gpu_container(gpus)] if gpus else None,
                        node=f"rack{rack}-{role}-{index}",
                    )
                )
    monitor = fx.pod(
        "monitor-0",
        namespace="lab",
        owned_by=fleet,
        labels={"example.com/part": "monitor"},
        containers=[{"name": "agent", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}],
    )
    return [*pods, monitor]


def test_a_child_counts_per_replica_of_its_parent_and_multi_instance_nodes_sum_up() -> None:
    view = fleet_view(fleet_pods())
    rack = node(view, "rack")
    assert rack.scale is not None and rack.scale.replicas == 2
    server = node(view, "server")
    assert [child.name for child in server.children] == ["cpu", "gpu"]  # one node per instance, by key
    assert node(view, "server", "gpu").replicas.desired == 4  # 2 per rack x 2 racks
    assert node(view, "server", "cpu").replicas.desired == 2
    assert server.replicas.desired == 6 and server.resources.gpus == 16
    assert rack.replicas.desired == 6 and rack.resources.gpus == 16
    assert node(view, "server", "gpu").nodes == ("rack0-gpu-0", "rack0-gpu-1", "rack1-gpu-0", "rack1-gpu-1")


def test_a_component_without_a_pod_spec_counts_the_pods_it_claims() -> None:
    view = fleet_view(fleet_pods())
    monitor = node(view, "monitor")
    assert (monitor.replicas.desired, monitor.replicas.current) == (1, 1)
    assert monitor.resources.cpu_millis == 250
    assert view.resources.cpu_millis == 4 * 8000 + 2 * 2000 + 250


def test_plumbing_is_dropped_and_a_pod_bearing_component_scaled_to_zero_stays() -> None:
    view = fleet_view(fleet_pods())
    names = [n.component for _, n in view.walk()]
    assert "plumbing" not in names
    idle = node(view, "idle")
    assert (idle.replicas.desired, idle.replicas.current, idle.replicas.ready) == (0, 0, 0)
    assert idle.resources.empty


def test_file_mode_has_structure_and_requests_but_no_live_fields() -> None:
    view = fleet_view(None)
    assert view.file_mode
    assert (view.replicas.desired, view.replicas.current, view.replicas.ready) == (7, None, None)  # + helper
    assert view.resources.gpus == 16
    assert not view.pods and not view.unclaimed_pods
    assert "monitor" not in [n.component for _, n in view.walk()]  # no spec, no pods: nothing to show offline


def test_phase_lists_the_primary_phase_first() -> None:
    view = fleet_view(None)
    assert view.phase == "Degraded"
    assert view.phases == ("Degraded", "Running")


def test_a_broken_component_path_is_an_error_and_the_rest_still_shows() -> None:
    definition = to_dict(fx.local_definition("fleet"))
    server = definition["spec"]["structureDefinition"]["childComponents"][1]
    server["scaleDefinition"]["replicasPath"] = ".spec.roles[] | .name"  # strings, not counts
    resolution = Workload(karta_from_dict(definition), fx.workload("fleet")).resolve()
    view = build_view(resolution, attribute(resolution, fleet_pods()))
    assert [(error.component, error.field) for error in view.errors] == [("server", "scaleDefinition.replicasPath")]
    assert node(view, "monitor").replicas.current == 1
    assert node(view, "server", "gpu").replicas.current == 4  # pods still placed
    assert view.to_dict()["errors"][0]["component"] == "server"


def test_a_malformed_quantity_in_the_spec_is_an_error_not_a_crash() -> None:
    obj = fx.workload("deployment-gpu-limit")
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "two"
    view = build_view(Workload(fx.catalog("apps-deployment-v1"), obj).resolve())
    assert view.resources.gpus == 0
    assert "invalid quantity" in view.errors[0].message
    assert view.errors[0].field == "specDefinition.podTemplateSpecPath"


# --- JSON ---------------------------------------------------------------------------------------------------------


def test_json_is_a_superset_of_upstreams_describe_view() -> None:
    data = pytorchjob_view(worker_reason="Unschedulable").to_dict()
    json.dumps(data)  # plain JSON types only
    assert data["schemaVersion"] == SCHEMA_VERSION == "workloadmap.io/view/v1"
    upstream = {"name", "namespace", "kind", "apiVersion", "createdAt", "definition", "origin", "phases", "fileMode"}
    assert upstream <= set(data)
    assert (data["name"], data["namespace"], data["kind"], data["apiVersion"]) == (
        "llama-finetune",
        "ml-team",
        "PyTorchJob",
        "kubeflow.org/v1",
    )
    assert data["createdAt"] == "2026-10-01T08:00:00Z" and data["fileMode"] is False
    assert data["resources"]["gpus"] == 33 and data["resources"]["cpuMillis"] == 20000
    assert data["resources"]["memoryBytes"] == 85899345920
    worker = data["components"][1]
    assert worker["name"] == "worker" and worker["replicas"] == {"desired": 4, "current": 4, "ready": 3}
    assert worker["kind"] == "Pod" and worker["nodes"] == ["node-02", "node-03", "node-04"]
    pending = worker["pods"][3]
    assert pending["node"] is None and pending["reason"] == "Unschedulable"
    assert "reason" not in worker["pods"][0]  # omitted when empty
    assert set(worker["pods"][0]["resources"]) >= {"gpus", "cpuMillis", "memoryBytes"}
    assert "children" not in worker and "ownResources" not in worker


def test_file_mode_json_has_the_same_keys_with_empty_live_fields() -> None:
    live = pytorchjob_view().to_dict()
    offline = build_view(
        Workload(fx.catalog("kubeflow-org-pytorchjob-v1"), fx.workload("pytorchjob")).resolve()
    ).to_dict()
    assert set(live) == set(offline)
    assert offline["fileMode"] is True
    assert offline["components"][1]["replicas"] == {"desired": 4, "current": None, "ready": None}
    assert "pods" not in offline["components"][1]


def test_yaml_of_the_view_decodes_equal_to_its_json() -> None:
    data = fleet_view(fleet_pods()).to_dict()
    assert yaml.safe_load(yaml.safe_dump(data)) == json.loads(json.dumps(data))


def test_instance_nodes_carry_their_component_name() -> None:
    data = fleet_view(fleet_pods()).to_dict()
    rack = next(component for component in data["components"] if component["name"] == "rack")
    server = rack["children"][0]
    assert "kind" in server and server["name"] == "server"
    gpu = server["children"][1]
    assert (gpu["name"], gpu["component"], gpu["instance"]) == ("gpu", "server", "gpu")
    assert rack["ownReplicas"]["desired"] == 0 and rack["replicas"]["desired"] == 6
