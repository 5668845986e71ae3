"""The serve layer in the controller process (`--dashboard-bind-address`, issue 23): the workloads as Prometheus
metrics, the JSON API and the dashboard of `wmap serve` (docs/serve.md), over the controller's own client, with
every data route behind the user's token (TokenReview, then a SubjectAccessReview per namespace and kind, cached
60 s: `serve.access`). A user sees only what their token may list, never what the controller's ServiceAccount
may.

Every replica serves (it is read-only, not leader work). The definitions are the cluster's Kartas over the
built-in catalog, followed live: the process's Karta watch (`karta_feed.py`, shared with the operator and the
grouper, which use it only on the leader) hands each new set to the engine (`Engine.set_definitions`), so a Karta added,
changed or deleted takes effect without a restart: a kind it covers is watched, its workloads read through the
new definition, a kind no definition covers any more leaves the dashboard. Discovery is read once at start, and
the engine watches CRDs for types installed later.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.definitions import definitions_op, parse_cluster_kartas
from workload_map.cluster.discovery import fetch_op
from workload_map.cluster.errors import ClusterError
from workload_map.cluster.informer import Change
from workload_map.controller.health import parse_bind_address
from workload_map.controller.karta_feed import KartaFeed
from workload_map.controller.options import ControllerOptions
from workload_map.jq import INPROCESS, EvaluationPolicy
from workload_map.serve import ServeError
from workload_map.serve.engine import EngineConfig
from workload_map.serve.run import Server

__all__ = ["run_dashboard", "start_dashboard"]

log = logging.getLogger("workload_map.controller")

# Definitions from the cluster are not ours: their jq runs in the worker, under a deadline (as the grouper's).
_CLUSTER_POLICY = EvaluationPolicy("worker", deadline=10.0)


def _policy(_name: str, origin: str) -> EvaluationPolicy:
    return _CLUSTER_POLICY if origin == "cluster" else INPROCESS


async def start_dashboard(client: AsyncApiClient, options: ControllerOptions) -> Server | None:
    """The dashboard's server, listening (None when `--dashboard-bind-address` is 0); raises `ServeError` when
    the address cannot be bound."""
    address = parse_bind_address(options.dashboard_bind_address)
    if address is None:
        return None
    discovery = await client.run(fetch_op())
    found = await client.run(definitions_op())
    for line in found.warnings:
        log.warning("dashboard: %s", line)
    registry = DefinitionRegistry([("cluster", found.definitions), ("catalog", builtin_definitions())])
    # one namespace is watched alone; several (or none) are watched cluster-wide, each user's token deciding
    namespace = options.namespaces[0] if len(options.namespaces) == 1 else None
    host, port = address
    server = Server(
        client,
        EngineConfig(discovery=discovery, registry=registry, namespace=namespace, policy_for=_policy),
        host=host,
        port=port,
        user_tokens=True,
        log=lambda line: log.info("dashboard: %s", line),
    )
    await server.start()
    return server


def _registry(items: list[dict[str, Any]]) -> DefinitionRegistry:
    found = parse_cluster_kartas(items)
    for line in found.warnings:
        log.warning("dashboard: %s", line)
    return DefinitionRegistry([("cluster", found.definitions), ("catalog", builtin_definitions())])


async def follow_kartas(kartas: KartaFeed, server: Server) -> None:
    """Give the engine the definitions after every change of the cluster's Kartas (and once the watch has listed,
    which may already differ from the read at start). A watch that cannot go on (no Karta CRD, RBAC) is logged;
    the dashboard goes on with the definitions it has."""

    def changed(_change: Change | None = None) -> None:
        if kartas.synced.is_set():
            server.engine.set_definitions(_registry(list(kartas.store)))

    kartas.subscribe(changed)
    try:
        await kartas.listed()
        changed()
        await asyncio.shield(kartas.start())  # ends only on an error; shielded: the watch is not ours to cancel
    except ClusterError as exc:
        log.warning("dashboard: not following Kartas (a change is served after a restart): %s", exc)
    finally:
        kartas.unsubscribe(changed)


async def run_dashboard(server: Server, stop: asyncio.Event, kartas: KartaFeed | None = None) -> None:
    """Serve until `stop` (following the cluster's Kartas through the process's `kartas` watch); an engine that
    cannot go on (no covered type can be listed) is logged, and the controller goes on without it."""
    following = asyncio.create_task(follow_kartas(kartas, server)) if kartas is not None else None
    try:
        await server.run(stop)
    except ServeError as exc:
        log.error("dashboard: stopped: %s", exc.message)
    finally:
        if following is not None:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
        await server.close()
