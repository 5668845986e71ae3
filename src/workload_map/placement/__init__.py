"""Placement: whether a workload's gangs fit a cluster now, on which nodes, how well, and if not why; and what a
cluster has free per accelerator and node pool. Pure: it reads Node and Pod dicts and gang plans, never the network.

    from workload_map.placement import ClusterSnapshot, capacity, place, rank

    snapshot = ClusterSnapshot.from_objects(nodes, pods, name="prod")
    result = place([gang_plan], snapshot)          # ClusterPlacement: fits, score, gangs, reason
    report = capacity(snapshot)                    # allocatable / requested / free per resource and pool

See docs/placement.md (the rules, the score, what is not modelled).
"""

from workload_map.placement.capacity import (
    DEFAULT_POOL_LABELS,
    CapacityReport,
    PoolCapacity,
    ResourceCapacity,
    accelerator_resources,
    capacity,
)
from workload_map.placement.fit import NOT_MODELLED, POD_BY_POD, ClusterPlacement, GangPlacement, PodByPod, place, rank
from workload_map.placement.rules import PodConstraints, expression_matches, tolerates
from workload_map.placement.snapshot import ClusterSnapshot, NodeState, PlacementError, Taint

__all__ = [
    "DEFAULT_POOL_LABELS",
    "NOT_MODELLED",
    "POD_BY_POD",
    "CapacityReport",
    "ClusterPlacement",
    "ClusterSnapshot",
    "GangPlacement",
    "NodeState",
    "PlacementError",
    "PodByPod",
    "PodConstraints",
    "PoolCapacity",
    "ResourceCapacity",
    "Taint",
    "accelerator_resources",
    "capacity",
    "expression_matches",
    "place",
    "rank",
    "tolerates",
]
