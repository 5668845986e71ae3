"""`workload_map.asyncio`: the async door. The cluster client and session, and worker-mode jq, awaitable.

    import asyncio
    from workload_map.asyncio import AsyncCluster, ConnectionSettings, WorkerPool, EvaluationPolicy

    async def main() -> None:
        async with AsyncCluster(ConnectionSettings(context="prod")) as cluster, WorkerPool() as pool:
            rtype = await cluster.resolve_type("jobset", registry)
            jobs = (await cluster.list_objects(rtype, namespace="ml")).items
            phases = await asyncio.gather(
                *(pool.evaluate(".status.conditions", job, policy=EvaluationPolicy("worker")) for job in jobs)
            )

The implementation lives in the layers it belongs to, `workload_map.cluster.aio` (network I/O) and
`workload_map.jq.aio` (the worker pool), over the same sans-I/O core as the sync API; this module only names them.
Errors are the sync API's: `ClusterError` and its family, `JqError` and its family, all `WorkloadMapError`.
See docs/asyncio.md.
"""

from __future__ import annotations

from workload_map.cluster import (
    AmbiguousType,
    ApiError,
    ClusterDefinitions,
    ClusterError,
    Conflict,
    ConnectionSettings,
    Forbidden,
    KubeconfigError,
    KubeContext,
    ListResult,
    LiveWorkload,
    NotFound,
    NotServed,
    Operation,
    RequestRecord,
    ResolvedType,
    TopLevelResult,
    TypeNotCovered,
    Unauthorized,
    Unreachable,
    WorkloadNotFound,
)
from workload_map.cluster.aio import (
    AsyncApiClient,
    AsyncCluster,
    AsyncDiscovery,
    AsyncOwnerLoader,
    load_cluster_definitions,
    top_level,
    walk_pod_owners,
)
from workload_map.cluster.informer import Backoff, Change, Store, Synced, WatchedResource
from workload_map.cluster.informer_aio import AsyncInformer
from workload_map.errors import WorkloadMapError
from workload_map.jq import EvaluationPolicy, JqError, JqLimitError
from workload_map.jq.aio import WorkerPool

__all__ = [
    "AmbiguousType",
    "ApiError",
    "AsyncApiClient",
    "AsyncCluster",
    "AsyncDiscovery",
    "AsyncInformer",
    "AsyncOwnerLoader",
    "Backoff",
    "Change",
    "ClusterDefinitions",
    "ClusterError",
    "Conflict",
    "ConnectionSettings",
    "EvaluationPolicy",
    "Forbidden",
    "JqError",
    "JqLimitError",
    "KubeContext",
    "KubeconfigError",
    "ListResult",
    "LiveWorkload",
    "NotFound",
    "NotServed",
    "Operation",
    "RequestRecord",
    "ResolvedType",
    "Store",
    "Synced",
    "TopLevelResult",
    "TypeNotCovered",
    "Unauthorized",
    "Unreachable",
    "WatchedResource",
    "WorkerPool",
    "WorkloadMapError",
    "WorkloadNotFound",
    "load_cluster_definitions",
    "top_level",
    "walk_pod_owners",
]
