"""The Karta operator: keeps each Karta's status conditions and GVK labels true (`karta_status` decides them).

Two informers feed it: the Kartas, and the CustomResourceDefinitions (a CRD added, changed or removed re-checks
every Karta's `CRDExists`: discovery is read again, and for a kind a CRD defines the CRD's own served versions and
`Established` condition are what counts, so the answer does not wait for discovery to catch up). A Karta changed
also re-checks the Kartas of its old and new root kind (two Kartas of one kind are a condition on both).

A reconcile writes only what differs: the labels (a merge patch of metadata) and the conditions (a merge patch of
the status subresource), so its own writes, seen again by the informer, end in no write. A condition that turns
False (or changes its reason) also writes a Warning Event on the Karta.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.discovery import DiscoveryDocument, fetch_op
from workload_map.cluster.errors import ClusterError, NotFound
from workload_map.cluster.informer import Change, WatchedResource
from workload_map.cluster.informer_aio import AsyncInformer
from workload_map.controller.health import Metrics, Probes
from workload_map.controller.karta_feed import KARTAS, KartaFeed
from workload_map.controller.karta_status import karta_status, merge_conditions, root_gvk_of
from workload_map.controller.workqueue import WorkQueue
from workload_map.controller.writer import Writer, now

__all__ = ["KartaOperator"]

log = logging.getLogger("workload_map.controller")

CRDS = WatchedResource(
    path="/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    kind="CustomResourceDefinition",
    api_version="apiextensions.k8s.io/v1",
    resource="customresourcedefinitions.apiextensions.k8s.io",
)


def _crd_serves(crd: Mapping[str, Any], version: str) -> bool:
    established = any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in ((crd.get("status") or {}).get("conditions") or [])
        if isinstance(c, Mapping)
    )
    served = any(
        v.get("name") == version and v.get("served") is True
        for v in ((crd.get("spec") or {}).get("versions") or [])
        if isinstance(v, Mapping)
    )
    return established and served


class KartaOperator:
    def __init__(
        self, client: AsyncApiClient, writer: Writer, metrics: Metrics, probes: Probes, *, kartas: KartaFeed
    ) -> None:
        self.client = client
        self.writer = writer
        self.metrics = metrics
        self.probes = probes
        self.queue = WorkQueue()
        self.discovery: DiscoveryDocument | None = None
        self._rediscover = True
        self.feed = kartas  # the process's Karta watch (karta_feed.py), shared with the grouper and the dashboard
        self.kartas = kartas.informer
        self.crds = AsyncInformer(client, CRDS, on_change=self._crd_changed)
        metrics.queue_depth["karta"] = lambda: len(self.queue)
        probes.expect("kartas")
        probes.expect("crds")

    # --- what changed -------------------------------------------------------------------------------------------

    def _karta_changed(self, change: Change) -> None:
        self.queue.add(change.key)
        for obj in (change.object, change.old):
            gvk = root_gvk_of(obj) if obj is not None else None
            if gvk is not None:
                for other in self._same_kind(gvk):
                    self.queue.add(other)

    def _crd_changed(self, change: Change) -> None:
        self._rediscover = True
        for key in self.kartas.store.keys():  # noqa: SIM118 - a Store iterates its objects, not its keys
            self.queue.add(key)

    def _same_kind(self, gvk: tuple[str, str, str]) -> list[str]:
        found = []
        for obj in self.kartas.store:
            if root_gvk_of(obj) == gvk:
                found.append(str((obj.get("metadata") or {}).get("name") or ""))
        return found

    # --- the loop -----------------------------------------------------------------------------------------------

    async def run(self) -> None:
        tasks = [asyncio.create_task(self.crds.run())]
        self.feed.subscribe(self._karta_changed)
        try:
            await self.feed.listed()
            for key in self.kartas.store.keys():  # noqa: SIM118 - listed before we subscribed, maybe: each once
                self.queue.add(key)
            self.probes.ready("kartas")
            await _listed(self.crds, tasks[0])
            self.probes.ready("crds")
            while True:
                key = await self.queue.get()
                start = time.perf_counter()
                try:
                    await self.reconcile(key)
                except ClusterError as exc:
                    log.warning("Karta %s: %s (retried)", key, exc)
                    self.metrics.reconciled("karta", "error", time.perf_counter() - start)
                    self.queue.retry(key)
                else:
                    self.metrics.reconciled("karta", "success", time.perf_counter() - start)
                    self.queue.forget(key)
        finally:
            self.feed.unsubscribe(self._karta_changed)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def served(self, group: str, version: str, kind: str) -> bool:
        for crd in self.crds.store:
            spec = crd.get("spec") or {}
            if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
                return _crd_serves(crd, version)
        return self.discovery is not None and self.discovery.find(group, version, kind) is not None

    async def reconcile(self, name: str) -> None:
        obj = self.kartas.store.get(name)
        if obj is None:
            return
        if self._rediscover:
            self._rediscover = False
            self.discovery = await self.client.run(fetch_op())
        gvk = root_gvk_of(obj)
        status = karta_status(obj, served=self.served, same_kind=self._same_kind(gvk) if gvk else ())
        metadata = obj.get("metadata") or {}
        path = f"{KARTAS.path}/{name}"
        labels = metadata.get("labels") or {}
        label_patch = {k: v for k, v in status.labels.items() if labels.get(k) != v and (v is not None or k in labels)}
        try:
            if label_patch:
                await self.writer.merge_patch(
                    path, {"metadata": {"labels": label_patch}}, what=f"Karta {name}", kind="Karta"
                )
            existing = [c for c in ((obj.get("status") or {}).get("conditions") or []) if isinstance(c, Mapping)]
            generation = int(metadata.get("generation") or 0)
            conditions = merge_conditions(existing, status.conditions, generation=generation, stamp=now())
            if _comparable(conditions) != _comparable(existing):
                await self.writer.merge_patch(
                    f"{path}/status", {"status": {"conditions": conditions}}, what=f"Karta {name} status", kind="Karta"
                )
                before = {str(c.get("type")): (c.get("status"), c.get("reason")) for c in existing}
                for ctype, (cstatus, reason, message) in status.conditions.items():
                    if cstatus != "True" and before.get(ctype) != (cstatus, reason):
                        await self.writer.event(obj, reason=reason, message=f"{ctype}: {message}")
        except NotFound:
            return  # deleted meanwhile


async def _listed(informer: AsyncInformer, task: asyncio.Task[None]) -> None:
    """Wait for the informer's first LIST; raise its error when that LIST failed (no Karta CRD, no permission)."""
    synced = asyncio.ensure_future(informer.synced.wait())
    try:
        await asyncio.wait([synced, task], return_when=asyncio.FIRST_COMPLETED)
    finally:
        synced.cancel()
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


def _comparable(conditions: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (c.get("type"), c.get("status"), c.get("reason"), c.get("message"), c.get("observedGeneration"))
        for c in conditions
        if isinstance(c, Mapping)
    )
