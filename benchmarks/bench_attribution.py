"""Pod attribution and the rolled-up view at scale, as ratios against decoding the same pods.

The scenario: one namespace of N workloads with 10 pods each, half Deployments (pod -> ReplicaSet -> Deployment)
and half JobSets (pod -> Job -> JobSet: a driver Job of 1 pod and a workers Job of 9), resolved through the
catalog's definitions. Sizes: 1x = 150 workloads / 1,500 pods, 10x = 1,500 / 15,000, 100x = 15,000 / 150,000.

Rows:
* **owner chains**: every pod's owner chain walked to its workload (`OwnerChains.find_root`, what
  `attribute_many` does first), per pod, at 1x / 10x / 100x, against `json.loads` of the same pods' JSON text
  (what the cluster layer pays to decode them anyway).
* **attribution only**: `attribute_many` (ownership, component by type selector, instance by instance selector).
* **attribution + view**: `attribute_many` then `build_view` per workload (desired/current/ready, per-pod and
  rolled-up requests), per pod, against the same `json.loads` baseline; and the peak memory it allocates
  (tracemalloc), per pod, against the memory of the decoded pods themselves.
* **linear growth**: the per-pod cost (relative to `json.loads` measured alongside) at 10x and 100x over the same at
  1x (target about 1).

Times are the process's CPU time (`time.process_time`, the collector off as in `timeit`), so other processes on a
shared machine do not inflate them. Building the `Workload` objects (the resolve layer: one jq evaluation per
definition path) is set-up, not timed; it is reported as its own row. The 100x attribution + view size needs 15,000
of them and several minutes on a shared machine, so it runs only with ``WMAP_BENCH_FULL=1``; the owner-chain rows
always run at 100x.

Run alone: ``python benchmarks/bench_attribution.py`` (``WMAP_BENCH_FULL=1 python benchmarks/bench_attribution.py``
for the full 100x).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from _common import interleaved, json_loads_baseline
from _common import row as _row
from workload_map.catalog.registry import builtin_registry
from workload_map.pods import OwnerChains, attribute_many
from workload_map.resolve import Resolution, Workload
from workload_map.view import build_view

PODS_PER_WORKLOAD = 10
BASE_WORKLOADS = 150  # 1x: 1,500 pods
NAMESPACE = "bench"


def _uid(kind: str, index: int, part: int = 0) -> str:
    code = {"Deployment": 1, "ReplicaSet": 2, "JobSet": 3, "Job": 4, "Pod": 5}[kind]
    return f"{code:08x}-{part:04x}-4000-8000-{index:012x}"


def _ref(kind: str, api_version: str, name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}


def _pod(name: str, index: int, part: int, owner: dict[str, Any], labels: dict[str, str], gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": _uid("Pod", index, part),
            "labels": labels,
            "ownerReferences": [owner],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "ghcr.io/example/app:1.0",
                    "resources": {
                        "requests": {"cpu": "2", "memory": "8Gi"},
                        "limits": {"memory": "8Gi", "nvidia.com/gpu": str(gpus)},
                    },
                }
            ],
            "nodeName": f"node-{(index * PODS_PER_WORKLOAD + part) % 997}",
            "restartPolicy": "Always",
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}],
        },
    }


def _template(gpus: int) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "ghcr.io/example/app:1.0",
                    "resources": {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"nvidia.com/gpu": gpus}},
                }
            ]
        }
    }


def _deployment(index: int) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    name = f"web-{index}"
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": _uid("Deployment", index)},
        "spec": {"replicas": PODS_PER_WORKLOAD, "template": _template(1)},
        "status": {"conditions": [{"type": "Available", "status": "True"}]},
    }
    rs_name = f"{name}-6d8f7b9c54"
    replicaset = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": rs_name,
            "namespace": NAMESPACE,
            "uid": _uid("ReplicaSet", index),
            "ownerReferences": [_ref("Deployment", "apps/v1", name, _uid("Deployment", index))],
        },
    }
    owner = _ref("ReplicaSet", "apps/v1", rs_name, _uid("ReplicaSet", index))
    pods = [
        _pod(f"{rs_name}-{part:05d}", index, part, owner, {"app": name, "pod-template-hash": "6d8f7b9c54"}, 1)
        for part in range(PODS_PER_WORKLOAD)
    ]
    return obj, [replicaset], pods


def _jobset(index: int) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    name = f"train-{index}"
    jobs = (("driver", 1, 0), ("workers", PODS_PER_WORKLOAD - 1, 8))
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": _uid("JobSet", index)},
        "spec": {
            "replicatedJobs": [
                {"name": job, "replicas": 1, "template": {"spec": {"parallelism": count, "template": _template(gpus)}}}
                for job, count, gpus in jobs
            ]
        },
        "status": {"conditions": []},
    }
    owners: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    part = 0
    for position, (job, count, gpus) in enumerate(jobs):
        job_name = f"{name}-{job}-0"
        owners.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": job_name,
                    "namespace": NAMESPACE,
                    "uid": _uid("Job", index, position),
                    "ownerReferences": [_ref("JobSet", "jobset.x-k8s.io/v1alpha2", name, _uid("JobSet", index))],
                },
            }
        )
        owner = _ref("Job", "batch/v1", job_name, _uid("Job", index, position))
        labels = {"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": job}
        for _ in range(count):
            pods.append(_pod(f"{job_name}-{part}-x7k2p", index, part, owner, labels, gpus))
            part += 1
    return obj, owners, pods


def scenario(workloads: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(workload objects, owner objects, the pods' JSON text) for `workloads` workloads."""
    objects: list[dict[str, Any]] = []
    owners: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for index in range(workloads):
        obj, more_owners, more_pods = (_deployment if index % 2 == 0 else _jobset)(index)
        objects.append(obj)
        owners.extend(more_owners)
        pods.extend(more_pods)
    return objects, owners, json.dumps(pods)


