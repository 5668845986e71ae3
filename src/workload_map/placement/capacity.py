"""What a cluster has, per resource name and per node pool: allocatable, requested by the pods bound to its nodes,
and free (allocatable minus requested, per node, never below zero, then summed).

A node pool is the nodes sharing the values of a few labels (`DEFAULT_POOL_LABELS`: the instance type and the GPU
product); a node without one of them shows `<none>` for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from workload_map.placement.snapshot import ClusterSnapshot, NodeState
from workload_map.resources import NANO, format_for_table, is_extended_resource

__all__ = ["DEFAULT_POOL_LABELS", "CapacityReport", "PoolCapacity", "ResourceCapacity", "capacity"]

DEFAULT_POOL_LABELS: Final = ("node.kubernetes.io/instance-type", "nvidia.com/gpu.product")
NO_VALUE: Final = "<none>"


@dataclass(frozen=True)
class ResourceCapacity:
    """One resource's totals in nanos (`workload_map.resources.NANO` per unit)."""

    resource: str
    allocatable: int
    requested: int
    free: int

    def quantities(self) -> tuple[str, str, str]:
        """Allocatable, requested and free as quantities (`"8"`, `"500m"`, `"16Gi"`)."""
        return tuple(  # type: ignore[return-value]
            format_for_table(self.resource, Fraction(n, NANO)) for n in (self.allocatable, self.requested, self.free)
        )

    def to_dict(self) -> dict[str, Any]:
        allocatable, requested, free = self.quantities()
        return {"allocatable": allocatable, "requested": requested, "free": free}


@dataclass(frozen=True)
class PoolCapacity:
    """The nodes sharing `labels` (label key and value, `<none>` when absent)."""

    labels: tuple[tuple[str, str], ...]
    nodes: int
    resources: tuple[ResourceCapacity, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": dict(self.labels),
            "nodes": self.nodes,
            "resources": {r.resource: r.to_dict() for r in self.resources},
        }


@dataclass(frozen=True)
class CapacityReport:
    """A cluster's totals per resource and per pool."""

    cluster: str
    nodes: int
    resources: tuple[ResourceCapacity, ...]
    pools: tuple[PoolCapacity, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "resources": {r.resource: r.to_dict() for r in self.resources},
            "pools": [pool.to_dict() for pool in self.pools],
        }


def _totals(nodes: Sequence[NodeState], names: Sequence[str]) -> tuple[ResourceCapacity, ...]:
    out = []
    for name in names:
        allocatable = sum(node.allocatable.get(name, 0) for node in nodes)
        requested = sum(node.requested.get(name, 0) for node in nodes)
        out.append(ResourceCapacity(name, allocatable, requested, sum(node.free(name) for node in nodes)))
    return tuple(out)


def accelerator_resources(nodes: Iterable[NodeState]) -> list[str]:
    """The extended resources (`nvidia.com/gpu`, MIG slices, TPUs, ...) some node offers, sorted."""
    return sorted({name for node in nodes for name in node.allocatable if is_extended_resource(name)})


def capacity(
    snapshot: ClusterSnapshot,
    *,
    pool_labels: Sequence[str] = DEFAULT_POOL_LABELS,
    resources: Sequence[str] | None = None,
) -> CapacityReport:
    """Totals of `resources` (None: every accelerator some node offers) for the cluster and per pool of
    `pool_labels`, pools sorted by their label values."""
    names = list(resources) if resources is not None else accelerator_resources(snapshot.nodes)
    pools: dict[tuple[str, ...], list[NodeState]] = {}
    for node in snapshot.nodes:
        values = tuple(node.labels.get(key, NO_VALUE) for key in pool_labels)
        pools.setdefault(values, []).append(node)
    return CapacityReport(
        snapshot.name,
        len(snapshot.nodes),
        _totals(snapshot.nodes, names),
        tuple(
            PoolCapacity(tuple(zip(pool_labels, values, strict=True)), len(members), _totals(members, names))
            for values, members in sorted(pools.items())
        ),
    )
