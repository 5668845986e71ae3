"""The cluster layer: the only code that talks to a Kubernetes API server.

    from workload_map.cluster import Cluster, ConnectionSettings

    with Cluster(ConnectionSettings(context="prod")) as cluster:
        found = cluster.definitions()                       # Karta objects of the cluster (one LIST)
        rtype = cluster.resolve_type("jobset", registry)    # discovery (cached) + definitions
        live = cluster.fetch_workload(rtype, "train", namespace="ml")

Kubeconfig handling (`kubeconfig`), the HTTP client with request accounting (`client`), discovery with a disk cache
(`discovery`), TYPE tokens (`typetokens`, pure), the cluster's Karta definitions (`definitions`), owner lists and
the owner-chain walks (`owners`) and the `Cluster` facade (`session`). See docs/live.md.
"""

from workload_map.cluster.client import (
    DEFAULT_CHUNK_SIZE,
    USER_AGENT,
    ApiClient,
    ListResult,
    Operation,
    RequestRecord,
)
from workload_map.cluster.definitions import (
    KARTAS_PATH,
    ClusterDefinitions,
    ClusterDefinitionSource,
    load_cluster_definitions,
    parse_cluster_kartas,
)
from workload_map.cluster.discovery import (
    DEFAULT_TTL,
    APIResource,
    Discovery,
    DiscoveryDocument,
    default_cache_dir,
)
from workload_map.cluster.errors import (
    AmbiguousType,
    ApiError,
    ClusterError,
    Conflict,
    Forbidden,
    KubeconfigError,
    NotFound,
    NotServed,
    ResponseTooLarge,
    TypeNotCovered,
    Unauthorized,
    Unreachable,
    WorkloadNotFound,
)
from workload_map.cluster.kubeconfig import (
    DEFAULT_REQUEST_TIMEOUT,
    ConnectionSettings,
    KubeContext,
    load_context,
    parse_duration,
)
from workload_map.cluster.owners import OwnerLoader, TopLevelResult, top_level, walk_pod_owners
from workload_map.cluster.session import Cluster, LiveWorkload
from workload_map.cluster.typetokens import ResolvedType, readings, resolve_type

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_TTL",
    "KARTAS_PATH",
    "USER_AGENT",
    "APIResource",
    "AmbiguousType",
    "ApiClient",
    "ApiError",
    "Cluster",
    "ClusterDefinitionSource",
    "ClusterDefinitions",
    "ClusterError",
    "Conflict",
    "ConnectionSettings",
    "Discovery",
    "DiscoveryDocument",
    "Forbidden",
    "KubeContext",
    "KubeconfigError",
    "ListResult",
    "LiveWorkload",
    "NotFound",
    "NotServed",
    "Operation",
    "OwnerLoader",
    "RequestRecord",
    "ResolvedType",
    "ResponseTooLarge",
    "TopLevelResult",
    "TypeNotCovered",
    "Unauthorized",
    "Unreachable",
    "WorkloadNotFound",
    "default_cache_dir",
    "load_cluster_definitions",
    "load_context",
    "parse_cluster_kartas",
    "parse_duration",
    "readings",
    "resolve_type",
    "top_level",
    "walk_pod_owners",
]
