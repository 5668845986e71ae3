"""A cluster's nodes and the pods bound to them, read for placement (`workload_map.placement`, docs/placement.md).

Two paged LISTs: every Node, and every Pod of the cluster that has not finished (a field selector on
`status.phase`, so finished pods are not sent at all). Needs `list` on nodes and on pods in all namespaces.
"""

from __future__ import annotations

from typing import Final

from workload_map.cluster.client import Operation
from workload_map.cluster.session import Cluster
from workload_map.placement import ClusterSnapshot

__all__ = ["UNFINISHED_PODS", "read_snapshot"]

UNFINISHED_PODS: Final = "status.phase!=Succeeded,status.phase!=Failed"


def read_snapshot(cluster: Cluster, name: str) -> ClusterSnapshot:
    """The snapshot of `cluster`, called `name` in the placement answers. Raises `ClusterError` (an unreachable
    server, a refused list)."""
    nodes = cluster.client.list("/api/v1/nodes", op=Operation("list", "nodes"), chunk_size=cluster.chunk_size)
    pods = cluster.client.list(
        "/api/v1/pods",
        op=Operation("list", "pods"),
        params={"fieldSelector": UNFINISHED_PODS},
        chunk_size=cluster.chunk_size,
    )
    return ClusterSnapshot.from_objects(nodes.items, pods.items, name=name)
