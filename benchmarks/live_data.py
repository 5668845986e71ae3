"""The data sets of the live scale benchmarks, made fast on the test API server (issue 21).

Namespaces are never deleted on the test server (no namespace controller), so a data set is made once under a
name that says its size (`bench-scale-deploy-2000`, `bench-scale-pods-10000`) and reused by later runs: `ensure_*`
counts what is there and creates only what is missing. Creates are concurrent (`WORKERS` threads sharing one HTTP
client pool): 20,000 Deployments take about a minute on the 2-core machine, one at a time would take several.

Also imported by `tests/e2e/test_live_scale_smoke.py`, which makes the same shapes at <= 200 in a fresh namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

WORKERS = 16
MERGE = {"Content-Type": "application/merge-patch+json"}


def deployment(name: str, index: int) -> dict[str, Any]:
    """A Deployment of 1-4 replicas asking for 1-8 GPUs per pod (the shape of bench_kli_get's)."""
    app = f"{name}-{index}"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"{name}-{index:05d}", "labels": {"app": app}},
        "spec": {
            "replicas": 1 + index % 4,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {
                    "containers": [
                        {
                            "name": "server",
                            "image": "nvcr.io/nim/meta/llama:1.0",
                            "resources": {
                                "requests": {"cpu": "4", "memory": "32Gi"},
                                "limits": {"nvidia.com/gpu": str(1 + index % 8)},
                            },
                        }
                    ]
                },
            },
        },
    }


def pytorchjob(name: str, workers: int) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": workers,
                    "template": {"spec": {"containers": [{"name": "pytorch", "image": "t"}]}},
                }
            }
        },
    }


def worker_pod(job: dict[str, Any], index: int) -> dict[str, Any]:
    """Pod `index` of a PyTorchJob's Worker replicas, owned by the job (8 GPUs, on one of 50 nodes)."""
    name = job["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-worker-{index}",
            "labels": {
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": str(index),
            },
            "ownerReferences": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "name": name,
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": f"node-{index % 50}",
            "containers": [{"name": "pytorch", "image": "t", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
        },
    }


RUNNING = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def concurrently(work: Callable[[int], None], indexes: Iterable[int], workers: int = WORKERS) -> None:
    """Run `work(i)` for every index on `workers` threads; the first failure is raised."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(work, indexes):
            pass


def ensure_namespace(kube: Any, namespace: str) -> None:
    answer = kube.post(
        "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    if answer.status_code not in (201, 409):
        answer.raise_for_status()


def _names(kube: Any, path: str) -> set[str]:
    """The names in a collection (metadata-only LIST, paged)."""
    names: set[str] = set()
    params: dict[str, str] = {"limit": "5000"}
    accept = {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"}
    while True:
        page = kube.get(path, params=params, headers=accept)
        page.raise_for_status()
        body = page.json()
        names.update(item["metadata"]["name"] for item in body.get("items") or [])
        token = (body.get("metadata") or {}).get("continue")
        if not token:
            return names
        params["continue"] = token


def _created(answer: Any) -> None:
    if answer.status_code not in (201, 409):
        raise RuntimeError(f"create failed: {answer.status_code} {answer.text[:300]}")


def ensure_deployments(kube: Any, namespace: str, count: int, *, prefix: str = "serve") -> int:
    """`count` Deployments in `namespace` (created when missing); how many were created now."""
    ensure_namespace(kube, namespace)
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    have = _names(kube, path)
    missing = [i for i in range(count) if f"{prefix}-{i:05d}" not in have]

    def make(index: int) -> None:
        _created(kube.post(path, json=deployment(prefix, index)))

    concurrently(make, missing)
    return len(missing)


def ensure_pytorchjob(kube: Any, namespace: str, name: str, pods: int) -> tuple[dict[str, Any], int]:
    """A PyTorchJob with `pods` Running worker pods in `namespace` (created when missing); (the job, pods made)."""
    ensure_namespace(kube, namespace)
    jobs = f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs"
    found = kube.get(f"{jobs}/{name}")
    if found.status_code == 404:
        found = kube.post(jobs, json=pytorchjob(name, pods))
        _created(found)
    else:
        found.raise_for_status()
    job = found.json()
    path = f"/api/v1/namespaces/{namespace}/pods"
    have = _names(kube, path)
    missing = [i for i in range(pods) if f"{name}-worker-{i}" not in have]

    def make(index: int) -> None:
        _created(kube.post(path, json=worker_pod(job, index)))
        status = kube.patch(f"{path}/{name}-worker-{index}/status", json=RUNNING, headers=MERGE)
        status.raise_for_status()

    concurrently(make, missing)
    return job, len(missing)
