"""The built-in AppWrapper definition: its pod sets (declared, cached by the controller in the status, or inferred
as InferPodSets does), each template read at the pod set's path inside the wrapped object (and
written back there), and the pods placed by the labels their wrapped framework sets; a pod whose pod set cannot be
read is listed unclaimed, never counted in another pod set."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from workload_map.catalog import builtin_registry
from workload_map.pods import attribute
from workload_map.resolve import Workload, resolve

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "workload-codeflare-dev-appwrapper-v1beta2"
CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"


@cache
def _fixture() -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((FIXTURE / "workload.yaml").read_text())
    return obj


def _corpus(case: str) -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((CORPUS / f"{case}.yaml").read_text())["object"]
    return obj


def _karta() -> Any:
    entry = builtin_registry().for_object(_fixture())
    assert entry is not None and entry.karta.name == "workload-codeflare-dev-appwrapper-v1beta2"
    return entry.karta


def _replicas(obj: dict[str, Any]) -> dict[str, int]:
    resolution = resolve(_karta(), obj)
    assert resolution.errors == ()
    return {key: instance.desired_replicas for key, instance in resolution.component("podset").instances.items()}


def _pod(name: str, labels: dict[str, str], owner: dict[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "ml-team", "uid": f"uid-{name}", "labels": labels}
    if owner is not None:
        metadata["ownerReferences"] = [{**owner, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": [{"name": "c"}]}}


def test_the_cached_pod_sets_give_one_instance_per_replica_type() -> None:
    assert _replicas(_fixture()) == {"pytorch-simple/master": 1, "pytorch-simple/worker": 2}


def test_without_status_the_pod_sets_are_inferred_as_the_webhook_does() -> None:
    assert _replicas(_corpus("appwrapper-jobset")) == {"sample-jobset/workers": 4, "sample-jobset/driver": 1}
    unsubmitted = copy.deepcopy(_fixture())
    del unsubmitted["status"]
    assert _replicas(unsubmitted) == {"pytorch-simple/master": 1, "pytorch-simple/worker": 2}


def test_declared_pod_sets_win_and_name_their_role_by_the_path() -> None:
    # samples/wrapped-leader-worker-set.yaml declares its pod sets (LWS is not a kind InferPodSets knows).
    obj = yaml.safe_load(
        """
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: sample-lws, namespace: ml-team}
spec:
  components:
  - podSets:
    - {path: template.spec.leaderWorkerTemplate.leaderTemplate, replicas: 2}
    - {path: template.spec.leaderWorkerTemplate.workerTemplate, replicas: 3}
    template:
      apiVersion: leaderworkerset.x-k8s.io/v1
      kind: LeaderWorkerSet
      metadata: {name: nginx-lws}
      spec:
        replicas: 2
        leaderWorkerTemplate:
          leaderTemplate: {spec: {containers: [{name: leader, resources: {requests: {nvidia.com/gpu: '1'}}}]}}
          workerTemplate: {spec: {containers: [{name: worker, resources: {requests: {nvidia.com/gpu: '2'}}}]}}
"""
    )
    resolution = resolve(_karta(), obj)
    instances = resolution.component("podset").instances
    assert {key: instance.desired_replicas for key, instance in instances.items()} == {
        "nginx-lws/leader": 2,
        "nginx-lws/worker": 3,
    }
    requests = instances["nginx-lws/worker"].requests
    assert requests is not None and str(requests["nvidia.com/gpu"]) == "2"


def test_a_template_is_written_back_inside_the_wrapped_object() -> None:
    workload = Workload(_karta(), copy.deepcopy(_fixture()))
    component = workload.component("podset")
    templates = component.pod_template_specs
    assert templates is not None and set(templates) == {"pytorch-simple/master", "pytorch-simple/worker"}
    templates["pytorch-simple/worker"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "4"}}
    component.update_pod_template_specs(templates)
    written = workload.to_object()["spec"]["components"][0]["template"]["spec"]["pytorchReplicaSpecs"]
    assert written["Worker"]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "4"}}
    assert written["Master"]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": 1}}


def _placed(obj: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, str | None]:
    attribution = attribute(resolve(_karta(), obj), pods, check_ownership=False)
    return {pod.name: pod.instance if pod.component == "podset" else None for pod in attribution.pods}


def test_pods_are_placed_by_their_wrapped_frameworks_labels() -> None:
    aw = {"workload.codeflare.dev/appwrapper": "sample-pytorch-job"}
    pytorch = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "pytorch-simple", "uid": "uid-pj"}
    job = {"training.kubeflow.org/job-name": "pytorch-simple"}
    pods = [
        _pod("pytorch-simple-master-0", {**aw, **job, "training.kubeflow.org/replica-type": "master"}, pytorch),
        _pod("pytorch-simple-worker-0", {**aw, **job, "training.kubeflow.org/replica-type": "worker"}, pytorch),
        # The same AppWrapper's pod whose pod set cannot be read (no framework labels, an unknown owner kind).
        _pod("stray", aw, {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "uid-w"}),
    ]
    assert _placed(_fixture(), pods) == {
        "pytorch-simple-master-0": "pytorch-simple/master",
        "pytorch-simple-worker-0": "pytorch-simple/worker",
        "stray": None,
    }


def test_jobset_ray_and_plain_kinds_place_their_pods() -> None:
    jobset = _corpus("appwrapper-jobset")
    aw = {"workload.codeflare.dev/appwrapper": "sample-jobset"}
    pods = [
        _pod(
            "d",
            {
                **aw,
                "jobset.sigs.k8s.io/jobset-name": "sample-jobset",
                "jobset.sigs.k8s.io/replicatedjob-name": "driver",
            },
        ),
        _pod(
            "w",
            {
                **aw,
                "jobset.sigs.k8s.io/jobset-name": "sample-jobset",
                "jobset.sigs.k8s.io/replicatedjob-name": "workers",
            },
        ),
    ]
    assert _placed(jobset, pods) == {"d": "sample-jobset/driver", "w": "sample-jobset/workers"}
    ray = yaml.safe_load(
        """
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: ray-aw, namespace: ml-team}
spec:
  components:
  - template:
      apiVersion: ray.io/v1
      kind: RayCluster
      metadata: {name: raycluster}
      spec:
        headGroupSpec: {template: {spec: {containers: [{name: head}]}}}
        workerGroupSpecs:
        - {groupName: gpu-group, replicas: 2, template: {spec: {containers: [{name: worker}]}}}
"""
    )
    assert _replicas(ray) == {"raycluster/headgroup": 1, "raycluster/gpu-group": 2}
    aw = {"workload.codeflare.dev/appwrapper": "ray-aw"}
    pods = [
        _pod("h", {**aw, "ray.io/node-type": "head", "ray.io/cluster": "raycluster", "ray.io/group": "headgroup"}),
        _pod("g", {**aw, "ray.io/node-type": "worker", "ray.io/cluster": "raycluster", "ray.io/group": "gpu-group"}),
    ]
    assert _placed(ray, pods) == {"h": "raycluster/headgroup", "g": "raycluster/gpu-group"}
    gpu_job = _corpus("appwrapper-gpu-job")
    pod = _pod(
        "sample-gpu-job-x",
        {"workload.codeflare.dev/appwrapper": "sample-gpu-job", "batch.kubernetes.io/job-name": "sample-gpu-job"},
    )
    assert _placed(gpu_job, [pod]) == {"sample-gpu-job-x": "sample-gpu-job"}