def _peak(run: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _decoded_size(text: str) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        value = json.loads(text)
        size = tracemalloc.get_traced_memory()[0]
        del value
        return size
    finally:
        tracemalloc.stop()


def _walk(pods: list[dict[str, Any]], owners: list[dict[str, Any]], roots: set[str]) -> int:
    chains = OwnerChains(owners, pods=pods)
    return sum(1 for pod in pods if chains.find_root(pod, roots) is not None)


def _pipeline(workloads: list[Resolution], pods: list[dict[str, Any]], owners: list[dict[str, Any]]) -> int:
    attributions = attribute_many(workloads, pods, owners)
    views = [build_view(workload, a) for workload, a in zip(workloads, attributions, strict=True)]
    return sum(view.resources.gpus for view in views)


def _best_pair(run: Callable[[], Any], baseline: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best times of `run` and `baseline`, measured alternately (a shared machine's load hits both alike), each the
    CPU time of this process (other processes' load does not count) with the collector off, as timeit."""
    return interleaved(run, baseline, rounds=repeat, collect=True, gc_off=True, cpu=True)


def rows() -> list[dict[str, Any]]:
    full = os.environ.get("WMAP_BENCH_FULL", "") not in ("", "0")
    registry = builtin_registry()
    out: list[dict[str, Any]] = []
    chain_per_pod: dict[int, float] = {}
    view_per_pod: dict[int, float] = {}
    chain_ratio: dict[int, float] = {}  # per-pod time over per-pod json.loads, measured alternately
    view_ratio: dict[int, float] = {}
    setup_per_workload: float | None = None
    for factor in (1, 10, 100):
        count = BASE_WORKLOADS * factor
        objects, owners, text = scenario(count)
        pods: list[dict[str, Any]] = json.loads(text)
        n = len(pods)
        repeat = {1: 7, 10: 3}.get(factor, 1)
        decode = json_loads_baseline(text)
        roots = {obj["metadata"]["uid"] for obj in objects}
        assert _walk(pods, owners, roots) == n
        chain, loads = _best_pair(functools.partial(_walk, pods, owners, roots), decode, repeat)
        chain_per_pod[factor] = chain / n * 1e6
        chain_ratio[factor] = chain / loads
        name = f"owner chains, {n:,} pods to {count:,} workloads, per pod (vs json.loads)"
        out.append(_row(name, chain_per_pod[factor], loads / n * 1e6, 1.0, "us"))

        if factor == 100 and not full:
            projected = (setup_per_workload or 0.0) * count + 3 * (view_per_pod.get(10, 0.0) / 1e6) * n
            name = (
                f"attribution + view at {n:,} pods: skipped (~{projected:.0f} s of set-up and runs on this machine); "
                f"WMAP_BENCH_FULL=1 runs it"
            )
            out.append(_row(name, 0.0, None, None, "s"))
            continue
        started = time.perf_counter()
        workloads = []
        for obj in objects:
            resolved = registry.for_object(obj)
            assert resolved is not None
            resolution = Workload(resolved.karta, obj).resolve()
            assert not resolution.errors  # reading the errors evaluates every part once (cached for the timed part)
            workloads.append(resolution)
        setup_per_workload = (time.perf_counter() - started) / count

        attribution, loads = _best_pair(functools.partial(attribute_many, workloads, pods, owners), decode, repeat)
        name = f"attribution only (attribute_many), {n:,} pods / {count:,} workloads, per pod (vs json.loads)"
        out.append(_row(name, attribution / n * 1e6, loads / n * 1e6, 2.0, "us"))
        gpus = _pipeline(workloads, pods, owners)
        assert gpus == (count - count // 2) * PODS_PER_WORKLOAD + (count // 2) * 72, gpus
        whole, loads = _best_pair(functools.partial(_pipeline, workloads, pods, owners), decode, repeat)
        view_per_pod[factor] = whole / n * 1e6
        view_ratio[factor] = whole / loads
        name = f"attribution + view, {n:,} pods / {count:,} workloads, per pod (vs json.loads)"
        out.append(_row(name, view_per_pod[factor], loads / n * 1e6, 5.0, "us"))
        peak = _peak(functools.partial(_pipeline, workloads, pods, owners)) / n
        decoded = _decoded_size(text) / n
        name = f"attribution + view, {n:,} pods: peak memory per pod (vs the decoded pod)"
        out.append(_row(name, peak, decoded, None, "bytes"))
        if factor == 1:
            name = "set-up: Workload + resolve per workload (resolve layer; not timed above)"
            out.append(_row(name, setup_per_workload * 1e3, None, None, "ms"))
        del workloads

    for factor in (10, 100):
        if factor in chain_ratio:
            name = f"owner chains: cost per pod at {factor}x over 1x, each relative to json.loads (linear = 1)"
            out.append(_row(name, chain_ratio[factor], chain_ratio[1], 1.5, "x json.loads"))
        if factor in view_ratio:
            name = f"attribution + view: cost per pod at {factor}x over 1x, each relative to json.loads (linear = 1)"
            out.append(_row(name, view_ratio[factor], view_ratio[1], 1.5, "x json.loads"))
    return out


if __name__ == "__main__":
    for row in rows():
        print(row)
