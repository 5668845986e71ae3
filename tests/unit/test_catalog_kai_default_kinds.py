"""The built-in definitions of the kinds KAI Scheduler groups with its default grouper (docs/catalog.md, "Notes:
interactive, pipeline, VM and serving kinds KAI groups natively"): the pods their operators build, computed from
the object as the operator builds them, and the one PodGroup requiring one pod that KAI gives them."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.gang import plan
from workload_map.resolve import Workload, resolve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
DEFAULT_GROUPER_KINDS = (
    "kubeflow-org-notebook-v1",
    "workspace-devfile-io-devworkspace-v1alpha2",
    "tekton-dev-taskrun-v1",
    "tekton-dev-pipelinerun-v1",
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
