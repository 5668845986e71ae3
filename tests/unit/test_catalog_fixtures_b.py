"""The built-in definitions for serving, NIM, Milvus, Dynamo, Grove and Sandbox against their fixtures.

Each fixture (tests/fixtures/catalog/<slug>/) is a mid-run workload with the status its operator writes and the pods
that operator creates, labelled as it labels them. A definition must resolve its fixture to the instances, scales and
primary phase a user of that framework expects, and its pod selectors must place every fixture pod in exactly one
pod-bearing component and instance, with as many pods per instance as the definition desires.

Everything goes through the real APIs: `Workload` for the definition, `workload_map.pods.attribute` for the pods
(owner chains through the fixture's intermediate owners, then the definition's pod selectors).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.model import Karta
from workload_map.pods import attribute
from workload_map.resolve import Scale, Workload
from workload_map.validation import validate

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "catalog"

# slug -> (primary phase, {component: {instance id: (replicas, min, max)}}, {(leaf component, instance): pods})
EXPECTED: dict[str, tuple[str, dict[str, dict[str, tuple[int | None, int | None, int | None]]], dict[Any, int]]] = {
    "serving-kserve-io-inferenceservice-v1beta1": (
        "Running",
        {"predictor": {"": (2, 2, 4)}, "predictor-worker": {}, "transformer": {"transformer": (1, 1, None)}},
        {("predictor", ""): 2, ("transformer", "transformer"): 1},
    ),
    "serving-kserve-io-llminferenceservice-v1alpha2": (
        "Running",
        {
            "workload": {"": (2, None, None)},
            "workload-main": {"": (1, None, None)},
            "workload-worker": {},
            "prefill": {"prefill": (1, None, None)},
            "prefill-main": {"prefill": (1, None, None)},
            "scheduler": {"scheduler": (1, None, None)},
        },
        {("workload-main", ""): 2, ("prefill-main", "prefill"): 1, ("scheduler", "scheduler"): 1},
    ),
    "serving-kserve-io-llminferenceservice-v1alpha1": (
        "Running",
        {"workload": {"": (1, None, None)}, "workload-worker": {"worker": (1, None, None)}, "prefill": {}},
        {("workload-main", ""): 1, ("workload-worker", "worker"): 1},
    ),
    "serving-knative-dev-service-v1": ("Running", {"revision": {"": (1, 1, 5)}}, {("revision", ""): 2}),
    "apps-nvidia-com-nimservice-v1alpha1": ("Running", {"nimservice": {"": (2, None, None)}}, {("nimservice", ""): 2}),
    "apps-nvidia-com-nimcache-v1alpha1": ("Running", {"caching-job": {"": (1, None, None)}}, {("caching-job", ""): 1}),
    "milvus-io-milvus-v1beta1": (
        "Running",
        {
            "component": {
                "mixcoord": (1, None, None),
                "proxy": (2, None, None),
                "datanode": (1, None, None),
                "querynode": (2, 2, 6),
                "indexnode": (1, None, None),
            }
        },
        {
            ("component", "mixcoord"): 1,
            ("component", "proxy"): 2,
            ("component", "datanode"): 1,
            ("component", "querynode"): 2,
            ("component", "indexnode"): 1,
        },
    ),
    "nvidia-com-dynamographdeployment-v1alpha1": (
        "Running",
        {
            "service": {
                "Frontend": (1, None, None),
                "VllmDecodeWorker": (2, None, None),
                "VllmPrefillWorker": (2, None, None),
            }
        },
        {("service", "Frontend"): 1, ("service", "VllmDecodeWorker"): 2, ("service", "VllmPrefillWorker"): 2},
    ),
    "nvidia-com-dynamographdeployment-v1beta1": (
        "Running",
        {"component": {"frontend": (1, None, None), "worker": (3, 2, None)}},
        {("component", "frontend"): 1, ("component", "worker"): 3},
    ),
    "grove-io-podcliqueset-v1alpha1": (
        "Running",
        {
            "replica": {"": (1, None, None)},
            "clique": {"frontend": (1, 1, None), "decode": (2, 1, 4), "pleader": (2, 1, None), "pworker": (2, 1, None)},
        },
        {("clique", "frontend"): 1, ("clique", "decode"): 2, ("clique", "pleader"): 2, ("clique", "pworker"): 2},
    ),
    "agents-x-k8s-io-sandbox-v1beta1": ("Running", {"agent": {"": (1, None, None)}}, {("agent", ""): 1}),
    "agents-x-k8s-io-sandbox-v1alpha1": ("Suspended", {"agent": {"": (0, None, None)}}, {}),
}


def _read(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@cache
def _registry() -> DefinitionRegistry:
    return DefinitionRegistry([("catalog", builtin_definitions())])


@cache
def _karta(slug: str) -> Karta:
    found = _registry().by_name(slug)
    assert found is not None, f"no built-in definition {slug}"
    return found.karta


def _workload(slug: str) -> Workload:
    """A fresh workload for tests that write."""
    return Workload(_karta(slug), _read(FIXTURES / slug / "workload.yaml"))


@cache
def _resolved(slug: str) -> Workload:
    """One shared workload per fixture for the read-only tests (reads are cached inside it)."""
    return _workload(slug)


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_fixture_resolves_to_the_phase_the_operator_reports(slug: str) -> None:
    assert _resolved(slug).status.phase == EXPECTED[slug][0]


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_fixture_resolves_to_the_expected_instances_and_scales(slug: str) -> None:
    workload = _resolved(slug)
    for name, instances in EXPECTED[slug][1].items():
        component = workload.component(name)
        assert component.instance_ids == list(instances), name
        scales = component.scales or {}
        want = {iid: Scale(*numbers) for iid, numbers in instances.items()}
        assert scales == want, name


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_every_fixture_pod_is_owned_and_lands_in_one_component_instance_as_many_as_desired(slug: str) -> None:
    pods = _read(FIXTURES / slug / "pods.yaml")["items"]
    owners_file = FIXTURES / slug / "owners.yaml"
    owners = _read(owners_file)["items"] if owners_file.exists() else []
    attribution = attribute(_resolved(slug).resolve(), pods, owners)
    assert attribution.foreign == 0, "a fixture pod's owner chain does not reach the workload"
    assert [(pod.name, pod.errors) for pod in attribution.unclaimed] == []
    counts = Counter((pod.component, pod.instance) for pod in attribution.pods)
    assert dict(counts) == EXPECTED[slug][2]


def test_inferenceservice_predictor_reads_the_model_container_and_its_gpu() -> None:
    specs = _resolved("serving-kserve-io-inferenceservice-v1beta1").component("predictor").fragmented_pod_specs
    assert specs is not None
    container = specs[""].container or {}
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert container["args"] == ["--max_model_len=8192"]


def test_nimcache_resources_are_one_list_the_caching_job_requests_and_is_limited_to() -> None:
    # issue 15: NIMCache reads spec.resources through a writable path plus the resources-shape annotation; since
    # v1.0.0 the operator gives the caching Job cpu and memory as requests and limits, and no GPU (`gpus` was dropped).
    component = _resolved("apps-nvidia-com-nimcache-v1alpha1").resolve().component("caching-job")
    instance = component.instance("")
    assert instance is not None and instance.fragmented_pod_spec is not None
    assert instance.fragmented_pod_spec.resources == {"cpu": "4", "memory": "16Gi"}
    template = instance.pod_template
    assert template is not None
    resources = {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"cpu": "4", "memory": "16Gi"}}
    assert template["spec"]["containers"][0]["resources"] == resources
    assert instance.requests == {"cpu": 4, "memory": 16 * 2**30}


def test_a_pre_1_0_nimcache_gpu_count_is_counted_as_nvidia_gpus() -> None:
    obj = _read(FIXTURES / "apps-nvidia-com-nimcache-v1alpha1" / "workload.yaml")
    obj["spec"]["resources"]["gpus"] = 1
    instance = (
        Workload(_karta("apps-nvidia-com-nimcache-v1alpha1"), obj).resolve().component("caching-job").instance("")
    )
    assert instance is not None and instance.requests is not None
    assert instance.requests["nvidia.com/gpu"] == 1


def test_milvus_component_without_own_resources_reads_the_shared_ones() -> None:
    specs = _resolved("milvus-io-milvus-v1beta1").component("component").fragmented_pod_specs
    assert specs is not None
    assert specs["datanode"].resources == {"requests": {"cpu": "1", "memory": "4Gi"}}
    assert (specs["querynode"].resources or {})["limits"] == {"nvidia.com/gpu": "1"}
    assert specs["proxy"].image == "milvusdb/milvus:v2.5.4"


def test_suspending_a_running_sandbox_writes_the_operating_mode_and_reads_suspending() -> None:
    workload = _workload("agents-x-k8s-io-sandbox-v1beta1")
    workload.suspend()
    assert workload.merge_patch() == {"spec": {"operatingMode": "Suspended"}}
    assert Workload(workload.definition, workload.to_object()).status.phase == "Suspending"


def test_resuming_a_suspended_v1alpha1_sandbox_sets_one_replica_and_reads_resuming() -> None:
    workload = _workload("agents-x-k8s-io-sandbox-v1alpha1")
    workload.resume()
    assert workload.merge_patch() == {"spec": {"replicas": 1}}
    assert Workload(workload.definition, workload.to_object()).status.phase == "Resuming"


@pytest.mark.parametrize(
    "slug", ["serving-kserve-io-inferenceservice-v1beta1", "serving-kserve-io-llminferenceservice-v1alpha2"]
)
def test_suspending_a_kserve_service_sets_the_stop_annotation_and_reads_suspending(slug: str) -> None:
    workload = _workload(slug)
    workload.suspend()
    assert workload.merge_patch() == {"metadata": {"annotations": {"serving.kserve.io/stop": "true"}}}
    assert Workload(workload.definition, workload.to_object()).status.phase == "Suspending"
    workload.resume()
    assert workload.merge_patch() == {"metadata": {"annotations": {"serving.kserve.io/stop": "false"}}}


def test_stopped_inferenceservice_with_the_annotation_cleared_reads_resuming() -> None:
    obj = _read(FIXTURES / "serving-kserve-io-inferenceservice-v1beta1" / "workload.yaml")
    obj["metadata"]["annotations"]["serving.kserve.io/stop"] = "false"
    obj["status"]["conditions"] = [
        {"type": "PredictorReady", "status": "False", "reason": "Stopped"},
        {"type": "Stopped", "status": "True"},
    ]
    workload = Workload(_karta("serving-kserve-io-inferenceservice-v1beta1"), obj)
    assert workload.status.phase == "Resuming"
    obj["metadata"]["annotations"]["serving.kserve.io/stop"] = "true"
    assert Workload(workload.definition, obj).status.phase == "Suspended"


def test_sandbox_still_marked_suspended_after_resume_is_resuming_not_running() -> None:
    # karta-spec 15.9: Ready=True + Suspended=True with operatingMode Running -> [Resuming] only.
    obj = _read(FIXTURES / "agents-x-k8s-io-sandbox-v1beta1" / "workload.yaml")
    obj["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "reason": "DependenciesReady"},
        {"type": "Suspended", "status": "True", "reason": "PodTerminated"},
    ]
    assert Workload(_karta("agents-x-k8s-io-sandbox-v1beta1"), obj).status.phases == ("Resuming",)
    obj["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert Workload(_karta("agents-x-k8s-io-sandbox-v1beta1"), obj).status.phases == ("Running",)


@pytest.mark.parametrize(
    ("state", "available", "phase"),
    [("pending", 0, "Initializing"), ("pending", 1, "Degraded"), ("failed", 1, "Failed"), ("successful", 1, "Running")],
)
def test_dynamo_graph_state_and_service_availability_give_the_phase(state: str, available: int, phase: str) -> None:
    obj = _read(FIXTURES / "nvidia-com-dynamographdeployment-v1alpha1" / "workload.yaml")
    obj["status"]["state"] = state
    obj["status"]["conditions"] = [{"type": "Ready", "status": "True" if state == "successful" else "False"}]
    for service in obj["status"]["services"].values():
        service["availableReplicas"] = available
        service["readyReplicas"] = available
    assert Workload(_karta("nvidia-com-dynamographdeployment-v1alpha1"), obj).status.phase == phase


def test_grove_set_with_some_replicas_available_is_degraded() -> None:
    obj = _read(FIXTURES / "grove-io-podcliqueset-v1alpha1" / "workload.yaml")
    obj["spec"]["replicas"] = 3
    obj["status"]["availableReplicas"] = 2
    assert Workload(_karta("grove-io-podcliqueset-v1alpha1"), obj).status.phase == "Degraded"


def test_milvus_cluster_without_mixcoord_runs_the_four_coordinators() -> None:
    obj = _read(FIXTURES / "milvus-io-milvus-v1beta1" / "workload.yaml")
    del obj["spec"]["components"]["mixCoord"]
    ids = Workload(_karta("milvus-io-milvus-v1beta1"), obj).component("component").instance_ids
    assert ids[:4] == ["rootcoord", "datacoord", "querycoord", "indexcoord"]


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_definition_validates_without_errors_or_warnings(slug: str) -> None:
    assert [str(finding) for finding in validate(_karta(slug))] == []


@pytest.mark.parametrize(("pipeline", "pods"), [(2, (1, 1)), (4, (1, 3)), (1, (1, 0))])
def test_a_multi_node_nimservice_is_a_leader_per_group_plus_pipeline_minus_one_workers(
    pipeline: int, pods: tuple[int, int]
) -> None:
    # issue 15: the operator runs spec.replicas LeaderWorkerSet groups of `pipeline` pods when pipeline > 1
    # (backendType defaults to lws); pipeline 1 is a plain Deployment of spec.replicas pods.
    obj = _read(FIXTURES / "apps-nvidia-com-nimservice-v1alpha1" / "variants" / "multinode" / "workload.yaml")
    obj["spec"]["multiNode"]["parallelism"]["pipeline"] = pipeline
    resolution = Workload(_karta("apps-nvidia-com-nimservice-v1alpha1"), obj).resolve()
    leaders = resolution.component("nimservice").instance("")
    workers = resolution.component("worker").instance("multinode")
    assert leaders is not None and leaders.desired_replicas == pods[0]
    assert (workers.desired_replicas if workers is not None else 0) == pods[1]
    assert leaders.requests is not None and leaders.requests["nvidia.com/gpu"] == 8


def _milvus_variant(name: str) -> dict[str, Any]:
    data: dict[str, Any] = _read(FIXTURES / "milvus-io-milvus-v1beta1" / "variants" / name / "workload.yaml")
    return data


@pytest.mark.parametrize(
    ("image", "version", "ids"),
    [
        (None, None, ["mixcoord", "datanode", "streamingnode", "querynode", "proxy"]),  # the operator's default 2.6
        ("milvusdb/milvus:v2.6.11", None, ["mixcoord", "datanode", "streamingnode", "querynode", "proxy"]),
        (
            "milvusdb/milvus:master-20260901-abcdef",
            None,
            ["mixcoord", "datanode", "streamingnode", "querynode", "proxy"],
        ),
        ("milvusdb/milvus:v2.5.4", None, ["rootcoord", "datacoord", "querycoord", "indexcoord", "proxy", "datanode"]),
        ("milvusdb/milvus:latest", "2.6.2", ["mixcoord", "datanode", "streamingnode", "querynode", "proxy"]),
    ],
)
def test_the_milvus_cluster_layout_follows_the_version_as_the_operator_does(
    image: str | None, version: str | None, ids: list[str]
) -> None:
    # issue 15: GetComponentsBySpec runs Milvus2_6Components from 2.6 (mixCoord, dataNode, streamingNode, queryNode,
    # proxy), and before 2.6 the coordinators, proxy, dataNode, queryNode and indexNode.
    obj = _milvus_variant("cluster-default-2-6")
    if image:
        obj["spec"]["components"]["image"] = image
    if version:
        obj["spec"]["components"]["version"] = version
    found = Workload(_karta("milvus-io-milvus-v1beta1"), obj).component("component").instance_ids
    assert found[: len(ids)] == ids
    assert ("indexnode" in found) == ("indexcoord" in ids)


def test_the_running_version_the_operator_reports_decides_the_layout_before_the_spec() -> None:
    obj = _milvus_variant("cluster-default-2-6")
    obj["spec"]["components"]["image"] = "milvusdb/milvus:v2.6.11"  # an upgrade asked for, not rolled out yet
    obj["status"] = {"status": "Healthy", "currentImage": "milvusdb/milvus:v2.5.4"}
    ids = Workload(_karta("milvus-io-milvus-v1beta1"), obj).component("component").instance_ids
    assert "indexnode" in ids and "streamingnode" not in ids


def test_milvus_deployment_groups_replace_the_component_replicas_and_minus_one_is_an_hpa() -> None:
    component = Workload(_karta("milvus-io-milvus-v1beta1"), _milvus_variant("deployment-groups")).component(
        "component"
    )
    scales = component.scales or {}
    assert {iid: (scale.replicas, scale.min_replicas) for iid, scale in scales.items()} == {
        "mixcoord": (1, None),
        "datanode/g1": (2, None),
        "datanode/g2": (1, 1),  # replicas -1: an external HPA the operator starts at 1
        "streamingnode/g1": (1, None),
        "streamingnode/g2": (1, None),
        "querynode/g1": (2, None),  # queryNode's own replicas (5) are replaced by its groups
        "querynode/g2": (2, None),
        "proxy/g1": (1, None),
        "proxy/g2": (1, None),
    }
    specs = component.fragmented_pod_specs or {}
    assert specs["proxy/g1"].labels == {"topology.milvus.io/az": "zone-a"}
