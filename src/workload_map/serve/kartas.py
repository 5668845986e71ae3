"""`wmap serve` following the cluster's Karta objects: a watch of them, and after every change (and once it has
listed) the definitions rebuilt with the new cluster layer, the local and built-in ones kept as they were
(`Engine.set_definitions`). A kubeconfig that may not list or watch Kartas (or a cluster without the Karta CRD)
leaves the definitions as read at start, with one note. The controller's dashboard gets its definitions from the
controller's own shared Karta watch instead (`controller/karta_feed.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from workload_map.catalog import DefinitionRegistry
from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.definitions import KARTA_RESOURCE, KARTAS_PATH, parse_cluster_kartas
from workload_map.cluster.errors import ClusterError
from workload_map.cluster.informer import Change, WatchedResource
from workload_map.cluster.informer_aio import AsyncInformer
from workload_map.model import Karta
from workload_map.serve.engine import Engine

__all__ = ["KARTAS", "follow_kartas", "with_cluster_layer"]

KARTAS = WatchedResource(path=KARTAS_PATH, kind="Karta", api_version="run.ai/v1alpha1", resource=KARTA_RESOURCE)


def with_cluster_layer(registry: DefinitionRegistry, cluster: list[Karta]) -> DefinitionRegistry:
    """`registry` with its cluster definitions replaced by `cluster` (the local and catalog ones kept)."""
    entries = registry.all()
    local = [e.karta for e in entries if e.origin == "local"]
    catalog = [e.karta for e in entries if e.origin == "catalog"]
    return DefinitionRegistry([("local", local), ("cluster", cluster), ("catalog", catalog)])


async def follow_kartas(client: AsyncApiClient, engine: Engine, log: Callable[[str], None]) -> None:
    """Until cancelled: hand the engine the definitions after every change of the cluster's Kartas."""
    base = engine.config.registry
    informer: AsyncInformer | None = None

    def changed(_change: Change | None = None) -> None:
        if informer is None or not informer.synced.is_set():
            return
        found = parse_cluster_kartas(list(informer.store))
        for line in found.warnings:
            log(f"warning: {line}")
        engine.set_definitions(with_cluster_layer(base, found.definitions))

    informer = AsyncInformer(client, KARTAS, on_change=changed, on_synced=lambda _synced: changed())
    try:
        await informer.run()
    except ClusterError as exc:
        log(f"note: not following Kartas ({exc.message}); a Karta applied later is served after a restart")
