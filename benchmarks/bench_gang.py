"""Gang plans at the size of a large job, as ratios against decoding the same pods.

The scenarios (pods labelled as their controllers label them, resolved through the catalog's definitions):

* **JobSet, 1,000 pods**: a driver replicatedJob (1 x 1) and a workers replicatedJob (111 x 9): one gang (1,000
  pods) with a sub-group per replicatedJob and a leaf per Job (113 sub-groups).
* **LeaderWorkerSet, 1,000 pods**: 125 groups of 8 (a leader and 7 workers): 125 gangs, one per group.

Rows:
* `plan(resolution, pods)` per pod, against `json.loads` of the same pods' JSON text (what the cluster layer pays to
  decode them anyway). Each pod's leaf component, member (candidates and filters), group keys and gang are worked
  out; the `Workload` is built and resolved beforehand (set-up, reported in its own row).
* `plan(resolution)` from the spec alone (no pods), against `json.loads` of the workload's own JSON text.
* `export(plan, "kai")` of the LWS plan (125 PodGroups), per PodGroup, against `json.loads` of the PodGroups' JSON.

Run alone: ``python benchmarks/bench_gang.py``.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

from _common import best, json_loads_baseline
from _common import row as _row
from workload_map.catalog import builtin_registry
from workload_map.gang import export, plan
from workload_map.resolve import Resolution, Workload

NAMESPACE = "bench"


def _container(name: str, gpus: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": "ghcr.io/example/trainer:1.0",
        "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": gpus}},
    }


def _pod(name: str, labels: dict[str, str], owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "labels": labels,
            "ownerReferences": [owner],
        },
        "spec": {"containers": [_container("main", 8)], "nodeName": f"node-{hash(name) % 500}"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def jobset_scenario(workers: int = 111, parallelism: int = 9) -> tuple[dict[str, Any], str]:
    """A JobSet with 1 + workers x parallelism pods, and the pods' JSON text."""
    name = "pretrain"
    jobs = (("driver", 1, 1), ("workers", workers, parallelism))
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": "uid-jobset"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": job,
                    "replicas": replicas,
                    "template": {
                        "spec": {
                            "parallelism": each,
                            "completions": each,
                            "template": {"spec": {"containers": [_container(job, 8)]}},
                        }
                    },
                }
                for job, replicas, each in jobs
            ]
        },
    }
    pods = []
    for job, replicas, each in jobs:
        for index in range(replicas):
            owner = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": f"{name}-{job}-{index}",
                "uid": f"job-{job}-{index}",
            }
            for completion in range(each):
                labels = {
                    "jobset.sigs.k8s.io/jobset-name": name,
                    "jobset.sigs.k8s.io/replicatedjob-name": job,
                    "jobset.sigs.k8s.io/job-index": str(index),
                    "batch.kubernetes.io/job-completion-index": str(completion),
                }
                pods.append(_pod(f"{name}-{job}-{index}-{completion}", labels, owner))
    return obj, json.dumps(pods)


def lws_scenario(groups: int = 125, size: int = 8) -> tuple[dict[str, Any], str]:
    """A LeaderWorkerSet of `groups` groups of `size`, and the pods' JSON text."""
    name = "serve"
    template = {"spec": {"containers": [_container("vllm", 8)]}}
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": "uid-lws"},
        "spec": {"replicas": groups, "leaderWorkerTemplate": {"size": size, "workerTemplate": template}},
    }
    pods = []
    for group in range(groups):
        owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": f"{name}-{group}", "uid": f"sts-{group}"}
        for worker in range(size):
            labels = {
                "leaderworkerset.sigs.k8s.io/name": name,
                "leaderworkerset.sigs.k8s.io/group-index": str(group),
                "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
            }
            pods.append(_pod(f"{name}-{group}" + (f"-{worker}" if worker else ""), labels, owner))
    return obj, json.dumps(pods)


def _best(run: Callable[[], Any], repeat: int) -> float:
    return best(run, repeat=repeat, collect=True)


def _workload(obj: dict[str, Any]) -> Resolution:
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None
    resolution = Workload(resolved.karta, obj).resolve()
    assert not resolution.errors  # reading the errors evaluates every part once (cached for the timed part)
    return resolution


def rows() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for label, scenario, expected in (
        ("JobSet", jobset_scenario, [1000]),
        ("LeaderWorkerSet", lws_scenario, [8] * 125),
    ):
        obj, text = scenario()
        pods: list[dict[str, Any]] = json.loads(text)
        n = len(pods)
        started = time.perf_counter()
        workload = _workload(obj)
        setup = time.perf_counter() - started

        gang_plan = plan(workload, pods)
        assert [gang.min_member for gang in gang_plan.gangs] == expected
        if label == "JobSet":
            assert len(gang_plan.gangs[0].sub_groups) == 2 + 1 + 111
        assert not gang_plan.unplaced and sum(len(gang.pods) for gang in gang_plan.gangs) == n

        loads = _best(json_loads_baseline(text), 5) / n * 1e6
        with_pods = _best(functools.partial(plan, workload, pods), 5) / n * 1e6
        out.append(
            _row(
                f"plan with pods, {label} of {n:,} pods, per pod (vs json.loads of the pods)",
                with_pods,
                loads,
                3.0 if label == "JobSet" else 10.0,
                "us",
            )
        )
        obj_text = json.dumps(obj)
        offline = _best(functools.partial(plan, workload), 5) * 1e6
        obj_loads = _best(json_loads_baseline(obj_text), 50) * 1e6
        out.append(_row(f"plan from the spec, {label} (vs json.loads of the workload)", offline, obj_loads, None, "us"))
        out.append(_row(f"set-up: Workload + resolve of the {label} (not timed above)", setup * 1e3, None, None, "ms"))
        if label == "LeaderWorkerSet":
            offline_plan = plan(workload)
            manifests = export(offline_plan, "kai")
            count = len(manifests)
            manifests_text = json.dumps(manifests)
            exported = _best(functools.partial(export, offline_plan, "kai"), 5) / count * 1e6
            decoded = _best(json_loads_baseline(manifests_text), 5) / count * 1e6
            out.append(
                _row(
                    f"export to KAI, {count} PodGroups, per PodGroup (vs json.loads of them)",
                    exported,
                    decoded,
                    None,
                    "us",
                )
            )
    return out


if __name__ == "__main__":
    for row in rows():
        print(f"{row['name']}: {row['figure']} {row['unit']} (baseline {row['baseline']}, ratio {row['ratio']})")
