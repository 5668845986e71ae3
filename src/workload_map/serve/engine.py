"""The live engine behind `wmap serve`: every covered workload type the kubeconfig may list, the pods and the owners
between them, watched and kept in `store.Store` as views (the same views `wmap describe` prints).

Informers (`cluster.informer_aio.AsyncInformer`): one per served covered type (a LIST + WATCH, cluster-wide or in
one namespace), one for pods, and a metadata-only one per owner kind the pods' chains pass through (ReplicaSets,
Jobs, StatefulSets), started as the `cluster.index.WorkloadIndex` meets them. Only top-level workloads are shown,
as in `wmap get --all-types`: an object whose controller is of a covered type (a JobSet's Jobs, a CronJob's Jobs)
is fed to the index as an owner, so its pods are filed under the top-level workload. Bare Pods are not workloads
here. A view is recomputed only when its workload's resourceVersion or its pods' changed (`ResolutionCache`).
CRDs are watched (metadata only, when RBAC allows): after a covered group's CRD is added or changed, discovery is
read again and a type it now serves gets its informer. The definitions can change while it runs
(`set_definitions`, from a watch of the cluster's Kartas): a type newly covered gets its informer, a type whose
definition changed has its views computed again with the new one, a type no longer covered stops being watched
and its workloads leave the store.

A type RBAC does not let us list is a warning and left out; pods that cannot be listed leave every workload
without pods (a warning). When no covered type can be listed at all, `run()` raises `ServeError`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workload_map.catalog import DefinitionRegistry
from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.discovery import DiscoveryDocument, fetch_op
from workload_map.cluster.errors import ClusterError
from workload_map.cluster.index import ResolutionCache, WorkloadIndex
from workload_map.cluster.informer import Change, WatchedResource
from workload_map.cluster.informer_aio import AsyncInformer
from workload_map.cluster.owners import controller_of, group_of, reference_kind, uid_of
from workload_map.errors import WorkloadMapError
from workload_map.jq import EvaluationPolicy
from workload_map.model import Karta
from workload_map.pods import OwnerIndex, attribute
from workload_map.resolve import resolve
from workload_map.serve.errors import ServeError
from workload_map.serve.store import Store, WatchedType
from workload_map.view import WorkloadView, build_view

__all__ = ["Engine", "EngineConfig"]

PolicyFor = Callable[[str, str], EvaluationPolicy | None]
CRDS = WatchedResource(
    path="/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    kind="CustomResourceDefinition",
    api_version="apiextensions.k8s.io/v1",
    resource="customresourcedefinitions.apiextensions.k8s.io",
    metadata_only=True,  # the name (plural.group) says whether a covered group changed; schemas are large
)


@dataclass(frozen=True)
class EngineConfig:
    """What to watch: the types the definitions cover that the server serves, in `namespace` or everywhere."""

    discovery: DiscoveryDocument
    registry: DefinitionRegistry
    namespace: str | None = None
    policy_for: PolicyFor = lambda _name, _origin: None
    gpu_names: tuple[str, ...] = ()
    chunk_size: int = 500
    poll_interval: float = 10.0


@dataclass(frozen=True)
class _Target:
    watched: WatchedType
    karta: Karta
    resource: WatchedResource


@dataclass
class _Item:
    source: str  # a target's source ("group/kind#serial"), "pods", "owners", "crds", "discovery", "definitions"
    change: Change | None = None
    error: ClusterError | None = None
    synced: bool = False
    discovery: DiscoveryDocument | None = None
    registry: DefinitionRegistry | None = None


class Engine:
    """See the module docstring. `await engine.run()` until cancelled; readers use `store`; `changed` is set (and
    replaced) after every applied batch, for the live stream."""

    def __init__(
        self, client: AsyncApiClient, config: EngineConfig, *, store: Store | None = None, log: Callable[[str], None]
    ) -> None:
        self.client = client
        self.config = config
        self.store = store if store is not None else Store()
        self.log = log
        self.index = WorkloadIndex()
        self.changed = asyncio.Event()
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = 0
        self._targets: dict[tuple[str, str], _Target] = {}
        self._sources: dict[tuple[str, str], str] = {}  # a target's key -> the source name its informer reports as
        self._target_tasks: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._serial = 0
        self._discovery = config.discovery  # the latest read
        self.store.registry = config.registry
        self._covered: set[tuple[str, str]] = set()
        self._owner_kinds: set[tuple[str, str]] = set()
        self._nested: set[str] = set()  # UIDs of covered objects owned by another covered object
        self._kind_of: dict[str, tuple[str, str]] = {}  # workload UID -> (group, kind)
        self._cache: ResolutionCache[WorkloadView | str] = ResolutionCache(self._compute)
        self._refused: list[str] = []
        self._crds_synced = False
        self._stale = False  # a covered group's CRD changed since discovery was read
        self._discovering: asyncio.Task[None] | None = None

    # --- what to watch ------------------------------------------------------------------------------------------

    def _plan(self, discovery: DiscoveryDocument) -> list[tuple[str, str]]:
        """Targets for the covered types `discovery` serves that are not watched yet; the new ones' keys."""
        config = self.config
        namespace = config.namespace
        for entry in config.registry.effective():
            gvk = entry.gvk
            if gvk is not None and gvk.kind and gvk.version:
                self._covered.add((gvk.group, gvk.kind))
        new: list[tuple[str, str]] = []
        for group, kind in sorted(self._covered):
            if (group, kind) == ("", "Pod") or (group, kind) in self._targets:
                continue  # pods are the pod informer's; a bare Pod is not a workload here
            resource = discovery.preferred(group, kind)
            if resource is None or not resource.can("list") or not resource.can("watch"):
                continue  # not served: left out silently, as `get --all-types` does
            found = config.registry.for_gvk(group, resource.version, kind)
            if found is None:
                continue
            scope = namespace if resource.namespaced else None
            watched = WatchedType(group, resource.version, kind, resource.qualified, found.karta.name, found.origin)
            self.store.types.append(watched)
            self._targets[(group, kind)] = _Target(
                watched,
                found.karta,
                WatchedResource.of(resource, scope),
            )
            self._owner_kinds.add((group, kind))
            new.append((group, kind))
        return new

    def set_definitions(self, registry: DefinitionRegistry) -> None:
        """Use `registry` from now on (applied by the loop, between two batches of changes)."""
        self._queue.put_nowait(_Item("definitions", registry=registry))

    def _redefine(self, registry: DefinitionRegistry) -> set[str]:
        """The workloads to compute again after the definitions changed to `registry`."""
        self.config = dataclasses.replace(self.config, registry=registry)
        self.store.registry = registry
        self._covered = set()
        for entry in registry.effective():
            gvk = entry.gvk
            if gvk is not None and gvk.kind and gvk.version:
                self._covered.add((gvk.group, gvk.kind))
        touched: set[str] = set()
        for key, target in list(self._targets.items()):
            watched = target.watched
            found = registry.for_gvk(key[0], watched.version, key[1]) if key in self._covered else None
            if found is None:
                touched |= self._unwatch(key)
                self.log(f"not watching {watched.kind} any more: no definition covers it")
            elif found.karta != target.karta or found.origin != watched.origin:
                watched.definition, watched.origin = found.karta.name, found.origin
                self._targets[key] = dataclasses.replace(target, karta=found.karta)
                for uid, kind in self._kind_of.items():
                    if kind == key:
                        self._cache.forget(uid)
                        touched.add(uid)
                self.log(f"{watched.kind} is read through {found.karta.name} ({found.origin}) now")
        for key in self._plan(self._discovery):
            self._start_target(key)
            self.log(f"watching {key[1]} too: a definition covers it now")
        return touched

    def _unwatch(self, key: tuple[str, str]) -> set[str]:
        """Stop watching a target's type; its workloads leave the index (and so the store)."""
        target = self._targets.pop(key)
        self._sources.pop(key, None)
        task = self._target_tasks.pop(key, None)
        if task is not None:
            task.cancel()
        if not target.watched.synced and target.watched.error is None:
            self._pending -= 1  # its first LIST will never be reported now
        self.store.types = [t for t in self.store.types if t is not target.watched]
        self._owner_kinds.discard(key)
        touched: set[str] = set()
        for uid, kind in list(self._kind_of.items()):
            if kind != key:
                continue
            del self._kind_of[uid]
            self._cache.forget(uid)
            workload = self.index.workloads.get(uid)
            if workload is not None:
                touched |= self.index.remove_workload(workload)
            touched.add(uid)
        return touched

    # --- running ------------------------------------------------------------------------------------------------

    def _start_target(self, key: tuple[str, str]) -> None:
        self._serial += 1
        source = f"{key[0]}/{key[1]}#{self._serial}"
        self._sources[key] = source
        self._target_tasks[key] = self._start(source, self._targets[key].resource)

    def _start(self, source: str, resource: WatchedResource) -> asyncio.Task[None]:
        queue = self._queue
        informer = AsyncInformer(
            self.client,
            resource,
            on_change=lambda change: queue.put_nowait(_Item(source, change)),
            on_synced=lambda synced: queue.put_nowait(_Item(source, synced=not synced.relist)),
            on_warning=self._warn,
            chunk_size=self.config.chunk_size,
            poll_interval=self.config.poll_interval,
        )

        async def run() -> None:
            try:
                await informer.run()
            except ClusterError as exc:
                queue.put_nowait(_Item(source, error=exc))

        self._pending += 1
        task = asyncio.get_running_loop().create_task(run())
        self._tasks.append(task)
        return task

    async def run(self) -> None:
        """Watch until cancelled. Raises `ServeError` when no covered type can be listed."""
        self._plan(self.config.discovery)
        if not self._targets:
            raise ServeError("the cluster serves none of the workload types the definitions cover")
        for key in list(self._targets):
            self._start_target(key)
        self._start("crds", CRDS)
        namespace = self.config.namespace
        self._start(
            "pods",
            WatchedResource.pods(namespace),
        )
        try:
            while True:
                items = [await self._queue.get()]
                while not self._queue.empty():
                    items.append(self._queue.get_nowait())
                touched: set[str] = set()
                for item in items:
                    touched |= self._take(item)
                self._start_owner_informers()
                self._rediscover()
                first = self._pending == 0 and not self.store.synced
                if first:
                    touched |= set(self.index.workloads)
                if (self.store.synced or first) and touched:
                    await self._refresh(touched)
                if first:  # ready once every informer has listed and the first views are all in the store
                    self.store.synced = True
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def _warn(self, message: str) -> None:
        self.store.warn(message)
        self.log(f"warning: {message}")

    def _take(self, item: _Item) -> set[str]:
        if item.registry is not None:
            return self._redefine(item.registry)
        if item.discovery is not None:
            self._discovery = item.discovery
            for new in self._plan(item.discovery):
                self._start_target(new)
                self.log(f"watching {new[1]} too: its CRD was installed")
            return set()
        key = _split(item.source) if item.source not in _SHARED_SOURCES else None
        if key is not None and self._sources.get(key) != item.source:
            return set()  # from the informer of a type no longer watched (or watched again since)
        if item.error is not None:
            self._pending -= 1
            self._failed(item.source, item.error)
            return set()
        if item.source == "crds":
            self._pending -= item.synced
            self._crds_synced = self._crds_synced or item.synced
            if item.change is not None and self._crds_synced and item.change.type != "DELETED":
                group = str((item.change.object.get("metadata") or {}).get("name") or "").partition(".")[2]
                self._stale = self._stale or group in {g for g, _ in self._covered}
            return set()
        if item.synced:
            self._pending -= 1
            if key is not None:
                self._targets[key].watched.synced = True
        if item.change is None:
            return set()
        change = item.change
        deleted = change.type == "DELETED"
        if item.source == "pods":
            return self.index.remove_pod(change.object) if deleted else self.index.set_pod(change.object)
        if item.source == "owners":
            return self.index.remove_owner(change.object) if deleted else self.index.set_owner(change.object)
        assert key is not None
        return self._workload_change(key, change.object, deleted)

    def _workload_change(self, kind: tuple[str, str], obj: dict[str, Any], deleted: bool) -> set[str]:
        uid = uid_of(obj)
        index = self.index
        if deleted:
            self._nested.discard(uid)
            self._kind_of.pop(uid, None)
            return index.remove_workload(obj) | index.remove_owner(obj)
        reference = controller_of(obj)
        nested = reference is not None and reference_kind(reference) in self._covered
        touched: set[str] = set()
        if nested:
            if uid not in self._nested:
                touched |= index.remove_workload(obj)
                self._nested.add(uid)
                self._kind_of.pop(uid, None)
            return touched | index.set_owner(obj)
        if uid in self._nested:
            self._nested.discard(uid)
            touched |= index.remove_owner(obj)
        self._kind_of[uid] = kind
        return touched | index.set_workload(obj)

    def _rediscover(self) -> None:
        """After a covered group's CRD changed: read discovery again (in a task), and plan what it serves now."""
        if not self._stale or (self._discovering is not None and not self._discovering.done()):
            return
        self._stale = False
        queue = self._queue

        async def read() -> None:
            try:
                queue.put_nowait(_Item("discovery", discovery=await self.client.run(fetch_op())))
            except ClusterError as exc:
                self._warn(f"cannot read discovery again after a CRD changed ({exc.message})")

        self._discovering = asyncio.get_running_loop().create_task(read())
        self._tasks.append(self._discovering)

    def _failed(self, source: str, error: ClusterError) -> None:
        if source == "crds":
            self.log(
                f"note: not watching CRDs ({error.message}); a workload type installed later is watched after a restart"
            )
            return
        if source == "pods":
            self.store.pods_watched = False
            self._warn(f"cannot watch pods ({error.message}); workloads are shown without their pods")
        elif source == "owners":
            self._warn(f"cannot watch an owner kind ({error.message}); pods owned through it are not attributed")
        else:
            target = self._targets[_split(source)]
            target.watched.error = error.message
            self._refused.append(error.message)
            self._warn(f"not watching {target.watched.kind}: {error.message}")
            if len(self._refused) == len(self._targets):
                message = f"cannot list any covered workload type: {self._refused[0]}"
                self.store.failure = message
                raise ServeError(message)

    def _start_owner_informers(self) -> None:
        if not self.store.pods_watched:
            return
        for api_version, kind in sorted(self.index.unknown_owner_kinds()):
            group = group_of(api_version)
            if (group, kind) in self._owner_kinds:
                continue
            self._owner_kinds.add((group, kind))
            resource = self._discovery.preferred(group, kind)
            if resource is None or not resource.can("list"):
                continue  # not served: those pods stay unattributed, as in describe
            namespace = self.config.namespace if resource.namespaced else None
            self._start(
                "owners",
                WatchedResource.of(resource, namespace, metadata_only=True),
            )

    # --- views --------------------------------------------------------------------------------------------------

    async def _refresh(self, touched: set[str]) -> None:
        """Recompute the views of `touched`, giving the loop a turn between two workloads: a first LIST of 20,000
        workloads (or a slow definition) never holds up /healthz, a scrape or the dashboard. Only this coroutine
        changes the index (the informers' changes wait in the queue meanwhile), so each view reads one state;
        readers see the store fill in, and the event stream's `changed` comes once, at the end."""
        store = self.store
        for count, uid in enumerate(touched):
            if count:
                await asyncio.sleep(0)
            if uid not in self.index.workloads:
                store.drop(uid)
                self._cache.forget(uid)
                continue
            value = self._cache.get(self.index, uid)
            if isinstance(value, WorkloadView):
                store.put(uid, value)
            elif value is not None:
                store.drop(uid)
                store.resolve_errors[uid] = value
        store.generation += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def _compute(self, workload: dict[str, Any], pods: list[dict[str, Any]], owners: OwnerIndex) -> WorkloadView | str:
        kind = self._kind_of.get(uid_of(workload))
        target = self._targets.get(kind) if kind is not None else None
        if target is None:
            return "not a watched type"
        watched = target.watched
        try:
            resolution = resolve(
                target.karta, workload, policy=self.config.policy_for(watched.definition, watched.origin)
            )
            attribution = attribute(resolution, pods if self.store.pods_watched else [], owners)
            return build_view(resolution, attribution, origin=watched.origin, gpu_resource_names=self.config.gpu_names)
        except WorkloadMapError as exc:
            metadata = workload.get("metadata") or {}
            message = f"{watched.kind} {metadata.get('namespace', '')}/{metadata.get('name', '')}: {exc}"
            self._warn(message)
            return message


_SHARED_SOURCES = frozenset({"pods", "owners", "crds", "discovery", "definitions"})


def _split(source: str) -> tuple[str, str]:
    """A target's key from its source name (`group/kind#serial`)."""
    group, _, kind = source.partition("#")[0].rpartition("/")
    return group, kind
