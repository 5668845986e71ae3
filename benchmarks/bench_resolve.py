"""Resolution cost, as ratios against `json.loads` of the same object's JSON text, measured in the same run.

Rows:
* complete resolution (`Workload(karta, obj).resolve()`: every component, instance id, pod template, scale and the
  status) of a ~20 KB JobSet through the built-in JobSet definition; target <= 15x json.loads;
* the same for a JobSet of 8 replicated jobs (~37 KB, past 500 containers, where the check that the object can be
  read in place walks it);
* the status alone (`Workload(karta, obj).status.phase`, what the conformance checks run);
* 1, 10 and 100 distinct JobSets resolved one after the other: the per-workload time at each size (it must stay
  flat: no cost that grows with the number of workloads seen), and the ratio 100x / 1x.

Run alone: `python benchmarks/bench_resolve.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import workload_map
from _common import interleaved, json_loads_baseline
from _common import row as make_row
from workload_map.model import Karta, load_definition
from workload_map.resolve import Workload

DEFINITION = Path(workload_map.__file__).parent / "catalog" / "definitions" / "jobset-x-k8s-io-jobset-v1alpha2.yaml"


def _container(name: str, index: int, gpus: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"nvcr.io/nvidia/pytorch:24.{index % 12 + 1:02d}-py3",
        "command": ["torchrun", "--nnodes=4", "--nproc-per-node=8", "train.py", f"--run={index}"],
        "env": [{"name": f"VAR_{k}", "value": f"value-{index}-{k}"} for k in range(28)]
        + [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
        "ports": [{"containerPort": 29500, "name": "c10d"}, {"containerPort": 8080, "name": "metrics"}],
        "resources": {
            "requests": {"cpu": "8", "memory": "64Gi"},
            "limits": {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": str(gpus)},
        },
        "volumeMounts": [
            {"name": "data", "mountPath": "/data"},
            {"name": "shm", "mountPath": "/dev/shm"},
            {"name": "ckpt", "mountPath": "/checkpoints"},
        ],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
    }


def _replicated_job(name: str, index: int, replicas: int, parallelism: int) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"labels": {"team": "ml", "job-role": name}},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "backoffLimit": 0,
                "template": {
                    "metadata": {
                        "labels": {"app": "llm-train", "role": name, "run": str(index)},
                        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
                    },
                    "spec": {
                        "restartPolicy": "Never",
                        "schedulerName": "kai-scheduler",
                        "priorityClassName": "training",
                        "serviceAccountName": "trainer",
                        "containers": [_container("trainer", index, 8), _container("sidecar", index, 0)],
                        "volumes": [
                            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{index}"}},
                            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                            {"name": "ckpt", "persistentVolumeClaim": {"claimName": f"ckpt-{index}"}},
                        ],
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["H100"]}
                                            ]
                                        }
                                    ]
                                }
                            }
                        },
                    },
                },
            },
        },
    }


def jobset(index: int, worker_groups: int = 3) -> dict[str, Any]:
    """A distinct JobSet of about 20 KB: a driver and three worker groups (`worker_groups`), with a running
    status."""
    jobs = [_replicated_job("driver", index, 1, 1)] + [
        _replicated_job(f"workers-{k}", index, 2 + k, 4) for k in range(worker_groups)
    ]
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": f"llm-train-{index}",
            "namespace": "ml-team",
            "uid": f"00000000-0000-0000-0000-{index:012d}",
            "resourceVersion": str(1000 + index),
            "labels": {"app": "llm-train", "kueue.x-k8s.io/queue-name": "gpu"},
        },
        "spec": {"suspend": False, "network": {"enableDNSHostnames": True}, "replicatedJobs": jobs},
        "status": {
            "conditions": [
                {"type": "StartupPolicyCompleted", "status": "True", "reason": "AllJobsReady", "message": "ok"}
            ],
            "replicatedJobsStatus": [
                {"name": job["name"], "ready": job["replicas"], "active": job["replicas"], "succeeded": 0, "failed": 0}
                for job in jobs
            ],
        },
    }


def _complete(karta: Karta, obj: dict[str, Any]) -> object:
    resolution = Workload(karta, obj).resolve()
    assert resolution.ok, resolution.errors
    return resolution


def rows() -> list[dict[str, Any]]:
    karta = load_definition(DEFINITION)
    obj = jobset(0)
    text = json.dumps(obj)
    size_kb = len(text) / 1024
    out: list[dict[str, Any]] = []

    decode = json_loads_baseline(text)

    def row(name: str, seconds: float, baseline: float, target: float | None) -> None:
        out.append(make_row(name, seconds * 1e6, baseline * 1e6, target, "us", digits=1))

    row(
        f"resolve: complete resolution, JobSet {size_kb:.0f} KB (x json.loads)",
        *interleaved(lambda: _complete(karta, obj), decode, rounds=5, round_time=0.06),
        15,
    )
    large = jobset(1, worker_groups=7)  # past 500 containers: the in-place check walks it (issue 19)
    large_kb = len(json.dumps(large)) / 1024
    row(
        f"resolve: complete resolution, JobSet of 8 replicated jobs, {large_kb:.0f} KB (x json.loads)",
        *interleaved(
            lambda: _complete(karta, large), json_loads_baseline(json.dumps(large)), rounds=5, round_time=0.06
        ),
        None,
    )
    row(
        f"resolve: status only, JobSet {size_kb:.0f} KB (x json.loads)",
        *interleaved(lambda: Workload(karta, obj).status.phase, decode, rounds=5, round_time=0.06),
        None,
    )

    per_workload: dict[int, float] = {}
    for count in (1, 10, 100):
        objects = [jobset(1000 * count + i) for i in range(count)]

        def run(objects: list[dict[str, Any]] = objects) -> None:
            for item in objects:
                _complete(karta, item)

        seconds, baseline = interleaved(run, decode, rounds=3, round_time=0.1)
        per_workload[count] = seconds / count
        row(f"resolve: {count} distinct JobSets, per workload (x json.loads)", per_workload[count], baseline, 15)
    flat = per_workload[100] / per_workload[1]
    out.append(make_row("resolve: per-workload cost, 100 distinct / 1 (flat = 1)", flat, 1.0, 1.5, "ratio", digits=2))
    return out


if __name__ == "__main__":
    for item in rows():
        print(item)
