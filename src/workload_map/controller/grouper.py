"""The pod grouper: for every workload a definition with gang instructions covers (cluster Kartas over the
built-in catalog), keeps the configured scheduler's objects in step with the gang plan and links each pod that
is not yet scheduled to its gang (`grouping.grouping_for` decides both).

Informers feed one `cluster.index.WorkloadIndex`: one per covered, served kind (a top-level object, one without a
controller owner, is a workload; one owned by another, a JobSet's Job, is an owner on its pods' chains), one for
pods, and metadata-only ones per owner kind the pods' chains pass through. Any change queues the UIDs of the
workloads it touched; a reconcile resolves the workload, plans it with its pods (in a thread: jq may run), and
writes the difference (create, replace, delete of the groups it owns; a merge patch per pod). The groups carry
an owner reference to the workload, so the garbage collector deletes them with it.

A plan refused (`UnsatisfiableGang`, or any rule the definition breaks) is a Warning Event on the workload, once
per distinct message, never a crash. A kind two cluster Kartas define is not grouped (KAI does the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.definitions import parse_cluster_kartas
from workload_map.cluster.discovery import APIResource, DiscoveryDocument, fetch_op
from workload_map.cluster.errors import ClusterError, Conflict, NotFound
from workload_map.cluster.index import WorkloadIndex
from workload_map.cluster.informer import Change, WatchedResource
from workload_map.cluster.informer_aio import AsyncInformer
from workload_map.cluster.owners import controller_of, uid_of
from workload_map.controller.grouping import KAI_SKIP_ANNOTATION, MANAGED_BY, Grouping, changes, grouping_for
from workload_map.controller.health import Metrics, Probes
from workload_map.controller.karta_feed import KartaFeed
from workload_map.controller.karta_status import root_gvk_of
from workload_map.controller.options import ControllerOptions
from workload_map.controller.workqueue import WorkQueue
from workload_map.controller.writer import Writer
from workload_map.errors import WorkloadMapError
from workload_map.gang import GangError, NoGangInstructions
from workload_map.jq import INPROCESS, EvaluationPolicy
from workload_map.model import Karta
from workload_map.resolve import Workload

__all__ = ["SCHEDULER_KINDS", "PodGrouper"]

log = logging.getLogger("workload_map.controller")

# The objects each scheduler's export holds: (group, version, kind).
SCHEDULER_KINDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "kai": (("scheduling.run.ai", "v2alpha2", "PodGroup"),),
    "volcano": (("scheduling.volcano.sh", "v1beta1", "PodGroup"),),
    "coscheduling": (("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),),
    "workload": (("scheduling.k8s.io", "v1alpha2", "Workload"), ("scheduling.k8s.io", "v1alpha2", "PodGroup")),
}
# Pods are the members of workloads, never workloads of their own here.
_MEMBER_KINDS = {("", "Pod")}
# Definitions from the cluster are not ours: their jq runs in the worker, under a deadline.
_CLUSTER_POLICY = EvaluationPolicy("worker", deadline=10.0)


class PodGrouper:
    def __init__(
        self,
        client: AsyncApiClient,
        writer: Writer,
        metrics: Metrics,
        probes: Probes,
        options: ControllerOptions,
        *,
        kartas: KartaFeed,
    ) -> None:
        self.client = client
        self.writer = writer
        self.metrics = metrics
        self.probes = probes
        self.options = options
        self.queue = WorkQueue()
        self.index = WorkloadIndex()
        self.discovery: DiscoveryDocument | None = None
        self.registry = DefinitionRegistry([("catalog", builtin_definitions())])
        self.cluster_origin: dict[tuple[str, str, str], int] = {}
        self.watched: set[tuple[str, str]] = set()  # (apiVersion, kind) with an informer
        self.informers: list[AsyncInformer] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._told: dict[str, set[str]] = {}  # workload UID -> the Event messages written (each one once)
        self.feed = kartas  # the process's Karta watch (karta_feed.py), shared with the operator and the dashboard
        self.kartas = kartas.informer
        self.namespaces: AsyncInformer | None = None
        metrics.queue_depth["podgrouper"] = lambda: len(self.queue)
        probes.expect("podgrouper")

    # --- informers ----------------------------------------------------------------------------------------------

    def _start(self, informer: AsyncInformer) -> None:
        self.informers.append(informer)
        self._tasks.append(asyncio.create_task(self._keep(informer)))

    async def _keep(self, informer: AsyncInformer) -> None:
        try:
            await informer.run()
        except ClusterError as exc:  # a kind that cannot be listed: its workloads are not grouped
            log.warning("pod grouper: cannot watch %s: %s", informer.resource.resource, exc)
            informer.synced.set()

    def _scopes(self, resource: APIResource) -> list[str | None]:
        if resource.namespaced and self.options.namespaces:
            return list(self.options.namespaces)
        return [None]

    def _watch(
        self,
        resource: APIResource,
        on_change: Any,
        *,
        metadata_only: bool = False,
        label_selector: str | None = None,
    ) -> None:
        key = (resource.api_version, resource.kind)
        if key in self.watched:
            return
        self.watched.add(key)
        for namespace in self._scopes(resource):
            self._start(
                AsyncInformer(
                    self.client,
                    WatchedResource.of(resource, namespace, metadata_only=metadata_only, label_selector=label_selector),
                    on_change=on_change,
                )
            )

    def _watch_scheduler_objects(self) -> None:
        """The objects we write (by their managed-by label), so one someone else edits or deletes is put back."""
        if self.discovery is None:
            return
        for group, version, kind in SCHEDULER_KINDS[self.options.scheduler]:
            resource = self.discovery.find(group, version, kind)
            if resource is not None and resource.can("watch"):
                self._watch(resource, self._group_changed, metadata_only=True, label_selector=MANAGED_BY)

    def _watch_covered(self) -> None:
        """Start an informer for each kind a definition with gang instructions covers and the cluster serves."""
        if self.discovery is None:
            return
        for entry in self.registry.effective():
            gvk = entry.gvk
            if gvk is None or entry.karta.gang_scheduling is None or (gvk.group, gvk.kind) in _MEMBER_KINDS:
                continue
            resource = self.discovery.serving(gvk.group, gvk.version, gvk.kind)
            if resource is not None and resource.can("watch"):
                self._watch(resource, self._workload_changed)

    def _watch_owner_kinds(self) -> None:
        if self.discovery is None:
            return
        for api_version, kind in sorted(self.index.unknown_owner_kinds()):
            group = api_version.rpartition("/")[0]
            resource = self.discovery.preferred(group, kind)
            if resource is not None and resource.can("watch") and (resource.api_version, kind) not in self.watched:
                self._watch(resource, self._owner_changed, metadata_only=True)

    def _queue(self, uids: set[str]) -> None:
        for uid in uids:
            self.queue.add(uid)
        self._watch_owner_kinds()

    def _workload_changed(self, change: Change) -> None:
        obj, index = change.object, self.index
        if controller_of(obj) is not None:  # owned by another object: an owner on its pods' chains
            self._queue(index.remove_owner(obj) if change.type == "DELETED" else index.set_owner(obj))
            return
        if change.type == "DELETED":
            self._told.pop(uid_of(obj), None)
            self._queue(index.remove_workload(obj))
        else:
            self._queue(index.set_workload(obj))

    def _owner_changed(self, change: Change) -> None:
        index = self.index
        self._queue(index.remove_owner(change.object) if change.type == "DELETED" else index.set_owner(change.object))

    def _pod_changed(self, change: Change) -> None:
        index = self.index
        self._queue(index.remove_pod(change.object) if change.type == "DELETED" else index.set_pod(change.object))

    def _group_changed(self, change: Change) -> None:
        # any change, ours included: the reconcile compares with what the plan wants and writes only a difference
        for reference in (change.object.get("metadata") or {}).get("ownerReferences") or []:
            if not isinstance(reference, dict) or reference.get("controller") is not True:
                continue
            uid = reference.get("uid")
            if isinstance(uid, str) and uid in self.index.workloads:
                self.queue.add(uid)

    def _karta_changed(self, change: Change) -> None:
        if not self.kartas.synced.is_set():
            return  # the first LIST is read at once, after it
        self._reload_definitions()
        self._watch_covered()
        for uid in list(self.index.workloads):
            self.queue.add(uid)

    def _reload_definitions(self) -> None:
        items = list(self.kartas.store)
        counts: dict[tuple[str, str, str], int] = {}
        for item in items:
            gvk = root_gvk_of(item)
            if gvk is not None:
                counts[gvk] = counts.get(gvk, 0) + 1
        self.cluster_origin = counts
        loaded = parse_cluster_kartas(items)
        for warning in loaded.warnings:
            log.warning("pod grouper: %s", warning)
        self.registry = DefinitionRegistry([("cluster", loaded.definitions), ("catalog", builtin_definitions())])

    # --- the loop -----------------------------------------------------------------------------------------------

    async def run(self) -> None:
        try:
            self.discovery = await self.client.run(fetch_op())
            self.feed.subscribe(self._karta_changed)
            try:
                await self.feed.listed()
            except ClusterError as exc:  # no Karta CRD, or no permission: the catalog's definitions only
                log.warning("pod grouper: cannot watch %s: %s", self.kartas.resource.resource, exc)
            self._reload_definitions()
            if self.options.namespace_selector:
                self.namespaces = AsyncInformer(
                    self.client,
                    WatchedResource(
                        path="/api/v1/namespaces",
                        kind="Namespace",
                        api_version="v1",
                        resource="namespaces",
                        label_selector=self.options.namespace_selector,
                        metadata_only=True,
                    ),
                    on_change=lambda change: self._queue(set(self.index.workloads)),
                )
                self._start(self.namespaces)
            pods = self.discovery.find("", "v1", "Pod")
            if pods is not None:
                self._watch(pods, self._pod_changed)
            self._watch_covered()
            self._watch_scheduler_objects()
            for informer in list(self.informers):
                await informer.synced.wait()
            self.probes.ready("podgrouper")
            while True:
                uid = await self.queue.get()
                start = time.perf_counter()
                try:
                    outcome = await self.reconcile(uid)
                except ClusterError as exc:
                    log.warning("pod grouper: workload %s: %s (retried)", uid, exc)
                    self.metrics.reconciled("podgrouper", "error", time.perf_counter() - start)
                    self.queue.retry(uid)
                else:
                    self.metrics.reconciled("podgrouper", outcome, time.perf_counter() - start)
                    self.queue.forget(uid)
        finally:
            self.feed.unsubscribe(self._karta_changed)
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _in_scope(self, namespace: str) -> bool:
        if self.options.namespaces and namespace not in self.options.namespaces:
            return False
        if self.namespaces is not None:
            return namespace in self.namespaces.store
        return True

    def _definition(self, obj: Mapping[str, Any]) -> tuple[Karta, EvaluationPolicy] | None:
        found = self.registry.for_object(obj)
        if found is None or found.karta.gang_scheduling is None:
            return None
        gvk = found.karta.root_gvk
        duplicated = gvk is not None and self.cluster_origin.get((gvk.group, gvk.version, gvk.kind), 0) > 1
        if found.origin == "cluster" and duplicated:
            return None  # two Kartas for one kind: neither is used (the operator says so on both)
        return found.karta, (_CLUSTER_POLICY if found.origin == "cluster" else INPROCESS)

    async def _tell(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        told = self._told.setdefault(uid_of(obj), set())
        if message in told:
            return
        told.add(message)
        await self.writer.event(obj, reason=reason, message=message)

    async def reconcile(self, uid: str) -> str:
        obj = self.index.workloads.get(uid)
        if obj is None:
            return "gone"
        metadata = obj.get("metadata") or {}
        namespace = str(metadata.get("namespace") or "")
        if not namespace or not self._in_scope(namespace):
            return "skipped"
        chosen = self._definition(obj)
        if chosen is None:
            return "skipped"
        karta, policy = chosen
        pods = self.index.pods_of(uid)
        scheduler, queue = self.options.scheduler, self.options.queue

        def decide() -> Grouping:
            resolution = Workload(karta, obj, validate=False, policy=policy).resolve()
            return grouping_for(resolution, pods, scheduler, queue=queue)

        try:
            wanted = await asyncio.to_thread(decide)
        except NoGangInstructions:
            return "skipped"
        except GangError as exc:
            await self._tell(obj, "GangRefused", f"no PodGroup written: {exc}")
            return "refused"
        except WorkloadMapError as exc:
            await self._tell(obj, "ResolveFailed", f"cannot read the workload through {karta.name!r}: {exc}")
            return "refused"
        for line in wanted.unplaced:
            await self._tell(obj, "PodNotGrouped", line)
        await self._write_groups(uid, namespace, wanted)
        if self.options.scheduler == "kai" and wanted.objects:
            await self._skip_kai_grouper(obj, namespace)
        await self._link_pods(wanted)
        return "success"

    async def _skip_kai_grouper(self, obj: Mapping[str, Any], namespace: str) -> None:
        """KAI's skip annotation on the workload, so KAI's own pod grouper leaves it to us."""
        metadata = obj.get("metadata") or {}
        if (metadata.get("annotations") or {}).get(KAI_SKIP_ANNOTATION) == "true" or self.discovery is None:
            return
        group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
        resource = self.discovery.find(group, version, str(obj.get("kind") or ""))
        if resource is None:
            return
        name = str(metadata.get("name") or "")
        patch = {"metadata": {"annotations": {KAI_SKIP_ANNOTATION: "true"}}}
        with contextlib.suppress(NotFound):
            await self.writer.merge_patch(
                resource.object_path(name, namespace),
                patch,
                what=f"{resource.kind} {namespace}/{name}",
                kind=resource.kind,
            )

    async def _write_groups(self, uid: str, namespace: str, wanted: Grouping) -> None:
        assert self.discovery is not None
        existing: list[dict[str, Any]] = []
        paths: dict[tuple[str, str], APIResource] = {}
        for group, version, kind in SCHEDULER_KINDS[self.options.scheduler]:
            resource = self.discovery.find(group, version, kind)
            if resource is None:
                if any(o.get("kind") == kind for o in wanted.objects):
                    obj = self.index.workloads[uid]
                    message = f"{group}/{version} {kind} is not served by the cluster"
                    await self._tell(obj, "SchedulerNotServed", message)
                    return
                continue
            paths[(resource.api_version, kind)] = resource
            listed = await self.client.list(resource.collection_path(namespace), params={"labelSelector": MANAGED_BY})
            for item in listed.items:
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", kind)
                existing.append(item)
        creates, updates, deletes, conflicts = changes(wanted.objects, existing, uid)
        for line in conflicts:
            await self._tell(self.index.workloads[uid], "PodGroupConflict", line)
        for obj in creates:
            resource = paths[(str(obj["apiVersion"]), str(obj["kind"]))]
            try:
                await self.writer.create(resource.collection_path(namespace), obj)
            except Conflict:
                updates += await self._name_taken(uid, namespace, resource, obj)
        for obj in updates:
            resource = paths[(str(obj["apiVersion"]), str(obj["kind"]))]
            await self.writer.replace(resource.object_path(obj["metadata"]["name"], namespace), obj)
        for obj in deletes:
            resource = paths[(str(obj["apiVersion"]), str(obj["kind"]))]
            name = obj["metadata"]["name"]
            await self.writer.delete(
                resource.object_path(name, namespace), what=f"{obj['kind']} {namespace}/{name}", kind=str(obj["kind"])
            )

    async def _name_taken(
        self, uid: str, namespace: str, resource: APIResource, wanted: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """A create refused because the name is taken by an object our LIST (by the managed-by label) did not
        show: one whose label someone removed, or someone else's. Ours (owned by the workload: the name and the
        owner say it is the one we write) is adopted back, replaced with our labels and spec (returned as an
        update); someone else's is left alone, said once in a `PodGroupConflict` Event on the workload, and not
        retried (the workload's next change, or a restart, tries again). Gone meanwhile: retried."""
        name = str(wanted["metadata"]["name"])
        try:
            current = await self.client.get(resource.object_path(name, namespace))
        except NotFound:
            self.queue.retry(uid)
            return []
        current.setdefault("apiVersion", resource.api_version)
        current.setdefault("kind", resource.kind)
        _, updates, _, conflicts = changes([wanted], [current], uid)
        workload = self.index.workloads[uid]
        for line in conflicts:
            message = f"{line} (its {MANAGED_BY} label is not set either): not written, not retried"
            await self._tell(workload, "PodGroupConflict", message)
        if updates:
            log.info(
                "pod grouper: %s %s/%s adopted back (its managed-by label was removed)", resource.kind, namespace, name
            )
        return updates

    async def _link_pods(self, wanted: Grouping) -> None:
        for key, patch in sorted(wanted.pod_patches.items()):
            namespace, _, name = key.partition("/")
            try:
                await self.writer.merge_patch(
                    f"/api/v1/namespaces/{namespace}/pods/{name}", patch, what=f"Pod {key}", kind="Pod"
                )
            except NotFound:
                continue  # deleted meanwhile
