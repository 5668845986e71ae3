"""The mutating webhook for Pods (`/mutate-pod`): at a pod's creation, the links to its gang that the pod grouper
would otherwise patch on later, and the one link only admission can set: the Workload API's immutable
`spec.schedulingGroup` (v1alpha2; `spec.workloadRef` for v1alpha1).

The pod's top workload is found by following controller owner references with GETs (a Job, then its JobSet),
through discovery, each owner read at most once per 5 s (a burst of one Job's pods reads it once); its definition
comes from cluster Kartas over the catalog: from the process's Karta watch (`karta_feed.py`) when it is given, so
a Karta change applies to the next pod, else LISTed every 30 s; discovery is re-read every 30 s (both in the
background: admissions go on with what they have meanwhile). The workload is resolved once per (uid,
resourceVersion) and planned with each pod (`pod_links.WorkloadPlans`), in a worker thread; what the pod carries
is returned as a JSON patch. A pod for another scheduler (`spec.schedulerName`), of a kind no definition covers,
or whose plan is refused is admitted unchanged: this webhook never denies a pod.

What is cached is read, never changed: the owners and the pod are not copied per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.cluster.aio import AsyncApiClient, load_cluster_definitions
from workload_map.cluster.definitions import parse_cluster_kartas
from workload_map.cluster.discovery import APIResource, DiscoveryDocument, fetch_op
from workload_map.cluster.errors import ClusterError
from workload_map.cluster.informer import Change
from workload_map.cluster.owners import MAX_HOPS, controller_of
from workload_map.controller.admission import review_response
from workload_map.controller.grouping import FORMAT_OF
from workload_map.controller.karta_feed import KartaFeed
from workload_map.controller.pod_links import WorkloadPlans, link_patch
from workload_map.errors import WorkloadMapError
from workload_map.jq import INPROCESS, EvaluationPolicy
from workload_map.model import Karta

__all__ = ["SCHEDULER_NAMES", "PodAdmission"]

log = logging.getLogger("workload_map.controller")

# The schedulerName a pod of each --scheduler carries (KAI's and Volcano's defaults, scheduler-plugins' second
# scheduler; the Workload API is served by the default scheduler).
SCHEDULER_NAMES = {
    "kai": "kai-scheduler",
    "volcano": "volcano",
    "coscheduling": "scheduler-plugins-scheduler",
    "workload": "default-scheduler",
}
_RELOAD_AFTER = 30.0
_OWNER_TTL = 5.0  # seconds an owner read for one pod serves the next pods of the same owner
_OWNER_CACHE = 10_000  # owners kept at most (a burst across many workloads)
_CLUSTER_POLICY = EvaluationPolicy("worker", deadline=2.0)


def _registry(cluster: list[Karta]) -> DefinitionRegistry:
    return DefinitionRegistry([("cluster", cluster), ("catalog", builtin_definitions())])


class PodAdmission:
    def __init__(
        self, client: AsyncApiClient, scheduler: str, *, queue: str | None = None, kartas: KartaFeed | None = None
    ) -> None:
        self.client = client
        self.scheduler = scheduler
        self.queue = queue
        self.scheduler_name = SCHEDULER_NAMES[scheduler]
        self.format = FORMAT_OF[scheduler]
        self.discovery: DiscoveryDocument | None = None
        self.registry = DefinitionRegistry([("catalog", builtin_definitions())])
        self.plans = WorkloadPlans()
        self._loaded = 0.0
        self._lock = asyncio.Lock()
        self._reload: asyncio.Task[None] | None = None
        self._owners: dict[str, tuple[float, dict[str, Any]]] = {}  # object path -> (read at, object)
        self.kartas = kartas
        if kartas is not None:
            kartas.subscribe(self._karta_changed)

    def _karta_changed(self, _change: Change | None = None) -> None:
        assert self.kartas is not None
        if self.kartas.synced.is_set():
            self.registry = _registry(parse_cluster_kartas(list(self.kartas.store)).definitions)

    async def _load(self) -> None:
        async with self._lock:
            if time.monotonic() - self._loaded < _RELOAD_AFTER and self.discovery is not None:
                return
            discovery = await self.client.run(fetch_op())
            if self.kartas is None:
                found = await load_cluster_definitions(self.client)
                self.registry = _registry(found.definitions)
            elif self.discovery is None:  # the first pod: the watch's first LIST (a failed one: the catalog only)
                with contextlib.suppress(ClusterError):
                    await self.kartas.listed()
                self._karta_changed()
            self.discovery = discovery
            self._loaded = time.monotonic()

    async def _reload_quietly(self) -> None:
        try:
            await self._load()
        except ClusterError as exc:  # the definitions in use stay; tried again at the next pod after 30 s
            self._loaded = time.monotonic()
            log.warning("pod webhook: definitions not re-read: %s", exc)

    async def _refresh(self) -> None:
        """Discovery and the definitions: read before the first pod; afterwards re-read in the background every
        `_RELOAD_AFTER` seconds while pods go on being admitted with the ones at hand."""
        if self.discovery is None:
            await self._load()
            return
        stale = time.monotonic() - self._loaded >= _RELOAD_AFTER
        if stale and (self._reload is None or self._reload.done()):
            self._reload = asyncio.create_task(self._reload_quietly())

    async def _top(self, pod: Mapping[str, Any], namespace: str) -> dict[str, Any] | None:
        """The top controller owner of the pod (None: it has none, or one cannot be read)."""
        assert self.discovery is not None
        current: Mapping[str, Any] = pod
        top: dict[str, Any] | None = None
        for _ in range(MAX_HOPS):
            ref = controller_of(current)
            if ref is None:
                return top
            group, _, version = str(ref.get("apiVersion") or "").rpartition("/")
            resource = self.discovery.find(group, version, str(ref.get("kind") or ""))
            if resource is None:
                return None
            obj = await self._owner(resource.object_path(str(ref.get("name") or ""), namespace), resource)
            if obj is None:
                return None
            top = current = obj
        return None

    async def _owner(self, path: str, resource: APIResource) -> dict[str, Any] | None:
        """The owner at `path`, read at most once per `_OWNER_TTL` seconds: a burst of a Job's pods asks for the
        same Job and JobSet each time. (A scale change seen up to that late links a pod as before it; the grouper's
        patch then corrects it.) The object is shared by the requests that read it: never changed."""
        now = time.monotonic()
        cached = self._owners.get(path)
        if cached is not None and now - cached[0] < _OWNER_TTL:
            return cached[1]
        obj = await self.client.get(path)
        if not isinstance(obj, dict):
            return None
        obj.setdefault("apiVersion", resource.api_version)
        obj.setdefault("kind", resource.kind)
        if len(self._owners) >= _OWNER_CACHE:
            self._owners = {k: v for k, v in self._owners.items() if now - v[0] < _OWNER_TTL}
            if len(self._owners) >= _OWNER_CACHE:
                self._owners.clear()
        self._owners[path] = (now, obj)
        return obj

    async def review(self, review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        pod = request.get("object")
        if request.get("operation") != "CREATE" or not isinstance(pod, Mapping):
            return review_response(review, allowed=True)
        if (pod.get("spec") or {}).get("schedulerName", "default-scheduler") != self.scheduler_name:
            return review_response(review, allowed=True)
        metadata = pod.get("metadata") or {}
        namespace = str(request.get("namespace") or metadata.get("namespace") or "")
        try:
            await self._refresh()
            top = await self._top(pod, namespace)
        except ClusterError as exc:
            log.warning("pod webhook: %s", exc)
            return review_response(review, allowed=True)
        found = self.registry.for_object(top) if top is not None else None
        if top is None or found is None or found.karta.gang_scheduling is None:
            return review_response(review, allowed=True)
        # the plan needs the pod's name and namespace; with generateName the name is given after admission
        name = metadata.get("name") or f"{metadata.get('generateName') or 'pod-'}admitted"
        named = {**pod, "metadata": {**metadata, "name": name, "namespace": namespace}}
        policy = _CLUSTER_POLICY if found.origin == "cluster" else INPROCESS
        try:
            join = await asyncio.to_thread(
                self.plans.links, found.karta, top, named, self.format, policy=policy, queue=self.queue
            )
        except WorkloadMapError as exc:
            log.info("pod webhook: %s/%s admitted unlinked: %s", namespace, name, exc)
            return review_response(review, allowed=True)
        if join is None:
            return review_response(review, allowed=True)
        return review_response(review, allowed=True, patch=link_patch(pod, join))
