"""The mutating webhook for Pods (`/mutate-pod`): at a pod's creation, the links to its gang that the pod grouper
would otherwise patch on later, and the one link only admission can set: the Workload API's immutable
`spec.schedulingGroup` (v1alpha2; `spec.workloadRef` for v1alpha1).

The pod's top workload is found by following controller owner references with GETs (a Job, then its JobSet),
through discovery, each owner read at most once per 5 s (a burst of one Job's pods reads it once); its definition
comes from cluster Kartas over the catalog (re-read at most every 30 s). The
workload is planned with this pod (`gang.plan(resolution, [pod])`: a pod's gang and leaf depend on the pod and
the spec, not on its siblings) and `gang.joined_pod` gives what it carries, returned as a JSON patch. A pod for
another scheduler (`spec.schedulerName`), of a kind no definition covers, or whose plan is refused is admitted
unchanged: this webhook never denies a pod.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Mapping
from typing import Any

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.cluster.aio import AsyncApiClient, load_cluster_definitions
from workload_map.cluster.discovery import DiscoveryDocument, fetch_op
from workload_map.cluster.errors import ClusterError
from workload_map.cluster.owners import MAX_HOPS, controller_of
from workload_map.controller.admission import review_response
from workload_map.controller.grouping import FORMAT_OF, skip_kai_grouper
from workload_map.errors import WorkloadMapError
from workload_map.gang import joined_pod, plan
from workload_map.jq import INPROCESS, EvaluationPolicy
from workload_map.resolve import Workload

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


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    old_meta, new_meta = before.get("metadata") or {}, after.get("metadata") or {}
    ops: list[dict[str, Any]] = []
    for key in ("labels", "annotations"):
        old, new = old_meta.get(key), new_meta.get(key) or {}
        added = {k: v for k, v in new.items() if not isinstance(old, Mapping) or old.get(k) != v}
        if not added:
            continue
        if not isinstance(old, Mapping):
            ops.append({"op": "add", "path": f"/metadata/{key}", "value": added})
        else:
            ops += [{"op": "add", "path": f"/metadata/{key}/{_escape(k)}", "value": v} for k, v in added.items()]
    old_spec, new_spec = before.get("spec") or {}, after.get("spec") or {}
    for field in ("schedulingGroup", "workloadRef"):
        if field in new_spec and old_spec.get(field) != new_spec[field]:
            ops.append({"op": "add", "path": f"/spec/{field}", "value": new_spec[field]})
    return ops


class PodAdmission:
    def __init__(self, client: AsyncApiClient, scheduler: str, *, queue: str | None = None) -> None:
        self.client = client
        self.scheduler = scheduler
        self.queue = queue
        self.scheduler_name = SCHEDULER_NAMES[scheduler]
        self.discovery: DiscoveryDocument | None = None
        self.registry = DefinitionRegistry([("catalog", builtin_definitions())])
        self._loaded = 0.0
        self._lock = asyncio.Lock()
        self._owners: dict[str, tuple[float, dict[str, Any]]] = {}  # object path -> (read at, object)

    async def _refresh(self) -> None:
        async with self._lock:
            if time.monotonic() - self._loaded < _RELOAD_AFTER and self.discovery is not None:
                return
            self.discovery = await self.client.run(fetch_op())
            found = await load_cluster_definitions(self.client)
            self.registry = DefinitionRegistry([("cluster", found.definitions), ("catalog", builtin_definitions())])
            self._loaded = time.monotonic()

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
            obj = await self._owner(resource.object_path(str(ref.get("name") or ""), namespace))
            if obj is None:
                return None
            obj.setdefault("apiVersion", resource.api_version)
            obj.setdefault("kind", resource.kind)
            top = current = obj
        return None

    async def _owner(self, path: str) -> dict[str, Any] | None:
        """The owner at `path`, read at most once per `_OWNER_TTL` seconds: a burst of a Job's pods asks for the
        same Job and JobSet each time. (A scale change seen up to that late links a pod as before it; the grouper's
        patch then corrects it.)"""
        now = time.monotonic()
        cached = self._owners.get(path)
        if cached is not None and now - cached[0] < _OWNER_TTL:
            return copy.deepcopy(cached[1])
        obj = await self.client.get(path)
        if not isinstance(obj, dict):
            return None
        if len(self._owners) >= _OWNER_CACHE:
            self._owners = {k: v for k, v in self._owners.items() if now - v[0] < _OWNER_TTL}
            if len(self._owners) >= _OWNER_CACHE:
                self._owners.clear()
        self._owners[path] = (now, copy.deepcopy(obj))
        return obj

    async def review(self, review: Mapping[str, Any]) -> dict[str, Any]:
        request = review.get("request") or {}
        pod = request.get("object")
        if request.get("operation") != "CREATE" or not isinstance(pod, Mapping):
            return review_response(review, allowed=True)
        if (pod.get("spec") or {}).get("schedulerName", "default-scheduler") != self.scheduler_name:
            return review_response(review, allowed=True)
        namespace = str(request.get("namespace") or (pod.get("metadata") or {}).get("namespace") or "")
        try:
            await self._refresh()
            top = await self._top(pod, namespace)
        except ClusterError as exc:
            log.warning("pod webhook: %s", exc)
            return review_response(review, allowed=True)
        found = self.registry.for_object(top) if top is not None else None
        if top is None or found is None or found.karta.gang_scheduling is None:
            return review_response(review, allowed=True)
        named = copy.deepcopy(dict(pod))
        metadata = named.setdefault("metadata", {})
        metadata["namespace"] = namespace
        if not metadata.get("name"):  # generateName: the name is given after admission; the plan needs one
            metadata["name"] = f"{metadata.get('generateName') or 'pod-'}admitted"
        policy = _CLUSTER_POLICY if found.origin == "cluster" else INPROCESS
        fmt = FORMAT_OF[self.scheduler]

        def decide() -> dict[str, Any] | None:
            resolution = Workload(found.karta, top, validate=False, policy=policy).resolve()
            gang_plan = plan(resolution, [named])
            if gang_plan.no_gang is not None:
                return None  # KAI's one group per pod is named after the pod: the grouper links it once named
            joined = joined_pod(gang_plan, named, fmt, queue=self.queue)
            return skip_kai_grouper(joined) if fmt == "kai" else joined

        try:
            joined = await asyncio.to_thread(decide)
        except WorkloadMapError as exc:
            log.info("pod webhook: %s/%s admitted unlinked: %s", namespace, metadata.get("name"), exc)
            return review_response(review, allowed=True)
        if joined is None:
            return review_response(review, allowed=True)
        return review_response(review, allowed=True, patch=_patch(named, joined))
