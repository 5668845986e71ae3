"""Fast path and static layer cost, as ratios against `json.loads` of the same object's JSON text (same run).

Rows (the object is a ~20 KB JobSet-like dict: four replicated jobs with two containers each, and a status):
* the fast path on a deep plain path (`.spec.replicatedJobs[1]...containers[0].image`): target <= 0.2x;
* the fast path on an iterating path with a pipe (`.spec.replicatedJobs[] | .name`): target <= 0.2x;
* the fast path on an optional iteration with a default (`.status.replicatedJobsStatus[]?.ready // 0`): <= 0.2x;
* the public `workload_map.jq.evaluate` (a Document per call, the plain path run on the object in place) on a deep
  plain path of an ~8 KB object (one replicated job): target <= 0.2x (issue 19: call overhead);
* parse + static safety check of a typical status matcher, uncached (what validating a new definition costs per
  expression): no target, for reference.

Run alone: `python benchmarks/bench_jq_fastpath.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from _common import best, json_loads_baseline
from _common import row as make_row
from workload_map.jq import evaluate, parser, safety
from workload_map.jq.fastpath import compile_fast


def _container(name: str, index: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"nvcr.io/nvidia/pytorch:24.0{index}-py3",
        "command": ["torchrun", "--nnodes=4", "--nproc_per_node=8", "/workspace/train.py"],
        "args": ["--config", "/etc/config/train.yaml", "--epochs", "10", "--batch-size", "256"],
        "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{name}"} for k in range(20)],
        "ports": [{"containerPort": 29500 + index, "name": "dist", "protocol": "TCP"}],
        "resources": {
            "limits": {"nvidia.com/gpu": 8, "cpu": "32", "memory": "256Gi"},
            "requests": {"nvidia.com/gpu": 8, "cpu": "16", "memory": "128Gi"},
        },
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "config", "mountPath": "/etc/config"}],
    }


def _replicated_job(name: str, replicas: int) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"labels": {"app": "trainer", "role": name}},
            "spec": {
                "parallelism": 4,
                "completions": 4,
                "backoffLimit": 0,
                "completionMode": "Indexed",
                "template": {
                    "metadata": {"labels": {"app": "trainer", "role": name, "team": "ml-platform"}},
                    "spec": {
                        "restartPolicy": "Never",
                        "schedulerName": "kai-scheduler",
                        "containers": [_container(name, 1), _container(name + "-sidecar", 2)],
                        "volumes": [
                            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                            {"name": "config", "configMap": {"name": "train-config"}},
                        ],
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    },
                },
            },
        },
    }


def jobset() -> dict[str, Any]:
    names = ["driver", "workers-a", "workers-b", "evaluator"]
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": "llm-pretrain",
            "namespace": "research",
            "labels": {"app": "trainer", "kueue.x-k8s.io/queue-name": "gpu-queue"},
            "annotations": {"owner": "ml-platform", "description": "x" * 4000},
            "uid": "0f6c3c2e-6f0a-4d1e-9d1e-2b7c1e9a4b11",
            "generation": 3,
        },
        "spec": {
            "suspend": False,
            "replicatedJobs": [_replicated_job(n, 1 if n in ("driver", "evaluator") else 4) for n in names],
            "network": {"enableDNSHostnames": True, "subdomain": "llm-pretrain"},
        },
        "status": {
            "conditions": [
                {"type": "StartupPolicyCompleted", "status": "True", "reason": "AllJobsStarted", "message": "ok"}
            ],
            "replicatedJobsStatus": [
                {"name": n, "ready": 4, "active": 4, "succeeded": 0, "failed": 0, "suspended": 0} for n in names
            ],
        },
    }


PATHS = [
    (".spec.replicatedJobs[1].template.spec.template.spec.containers[0].image", "a deep plain path"),
    (".spec.replicatedJobs[] | .name", "an iterating path with a pipe"),
    (".status.replicatedJobsStatus[]?.ready // 0", "an optional iteration with a default"),
]

MATCHER = (
    '[.status.conditions[]? | select(.type == "Failed" and .status == "True")] | length > 0 '
    "and (.spec.suspend // false | not)"
)


def _per_call(function: Callable[[], object]) -> float:
    """Seconds per call: the best of 5 rounds, each long enough to time (0.06 s)."""
    return best(function, repeat=5, round_time=0.06)


def rows() -> list[dict[str, Any]]:
    obj = jobset()
    text = json.dumps(obj)
    size_kb = len(text) / 1024
    baseline = _per_call(json_loads_baseline(text))
    out: list[dict[str, Any]] = []

    def row(name: str, seconds: float, target: float | None) -> None:
        out.append(make_row(name, seconds * 1e6, baseline * 1e6, target, "us", digits=2, ratio_digits=4))

    for expr, what in PATHS:
        run = compile_fast(expr)
        assert run is not None, expr
        assert run(obj), expr
        seconds = _per_call(lambda run=run: run(obj))  # type: ignore[misc]
        row(f"jq fast path: {what} on a {size_kb:.0f} KB JobSet (x json.loads)", seconds, 0.2)

    small = jobset()
    small["spec"]["replicatedJobs"] = small["spec"]["replicatedJobs"][:1]
    small_text = json.dumps(small)
    small_baseline = _per_call(json_loads_baseline(small_text))
    deep = ".spec.replicatedJobs[0].template.spec.template.spec.containers[0].image"
    assert evaluate(deep, small) == [
        small["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]
    ]
    out.append(
        make_row(
            f"jq.evaluate (public call), a deep plain path, {len(small_text) / 1024:.0f} KB object (x json.loads)",
            _per_call(lambda: evaluate(deep, small)) * 1e6,
            small_baseline * 1e6,
            0.2,
            "us",
            digits=2,
            ratio_digits=4,
        )
    )

    def parse_and_check() -> None:
        parser.parse.cache_clear()
        assert safety.check_safety(MATCHER) == []

    row(
        "jq static check: parse + safety check of a status matcher, uncached (x json.loads)",
        _per_call(parse_and_check),
        None,
    )
    return out


if __name__ == "__main__":
    for item in rows():
        print(item)
