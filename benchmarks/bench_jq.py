"""jq engine cost, as ratios against `json.loads` of the same object's JSON text, measured in the same run.

Rows (the object is a ~20 KB JobSet: a driver, three worker groups and an evaluator, with a running status):
* one evaluation of a status matcher (an expression the fast path does not take) on a fresh Document: through
  the public API (compiled to Python closures, in process), through libjq on the subtrees it reads, and through
  libjq with the whole object converted (the worst case);
* the built-in JobSet definition's own expressions (catalog/definitions/jobset-...yaml), compiled path vs libjq
  path (one combined libjq program on the pruned JSON text), conversion included in both;
* every expression of a JobSet-sized definition (25: instance ids, templates, scales, fragmented fields, phase,
  conditions, six `byExpression` matchers) on one object via `Document.evaluate_many`: target <= 10x json.loads;
  the same 25 expressions as 25 separate `evaluate` calls, for comparison;
* the same 25 expressions the first time in a process (parse, analysis and one libjq compile included);
* the compile cache: a hit (cached program) and a miss (libjq compile of a fresh expression);
* the same 25 expressions through the worker process (mode "worker"): the pipe round trip included.

Run alone: `python benchmarks/bench_jq.py`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jq as libjq
import yaml

import workload_map
from _common import interleaved, json_loads_baseline
from _common import row as make_row
from workload_map.jq import Document, EvaluationPolicy, compiler, convert, engine, evaluate, fastpath, parser, worker


def _container(name: str, index: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"nvcr.io/nvidia/pytorch:24.0{index}-py3",
        "imagePullPolicy": "IfNotPresent",
        "command": ["torchrun", "--nnodes=4", "--nproc_per_node=8", "/workspace/train.py"],
        "args": ["--config", "/etc/config/train.yaml", "--epochs", "10", "--batch-size", "256"],
        "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{name}"} for k in range(12)]
        + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "ports": [{"containerPort": 29500 + index, "name": "dist", "protocol": "TCP"}],
        "resources": {
            "limits": {"nvidia.com/gpu": 8, "cpu": "32", "memory": "256Gi"},
            "requests": {"nvidia.com/gpu": 8, "cpu": "16", "memory": "128Gi"},
        },
        "volumeMounts": [
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "config", "mountPath": "/etc/config", "readOnly": True},
        ],
    }


def _replicated_job(name: str, replicas: int, parallelism: int) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"labels": {"app": "trainer", "role": name}},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "backoffLimit": 0,
                "completionMode": "Indexed",
                "template": {
                    "metadata": {
                        "labels": {"app": "trainer", "role": name, "team": "ml-platform"},
                        "annotations": {"sidecar.istio.io/inject": "false", "prometheus.io/scrape": "true"},
                    },
                    "spec": {
                        "restartPolicy": "Never",
                        "schedulerName": "kai-scheduler",
                        "priorityClassName": "high",
                        "serviceAccountName": "trainer",
                        "containers": [_container(name, 1), _container(name + "-sidecar", 2)],
                        "volumes": [
                            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}},
                            {"name": "config", "configMap": {"name": "train-config"}},
                        ],
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                        "affinity": {
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {
                                                    "key": "nvidia.com/gpu.product",
                                                    "operator": "In",
                                                    "values": ["NVIDIA-H100-80GB-HBM3"],
                                                }
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


def jobset() -> dict[str, Any]:
    """A ~20 KB JobSet with a running status."""
    jobs = [
        _replicated_job("driver", 1, 1),
        _replicated_job("workers-a", 4, 2),
        _replicated_job("workers-b", 2, 2),
        _replicated_job("evaluator", 1, 1),
        _replicated_job("checkpointer", 1, 1),
    ]
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": "llm-pretrain",
            "namespace": "research",
            "uid": "6f0c1f0e-2f57-4c1b-9d0c-3f4f5e6a7b8c",
            "generation": 3,
            "resourceVersion": "918273",
            "creationTimestamp": "2026-01-10T10:00:00Z",
            "labels": {"kueue.x-k8s.io/queue-name": "research", "app": "trainer"},
            "annotations": {"description": "pretraining run"},
        },
        "spec": {
            "suspend": False,
            "network": {"enableDNSHostnames": True, "subdomain": "llm-pretrain"},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["workers-a"]},
            "failurePolicy": {"maxRestarts": 3},
            "replicatedJobs": jobs,
        },
        "status": {
            "restarts": 0,
            "conditions": [
                {
                    "type": "StartupPolicyCompleted",
                    "status": "True",
                    "reason": "StartupPolicyCompleted",
                    "message": "startup policy in order completed",
                    "lastTransitionTime": "2026-01-10T10:01:00Z",
                }
            ],
            "replicatedJobsStatus": [
                {"name": job["name"], "ready": job["replicas"], "succeeded": 0, "failed": 0, "active": job["replicas"]}
                for job in jobs
            ],
        },
    }


_JOBS = ".spec.replicatedJobs[]?"
_POD = f"{_JOBS} | .template.spec.template"
_WANT = "([.spec.replicatedJobs[]? | .replicas // 1] | add // 0)"
_HAVE = "([(.status.replicatedJobsStatus // [])[] | (.ready // 0) + (.succeeded // 0)] | add // 0)"
_SUSPENDED = '((.status.conditions // []) | any(.type == "Suspended" and .status == "True"))'

MATCHER = f"({_WANT} > {_HAVE}) | tostring"
"""A status matcher (libjq: the fast path does not take it)."""

DEFINITION = [
    # instance ids, pod templates, scales (min/max too)
    f"{_JOBS} | .name",
    _POD,
    f"{_JOBS} | (.replicas // 1) * ([.template.spec.parallelism // 1, "
    ".template.spec.completions // .template.spec.parallelism // 1] | min)",
    f"{_JOBS} | .replicas",
    f"{_JOBS} | .template.spec.parallelism",
    # fragmented pod spec fields
    f"{_POD} | .spec.schedulerName",
    f"{_POD} | .spec.priorityClassName",
    f"{_POD} | .spec.containers",
    f"{_POD} | .spec.containers[0]",
    f"{_POD} | .spec.containers[0].image",
    f"{_POD} | .spec.containers[0].resources",
    f"{_POD} | .metadata.labels",
    f"{_POD} | .metadata.annotations",
    f"{_POD} | .spec.affinity.nodeAffinity",
    f"{_POD} | .spec.affinity.podAffinity",
    # status: phase, conditions and the matchers (evaluated as `(<expression>) | tostring`)
    ".status.terminalState",
    ".status.conditions",
    MATCHER,
    f"({_WANT} as $jobs | $jobs > 0 and {_HAVE} >= $jobs) | tostring",
    "(.spec.suspend == true) | tostring",
    f"(.spec.suspend == true and ({_SUSPENDED} | not)) | tostring",
    "(.spec.suspend != true) | tostring",
    '((.status.conditions // []) | map(select(.type == "Failed")) | length > 0) | tostring',
    # suspend action path and metadata
    ".spec.suspend",
    ".metadata.name",
]


def _check(results: list[Any]) -> None:
    bad = [r for r in results if not isinstance(r, list)]
    assert not bad, bad


def rows() -> list[dict[str, Any]]:
    obj = jobset()
    text = json.dumps(obj)
    size_kb = len(text) / 1024
    out: list[dict[str, Any]] = []

    baseline = json_loads_baseline(text)

    def row(name: str, function: Callable[[], object], target: float | None) -> None:
        seconds, base = interleaved(function, baseline, rounds=7, round_time=0.04)
        out.append(make_row(name, seconds * 1e6, base * 1e6, target, "us", digits=1))

    assert engine.compile_expression(MATCHER).fast is None
    assert engine.compile_expression(MATCHER).compiled is not None
    row(
        f"jq: one status matcher on a fresh {size_kb:.0f} KB JobSet, compiled path (x json.loads)",
        lambda: evaluate(MATCHER, obj),
        None,
    )
    matcher_roots = engine.compile_expression(MATCHER).roots
    row(
        "jq: the same matcher through libjq, read subtrees converted (x json.loads)",
        lambda: engine.run_one(MATCHER, convert.encode(convert.prune(obj, matcher_roots))),
        None,
    )
    row(
        f"jq: one libjq evaluation, whole {size_kb:.0f} KB object converted (x json.loads)",
        lambda: engine.run_one(MATCHER, convert.encode(obj)),
        None,
    )
    _check(Document(obj).evaluate_many(DEFINITION))
    row(
        f"jq: {len(DEFINITION)} expressions of a JobSet definition, Document.evaluate_many (x json.loads)",
        lambda: Document(obj).evaluate_many(DEFINITION),
        10,
    )
    row(
        f"jq: the same {len(DEFINITION)} expressions as separate evaluate() calls (x json.loads)",
        lambda: [evaluate(expr, obj) for expr in DEFINITION],
        None,
    )

    def cold() -> object:
        caches = (
            engine.compile_expression,
            engine._program,
            fastpath.compile_fast,
            compiler.compile_closure,
            parser.parse,
        )
        for cached in caches:
            clear = getattr(cached, "cache_clear", None)
            if clear is not None:
                clear()
        return Document(obj).evaluate_many(DEFINITION)

    row(
        f"jq: the {len(DEFINITION)} expressions, first time in a process (every cache cleared) (x json.loads)",
        cold,
        None,
    )

    out.extend(_catalog_rows(obj, baseline, row))

    program = engine._program(MATCHER)
    fresh = (f"{MATCHER} | . + {n}" for n in itertools.count())
    row("jq: compile cache hit (x json.loads)", lambda: engine._program(MATCHER), None)
    row("jq: compile cache miss, libjq compile (x json.loads)", lambda: libjq.compile(next(fresh)), None)
    assert program is engine._program(MATCHER)

    contained = EvaluationPolicy("worker")
    try:
        _check(Document(obj, policy=contained).evaluate_many(DEFINITION))
        row(
            f"jq: the {len(DEFINITION)} expressions in mode 'worker' (x json.loads)",
            lambda: Document(obj, policy=contained).evaluate_many(DEFINITION),
            None,
        )
    finally:
        worker.shutdown()
    return out


CATALOG_JOBSET = Path(workload_map.__file__).parent / "catalog" / "definitions" / "jobset-x-k8s-io-jobset-v1alpha2.yaml"


def _catalog_expressions() -> list[str]:
    found: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key.endswith(("path", "Path", "expression", "keyPath", "idPath")):
            found.append(node)

    walk(yaml.safe_load(CATALOG_JOBSET.read_text()))
    return list(dict.fromkeys(found))


def _catalog_rows(obj: dict[str, Any], baseline: Callable[[], object], row: Any) -> list[dict[str, Any]]:
    """The catalog's JobSet expressions: compiled path (what Document does in process) vs the libjq path."""
    exprs = _catalog_expressions()
    infos = [engine.compile_expression(expr) for expr in exprs]
    python = [e for e, info in zip(exprs, infos, strict=True) if info.fast is None and info.compiled is not None]
    slow_roots: Any = set()
    for info in infos:
        slow_roots = None if info.roots is None or slow_roots is None else slow_roots | info.roots
    roots = None if slow_roots is None else frozenset(slow_roots)
    _check(Document(obj).evaluate_many(exprs))
    _check(engine.run_batch(exprs, convert.encode(convert.prune(obj, roots))))
    row(
        f"jq: the {len(exprs)} catalog JobSet expressions ({len(python)} compiled, the rest plain paths), "
        "compiled path (x json.loads)",
        lambda: Document(obj).evaluate_many(exprs),
        None,
    )
    row(
        f"jq: the same {len(exprs)} through libjq (one program, read subtrees converted) (x json.loads)",
        lambda: engine.run_batch(exprs, convert.encode(convert.prune(obj, roots))),
        None,
    )
    return []


if __name__ == "__main__":
    for item in rows():
        print(item)
