"""The built-in definitions of the kinds KAI Scheduler groups with its default grouper (docs/catalog.md, "Notes:
interactive, pipeline, VM and serving kinds KAI groups natively"): the pods their operators build, computed from
the object as the operator builds them, and the one PodGroup requiring one pod that KAI gives them."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.gang import plan
from workload_map.resolve import Workload, resolve
from workload_map.resolve.references import follow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
DEFAULT_GROUPER_KINDS = (
    "kubeflow-org-notebook-v1",
    "workspace-devfile-io-devworkspace-v1alpha2",
    "tekton-dev-taskrun-v1",
    "tekton-dev-pipelinerun-v1",
    "kubevirt-io-virtualmachineinstance-v1",
    "kubevirt-io-virtualmachine-v1",
    "machinelearning-seldon-io-seldondeployment-v1",
    "kubeflow-org-scheduledworkflow-v1beta1",
)


@cache
def _fixture(definition: str, name: str) -> Any:
    return yaml.safe_load((FIXTURES / definition / name).read_text(encoding="utf-8"))


def _resolution(definition: str, obj: dict[str, Any]) -> Any:
    entry = builtin_registry().for_object(obj)
    assert entry is not None and entry.karta.name == definition
    resolution = resolve(entry.karta, obj)
    assert resolution.errors == ()
    return resolution


def _pod_spec(definition: str, obj: dict[str, Any], component: str) -> dict[str, Any]:
    spec: dict[str, Any] = _resolution(definition, obj).component(component).instances[""].pod_template["spec"]
    return spec


def _resources(spec: dict[str, Any], key: str = "containers") -> dict[str, Any]:
    return {c["name"]: c.get("resources") for c in spec.get(key) or []}


@pytest.mark.parametrize("definition", DEFAULT_GROUPER_KINDS)
def test_one_pod_group_requiring_one_pod_as_kai_default_grouper(definition: str) -> None:
    obj = _fixture(definition, "workload.yaml")
    gang_plan = plan(_resolution(definition, obj), _fixture(definition, "pods.yaml")["items"])
    assert [gang.min_member for gang in gang_plan.gangs] == [1]


def test_devworkspace_pod_is_built_as_the_operator_builds_it() -> None:
    definition = "workspace-devfile-io-devworkspace-v1alpha2"
    pod = _fixture(definition, "pods.yaml")["items"][0]["spec"]
    spec = _pod_spec(definition, _fixture(definition, "workload.yaml"), "devworkspace")
    assert _resources(spec) == _resources(pod)
    assert _resources(spec, "initContainers") == _resources(pod, "initContainers")


@pytest.mark.parametrize(
    ("fields", "limit", "memory_request"),
    [
        ({}, "256Mi", "128Mi"),  # the operator's defaults
        ({"memoryLimit": "64Mi"}, "64Mi", "64Mi"),  # a default request above the limit takes the limit
        ({"memoryLimit": "1Gi"}, "1Gi", "128Mi"),
        ({"memoryRequest": "1G"}, "1G", "1G"),  # a default limit below the request takes the request
        ({"memoryRequest": "100Mi"}, "256Mi", "100Mi"),
    ],
)
def test_devworkspace_default_memory_follows_apply_defaults(
    fields: dict[str, str], limit: str, memory_request: str
) -> None:
    definition = "workspace-devfile-io-devworkspace-v1alpha2"
    obj = copy.deepcopy(_fixture(definition, "workload.yaml"))
    obj["spec"]["template"]["components"][1]["container"].update(fields)
    resources = _resources(_pod_spec(definition, obj, "devworkspace"))["tools"]
    assert (resources["limits"]["memory"], resources["requests"]["memory"]) == (limit, memory_request)


def test_stopping_a_devworkspace_or_a_notebook_scales_it_to_zero_and_starting_it_again_to_one() -> None:
    for definition, component in (
        ("workspace-devfile-io-devworkspace-v1alpha2", "devworkspace"),
        ("kubeflow-org-notebook-v1", "notebook"),
    ):
        obj = copy.deepcopy(_fixture(definition, "workload.yaml"))
        entry = builtin_registry().for_object(obj)
        assert entry is not None
        workload = Workload(entry.karta, obj)
        workload.suspend()
        assert workload.resolve().component(component).instances[""].desired_replicas == 0, definition
        workload.resume()
        assert workload.resolve().component(component).instances[""].desired_replicas == 1, definition
        assert workload.to_object()["metadata"].get("annotations", {}).get("kubeflow-resource-stopped") is None


@pytest.mark.parametrize("variant", ["", "variants/task-level-compute-resources"])
def test_taskrun_pod_is_built_as_the_controller_builds_it(variant: str) -> None:
    """Steps and sidecars with the step template, stepSpecs and task-level computeResources (requests shared
    out over the steps, limits on each: two steps under a 2-GPU limit ask for 4 GPUs, as the pod does)."""
    definition = "tekton-dev-taskrun-v1"
    directory = f"{variant}/" if variant else ""
    pod = _fixture(definition, f"{directory}pods.yaml")["items"][0]["spec"]
    spec = _pod_spec(definition, _fixture(definition, f"{directory}workload.yaml"), "taskrun")
    assert _resources(spec) == _resources(pod)
    assert spec.get("nodeSelector") == pod.get("nodeSelector")


def test_pipelinerun_tasks_are_built_as_their_taskruns_pods() -> None:
    definition = "tekton-dev-pipelinerun-v1"
    resolution = _resolution(definition, _fixture(definition, "workload.yaml"))
    pods = {p["metadata"]["labels"]["tekton.dev/pipelineTask"]: p for p in _fixture(definition, "pods.yaml")["items"]}
    instances = resolution.component("task").instances
    assert sorted(instances) == ["notify", "prepare-data", "train"]
    for task, pod in pods.items():
        spec = instances[task].pod_template["spec"]
        assert _resources(spec) == _resources(pod["spec"]), task
        assert spec.get("nodeSelector") == pod["spec"]["nodeSelector"], task  # taskRunSpecs over taskRunTemplate
    assert instances["notify"].pod_template["spec"] == {}  # a taskRef: its steps are in the referenced Task
    assert [instances[t].desired_replicas for t in ("prepare-data", "train", "notify")] == [1, 1, 0]


def _compute(domain: dict[str, Any]) -> dict[str, Any]:
    definition = "kubevirt-io-virtualmachineinstance-v1"
    vmi = copy.deepcopy(_fixture(definition, "workload.yaml"))
    vmi["spec"]["domain"] = domain
    resources: dict[str, Any] = _resources(_pod_spec(definition, vmi, "vmi"))["compute"]
    return resources


@pytest.mark.parametrize(
    ("cpu", "requests", "limits"),
    [
        (None, {"cpu": "100m"}, {}),  # no topology: one vCPU over the allocation ratio of 10
        ({"cores": 4, "sockets": 1, "threads": 1}, {"cpu": "400m"}, {}),
        ({"cores": 6, "sockets": 2}, {"cpu": "1.2"}, {}),
        ({"cores": 4, "dedicatedCpuPlacement": True}, {"cpu": "4"}, {"cpu": "4"}),
    ],
)
def test_vmi_cpu_is_rendered_from_the_vcpus(cpu: Any, requests: dict[str, str], limits: dict[str, str]) -> None:
    domain: dict[str, Any] = {"memory": {"guest": "2Gi"}}
    if cpu is not None:
        domain["cpu"] = cpu
    resources = _compute(domain)
    assert resources["requests"] == {**requests, "memory": "2Gi"} and resources["limits"] == limits


def test_vmi_given_resources_win_and_each_device_plugin_gpu_counts_one() -> None:
    resources = _compute(
        {
            "cpu": {"cores": 8},
            "resources": {"requests": {"cpu": "2", "memory": "8Gi"}},
            "devices": {
                "gpus": [
                    {"name": "a", "deviceName": "nvidia.com/gpu"},
                    {"name": "b", "deviceName": "nvidia.com/gpu"},
                    {"name": "dra", "claimRequest": {"claimName": "c", "requestName": "r"}},
                ],
                "hostDevices": [{"name": "nic", "deviceName": "intel.com/qat"}],
            },
        }
    )
    assert resources["requests"] == {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "2", "intel.com/qat": "1"}
    assert resources["limits"] == {"nvidia.com/gpu": "2", "intel.com/qat": "1"}


def test_the_vmi_fixture_pod_requests_what_the_definition_renders_but_the_overhead() -> None:
    definition = "kubevirt-io-virtualmachineinstance-v1"
    pod = _resources(_fixture(definition, "pods.yaml")["items"][0]["spec"])["compute"]
    computed = _resources(_pod_spec(definition, _fixture(definition, "workload.yaml"), "vmi"))["compute"]
    assert computed["requests"]["cpu"] == pod["requests"]["cpu"]
    assert computed["requests"]["nvidia.com/GP102GL_Tesla_P40"] == pod["requests"]["nvidia.com/GP102GL_Tesla_P40"]
    assert computed["requests"]["memory"] == "1024M"  # the pod's 1314Mi adds virt-controller's overhead


@pytest.mark.parametrize(
    ("spec", "replicas"),
    [
        ({"runStrategy": "Always"}, 1),
        ({"runStrategy": "Halted"}, 0),
        ({"running": True}, 1),
        ({"running": False}, 0),
        ({"runStrategy": "Manual"}, 1),  # the fixture's status says a VMI was created
    ],
)
def test_the_vm_runs_one_vmi_per_its_run_strategy(spec: dict[str, Any], replicas: int) -> None:
    definition = "kubevirt-io-virtualmachine-v1"
    vm = copy.deepcopy(_fixture(definition, "workload.yaml"))
    vm["spec"].pop("runStrategy")
    vm["spec"].update(spec)
    assert _resolution(definition, vm).component("vmi").instances[""].desired_replicas == replicas


def test_stopping_and_starting_a_vm_writes_the_run_strategy_as_virtctl_does() -> None:
    definition = "kubevirt-io-virtualmachine-v1"
    vm = copy.deepcopy(_fixture(definition, "workload.yaml"))
    vm["spec"]["running"] = True
    del vm["spec"]["runStrategy"]
    entry = builtin_registry().for_object(vm)
    assert entry is not None
    workload = Workload(entry.karta, vm)
    workload.suspend()
    stopped = workload.to_object()["spec"]
    assert stopped["runStrategy"] == "Halted" and stopped.get("running") is None
    workload.resume()
    assert workload.to_object()["spec"]["runStrategy"] == "Always"


def _seldon(mutate: Any = None) -> Any:
    definition = "machinelearning-seldon-io-seldondeployment-v1"
    obj = copy.deepcopy(_fixture(definition, "workload.yaml"))
    if mutate is not None:
        mutate(obj)
    return _resolution(definition, obj).component("component").instances


def test_seldon_components_are_the_deployments_with_the_engine_beside_the_graph_root() -> None:
    definition = "machinelearning-seldon-io-seldondeployment-v1"
    instances = _seldon()
    pods = {p["metadata"]["labels"]["app"]: p["spec"] for p in _fixture(definition, "pods.yaml")["items"]}
    assert sorted(instances) == sorted(pods)
    for name, pod in pods.items():
        assert _resources(instances[name].pod_template["spec"]) == _resources(pod), name
    assert [instances[n].desired_replicas for n in sorted(instances)] == [1, 2, 1]


def test_seldon_without_engine_and_replicas_from_hpa_and_prepackaged_servers() -> None:
    def no_engine(obj: dict[str, Any]) -> None:
        obj["spec"]["predictors"][0]["annotations"] = {"seldon.io/no-engine": "true"}
        obj["spec"]["predictors"][0]["componentSpecs"][1]["hpaSpec"] = {"minReplicas": 3, "maxReplicas": 6}

    instances = _seldon(no_engine)
    assert all("seldon-container-engine" not in _resources(i.pod_template["spec"]) for i in instances.values())
    model = instances["test-test-1-model"]
    assert model.scale is not None and (model.desired_replicas, model.scale.max_replicas) == (3, 6)

    def prepackaged(obj: dict[str, Any]) -> None:
        obj["spec"]["predictors"] = [
            {"name": "default", "replicas": 2, "graph": {"name": "classifier", "implementation": "SKLEARN_SERVER"}}
        ]

    instances = _seldon(prepackaged)
    assert list(instances) == ["test-default-0-classifier"]
    assert sorted(_resources(instances["test-default-0-classifier"].pod_template["spec"])) == [
        "classifier",
        "seldon-container-engine",
    ]
    assert instances["test-default-0-classifier"].desired_replicas == 2


def test_scheduledworkflow_steps_are_its_workflow_templates_counted_per_active_run() -> None:
    definition = "kubeflow-org-scheduledworkflow-v1beta1"
    swf = copy.deepcopy(_fixture(definition, "workload.yaml"))
    instances = _resolution(definition, swf).component("step").instances
    pods = {p["metadata"]["name"].split("-")[-2]: p["spec"] for p in _fixture(definition, "pods.yaml")["items"]}
    assert sorted(instances) == sorted(pods) == ["preprocess", "train"]  # the DAG template runs no pod
    for step, pod in pods.items():
        main = instances[step].pod_template["spec"]["containers"][0]
        assert main["resources"] == _resources(pod)["main"], step
    assert [i.desired_replicas for i in instances.values()] == [1, 1]
    swf["status"]["workflowHistory"]["active"] = []
    swf["spec"]["workflow"]["spec"] = json.dumps(swf["spec"]["workflow"]["spec"])  # kept as a JSON string
    instances = _resolution(definition, swf).component("step").instances
    assert sorted(instances) == ["preprocess", "train"] and [i.desired_replicas for i in instances.values()] == [0, 0]


def test_disabling_a_scheduledworkflow_writes_enabled_false() -> None:
    definition = "kubeflow-org-scheduledworkflow-v1beta1"
    swf = copy.deepcopy(_fixture(definition, "workload.yaml"))
    entry = builtin_registry().for_object(swf)
    assert entry is not None
    workload = Workload(entry.karta, swf)
    workload.suspend()
    assert workload.to_object()["spec"]["enabled"] is False
    workload.resume()
    assert workload.to_object()["spec"]["enabled"] is True


def test_a_pipeline_task_pod_template_is_its_taskrunspec_over_the_taskrun_template_field_by_field() -> None:
    definition = "tekton-dev-pipelinerun-v1"
    run = copy.deepcopy(_fixture(definition, "workload.yaml"))
    run["spec"]["taskRunSpecs"][0]["podTemplate"] = {"tolerations": [{"key": "gpu", "operator": "Exists"}]}
    spec = _resolution(definition, run).component("task").instances["train"].pod_template["spec"]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}  # from taskRunTemplate
    assert spec["tolerations"] == [{"key": "gpu", "operator": "Exists"}]  # from the task's own entry


def test_scheduledworkflow_steps_count_the_newest_active_runs_pods_when_its_workflow_is_at_hand() -> None:
    definition = "kubeflow-org-scheduledworkflow-v1beta1"
    swf = _fixture(definition, "workload.yaml")
    run = copy.deepcopy(_fixture(definition, "owners.yaml")["items"][0])
    run["status"]["nodes"] = {
        "n0": {"type": "DAG", "templateName": "nightly-train"},
        "n1": {"type": "Pod", "templateName": "preprocess", "phase": "Succeeded"},
        "n2": {"type": "Pod", "templateName": "train", "phase": "Failed"},
        "n3": {"type": "Retry", "templateName": "train"},
        "n4": {"type": "Pod", "templateName": "train", "phase": "Running"},
    }
    entry = builtin_registry().for_object(swf)
    assert entry is not None
    followed = follow(entry.karta, swf, [run])
    assert [r.name for r in followed.found] == ["run"] and not followed.missing
    instances = resolve(entry.karta, followed.object).component("step").instances
    assert {name: i.desired_replicas for name, i in instances.items()} == {"preprocess": 1, "train": 2}
    other = copy.deepcopy(run)
    other["metadata"]["name"] = "nightly-train-3-1876543210"  # a completed run is not the one named
    assert follow(entry.karta, swf, [other]).missing
