"""Resource arithmetic cost, as ratios against a baseline measured in the same run.

Rows:
* ``pod_requests`` on a typical 3-container pod (an init container, a sidecar, a GPU main container), against
  ``json.loads`` of that pod's JSON text: the price of the scheduler's formula relative to merely decoding the pod.
* ``parse_quantity`` on distinct, never-seen quantity strings (cache cold), against ``decimal.Decimal`` on the
  numeric part of the same strings.

Run alone: ``python benchmarks/bench_resources.py``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from _common import best, json_loads_baseline, row
from workload_map.resources.formula import pod_requests
from workload_map.resources.quantity import _parse_text, parse_quantity

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "llama-finetune-worker-0",
        "namespace": "ml-team",
        "labels": {"training.kubeflow.org/replica-type": "worker", "training.kubeflow.org/replica-index": "0"},
    },
    "spec": {
        "initContainers": [
            {
                "name": "fetch-weights",
                "image": "busybox:1.36",
                "command": ["sh", "-c", "cp -r /src /weights"],
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
            },
            {
                "name": "log-shipper",
                "image": "fluent-bit:3.0",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m"}},
            },
        ],
        "containers": [
            {
                "name": "pytorch",
                "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                "command": ["torchrun", "train.py"],
                "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                "resources": {
                    "requests": {"cpu": "8", "memory": "64Gi"},
                    "limits": {"nvidia.com/gpu": "8", "memory": "64Gi"},
                },
            }
        ],
        "restartPolicy": "OnFailure",
        "schedulerName": "default-scheduler",
    },
}


def _best_us(stmt: Any, number: int, repeat: int = 5) -> float:
    """Microseconds per call, the best of `repeat` rounds of `number` calls with the collector off (as timeit)."""
    return best(stmt, repeat=repeat, number=number, gc_off=True) * 1e6


def rows() -> list[dict[str, Any]]:
    text = json.dumps(POD)
    spec = POD["spec"]
    loads = _best_us(json_loads_baseline(text), 2000)
    requests = _best_us(lambda: pod_requests(spec), 2000)

    strings = [f"{i}.{i % 997}Mi" for i in range(2000)]
    numbers = [s[:-2] for s in strings]

    def cold_parse() -> None:
        _parse_text.cache_clear()
        for s in strings:
            parse_quantity(s)

    def decimals() -> None:
        for s in numbers:
            Decimal(s)

    parse = _best_us(cold_parse, 1) / len(strings)
    decimal = _best_us(decimals, 1) / len(strings)
    return [
        row("pod_requests, 3-container pod (vs json.loads of the pod)", requests, loads, 5.0, "us", digits=2),
        row("parse_quantity, uncached (vs Decimal of the number)", parse, decimal, None, "us"),
    ]


if __name__ == "__main__":
    for item in rows():
        print(item)
