"""Placement (issue 24): a 1,000-pod gang onto a 5,000-node cluster, time and memory.

The cluster: 5,000 nodes of 8 `nvidia.com/gpu` in 50 racks, a tenth of them tainted (`dedicated=infer:NoSchedule`),
with 10,000 bound pods already taking 0-8 GPUs per node (a fixed random seed). Three gangs are placed on it:

* `1-gpu pods`: 1,000 pods of 1 GPU, one role, no constraints (best fit packs the fragmented nodes first);
* `8-gpu pods, selector + toleration`: 1,000 whole-node pods with a nodeSelector and a toleration;
* `tree + rack, too large`: 125 sub-groups of 8 pods of 1 GPU, every one required, the gang kept inside one rack
  (`rack` label) that is too small: each rack is refused by its free total before any pod is tried;
* `tree + rack, fits`: 125 sub-groups of 8 CPU-only pods (8 cores each), placed sub-group by sub-group inside the
  smallest rack that holds them (every pod set of the tree placed, the topology loop's work when it fits);
* `pod by pod`: a workload without a gang (`PodByPod`, a Deployment's 1,000 replicas of 1 GPU), each pod placed
  on its own.

Rows: the snapshot built from the Node and Pod dicts; each placement (median of 5, wall clock) with its peak
Python allocation (tracemalloc, one extra run); the baseline of every time row is `json.loads` of the nodes' JSON
text (what reading the cluster's node list costs anyway). No target from the issue: it asks for the figures.
Run by hand: ``python benchmarks/bench_placement.py`` (never in CI).
"""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import _common
from workload_map.gang import Gang, GangPlan, GangRole, SubGroupPlan, Topology
from workload_map.placement import ClusterSnapshot, PodByPod, place
from workload_map.resolve import ObjectRef

NODES = 5_000
BOUND_PODS = 10_000
RACKS = 50
GPU = "nvidia.com/gpu"


def _nodes(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(NODES):
        tainted = i % 10 == 0
        out.append(
            {
                "metadata": {
                    "name": f"node-{i:05d}",
                    "labels": {
                        "rack": f"rack-{i % RACKS:02d}",
                        "node.kubernetes.io/instance-type": "p5.48xlarge",
                        "pool": "infer" if tainted else "train",
                    },
                },
                "spec": {"taints": [{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}] if tainted else []},
                "status": {"allocatable": {"cpu": "192", "memory": "2Ti", GPU: "8", "pods": "110"}},
            }
        )
    return out


def _pods(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(BOUND_PODS):
        gpus = rng.choice((0, 1, 1, 2, 4))
        out.append(
            {
                "metadata": {"name": f"running-{i}", "namespace": "default"},
                "spec": {
                    "nodeName": f"node-{rng.randrange(NODES):05d}",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "4", GPU: str(gpus)}}}],
                },
                "status": {"phase": "Running"},
            }
        )
    return out


def _role(name: str, count: int, gpus: int, spec: dict[str, Any] | None = None) -> GangRole:
    template = {"metadata": {}, "spec": {"containers": [{"name": "c"}], **(spec or {})}}
    return GangRole(name, name, "", count, count, {"cpu": Fraction(8), GPU: Fraction(gpus)}, template)


def _plan(gang: Gang) -> GangPlan:
    return GangPlan(ObjectRef("example.com/v1", "Train", "bench"), "", "d", "podGroups", "by-definition", (gang,))


def _tree(leaves: tuple[SubGroupPlan, ...]) -> Gang:
    roles = tuple(leaf.roles[0] for leaf in leaves)
    topology = Topology("default", required_level="rack")
    return Gang("tree", "tree", ("job",), 1_000, roles, sub_groups=leaves, topology=topology)


def _plans() -> dict[str, GangPlan]:
    one = _role("worker", 1_000, 1)
    whole = _role(
        "worker",
        1_000,
        8,
        {
            "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
            "tolerations": [{"key": "dedicated", "operator": "Exists"}],
        },
    )
    leaves = tuple(
        SubGroupPlan(f"job-{i}", "job", min_member=8, count=8, roles=(_role(f"job-{i}", 8, 1),)) for i in range(125)
    )
    tree = _tree(leaves)
    cpu_leaves = tuple(
        SubGroupPlan(f"job-{i}", "job", min_member=8, count=8, roles=(_role(f"job-{i}", 8, 0),)) for i in range(125)
    )
    return {
        "1-gpu pods": _plan(Gang("one", "one", ("worker",), 1_000, (one,))),
        "8-gpu pods, selector + toleration": _plan(Gang("whole", "whole", ("worker",), 1_000, (whole,))),
        "tree + rack, too large": _plan(tree),
        "tree + rack, fits": _plan(_tree(cpu_leaves)),
    }


def _peak_mib(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def rows() -> list[dict[str, Any]]:
    rng = random.Random(24)
    nodes, pods = _nodes(rng), _pods(rng)
    text = json.dumps({"items": nodes})
    baseline = _common.median(lambda: json.loads(text), repeat=5) * 1000
    snapshot_ms = _common.median(lambda: ClusterSnapshot.from_objects(nodes, pods), repeat=5) * 1000
    out = [
        _common.row(
            f"snapshot of {NODES:,} nodes and {BOUND_PODS:,} pods (vs json.loads of the nodes)",
            snapshot_ms,
            baseline,
            None,
            "ms",
            note=f"peak {_peak_mib(lambda: ClusterSnapshot.from_objects(nodes, pods)):.1f} MiB",
        )
    ]
    snapshot = ClusterSnapshot.from_objects(nodes, pods)
    demands: dict[str, GangPlan | PodByPod] = dict(_plans())
    demands["pod by pod"] = PodByPod("Deployment/bench", (_role("web", 1_000, 1),), "no gang")
    for name, gang_plan in demands.items():
        result = place([gang_plan], snapshot)
        ms = _common.median(lambda gang_plan=gang_plan: place([gang_plan], snapshot), repeat=5) * 1000
        peak = _peak_mib(lambda gang_plan=gang_plan: place([gang_plan], snapshot))
        outcome = f"fits, score {result.score}, {result.nodes_used} nodes" if result.fits else "does not fit"
        out.append(
            _common.row(
                f"place 1,000 pods: {name} (vs json.loads of the nodes)",
                ms,
                baseline,
                None,
                "ms",
                note=f"{outcome}; peak {peak:.1f} MiB",
            )
        )
    return out


if __name__ == "__main__":
    for entry in rows():
        print(json.dumps(entry), file=sys.stdout)
