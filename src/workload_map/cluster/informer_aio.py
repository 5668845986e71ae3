"""The async shell of the informer: `AsyncInformer` sends what `informer.InformerCore` asks (LIST pages, a watch
stream, a sleep) over an `AsyncApiClient` and hands the changes to callbacks.

    informer = AsyncInformer(client, WatchedResource(...), on_change=print)
    task = asyncio.create_task(informer.run())
    await informer.synced.wait()          # the first LIST is in the store
    informer.store.get("ml/train")

`run()` returns only by cancellation, or raises the `ClusterError` of a first LIST that failed (`Fail`); every
later failure is retried by the core's rules (backoff, re-LIST on 410, polling when watch is forbidden).
Callbacks run on the loop, in order, between two reads; they must not block.

`LiveWatch` puts informers together for a live view: a workload type, the pods of its namespace and, metadata
only, each owner kind between them, feeding one `cluster.index.WorkloadIndex`; `updates()` yields what each batch
of changes touched (what `wmap watch` and `wmap get -w` render).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.errors import ApiError, ClusterError
from workload_map.cluster.index import WorkloadIndex
from workload_map.cluster.informer import (
    Action,
    Backoff,
    Change,
    Fail,
    InformerCore,
    Notice,
    Send,
    Store,
    Synced,
    Wait,
    Watch,
    WatchedResource,
    WatchWarning,
)

if TYPE_CHECKING:
    from workload_map.cluster.discovery import DiscoveryDocument

__all__ = ["AsyncInformer", "LiveWatch", "Update"]


class AsyncInformer:
    """LIST + WATCH of one resource, kept in `store` (see the module docstring)."""

    def __init__(
        self,
        client: AsyncApiClient,
        resource: WatchedResource,
        *,
        on_change: Callable[[Change], None] | None = None,
        on_synced: Callable[[Synced], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        chunk_size: int = 500,
        watch_timeout: float = 300.0,
        poll_interval: float = 10.0,
        backoff: Backoff | None = None,
        resume_from: str = "",
    ) -> None:
        self.client = client
        self.core = InformerCore(
            resource,
            chunk_size=chunk_size,
            watch_timeout=watch_timeout,
            poll_interval=poll_interval,
            backoff=backoff or Backoff(),
            resume_from=resume_from,
        )
        self.on_change = on_change
        self.on_synced = on_synced
        self.on_warning = on_warning
        self.synced = asyncio.Event()
        self.decoder = msgspec.json.Decoder()

    @property
    def store(self) -> Store:
        return self.core.store

    @property
    def resource(self) -> WatchedResource:
        return self.core.resource

    async def run(self) -> None:
        action: Action = self.core.start()
        while True:
            self._deliver(self.core.drain())
            if isinstance(action, Send):
                try:
                    answer = await self.client.send(action.call)
                except ClusterError as exc:
                    action = self.core.failed(exc)
                else:
                    action = self.core.page(answer)
            elif isinstance(action, Watch):
                action = await self._watch(action)
            elif isinstance(action, Wait):
                await asyncio.sleep(action.seconds)
                action = self.core.woke()
            elif isinstance(action, Fail):
                self._deliver(self.core.drain())
                raise action.error

    async def _watch(self, watch: Watch) -> Action:
        try:
            async for line in self.client.stream_lines(watch.call, read_timeout=watch.read_timeout):
                try:
                    event = self.decoder.decode(line)
                except msgspec.DecodeError:
                    return self.core.failed(ApiError(f"watch {watch.call.path}: an event that is not JSON", status=200))
                following = self.core.event(event)
                self._deliver(self.core.drain())
                if following is not None:
                    return following
        except ClusterError as exc:
            return self.core.failed(exc)
        return self.core.ended()

    def _deliver(self, notices: list[Notice]) -> None:
        for notice in notices:
            if isinstance(notice, Change):
                if self.on_change is not None:
                    self.on_change(notice)
            elif isinstance(notice, Synced):
                self.synced.set()
                if self.on_synced is not None:
                    self.on_synced(notice)
            elif isinstance(notice, WatchWarning) and self.on_warning is not None:
                self.on_warning(notice.message)


# --- a live view: workloads, their pods and the owners between them -----------------------------------------------


@dataclass(frozen=True)
class Update:
    """What one batch of changes did: the workload objects added, modified or deleted (in order), and the UIDs of
    the workloads whose object or pods changed. `initial`: the first update, once every informer has listed."""

    workload_changes: list[Change]
    touched: set[str]
    initial: bool = False


@dataclass
class _Item:
    source: str  # "workloads", "pods", "owners"
    change: Change | None = None
    error: BaseException | None = None
    synced: bool = False


class LiveWatch:
    """Informers for a workload type (`workloads`) and, with `pods`, for the pods of the same namespace and a
    metadata-only one per owner kind their chains pass through (started as the `WorkloadIndex` meets them), all
    feeding one `WorkloadIndex`. `updates()` yields an `Update` per batch of changes (changes that arrived together
    are applied together, so a burst is one update)."""

    def __init__(
        self,
        client: AsyncApiClient,
        discovery: DiscoveryDocument,
        workloads: WatchedResource,
        *,
        pods: WatchedResource | None = None,
        on_warning: Callable[[str], None] | None = None,
        chunk_size: int = 500,
        poll_interval: float = 10.0,
        watch_timeout: float = 300.0,
        backoff: Callable[[], Backoff] = Backoff,
    ) -> None:
        self.client = client
        self.discovery = discovery
        self.index = WorkloadIndex()
        self.on_warning = on_warning
        self.chunk_size = chunk_size
        self.poll_interval = poll_interval
        self.watch_timeout = watch_timeout
        self._backoff = backoff
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._pending_sync = 0
        self._owner_kinds: set[tuple[str, str]] = {(workloads.api_version, workloads.kind)}
        self.workloads = self._start("workloads", workloads)
        self.pods = self._start("pods", pods) if pods is not None else None
        self.owners: list[AsyncInformer] = []

    def _start(self, source: str, resource: WatchedResource) -> AsyncInformer:
        queue = self._queue
        informer = AsyncInformer(
            self.client,
            resource,
            on_change=lambda change: queue.put_nowait(_Item(source, change)),
            on_synced=lambda synced: queue.put_nowait(_Item(source, synced=not synced.relist)),
            on_warning=self.on_warning,
            backoff=self._backoff(),
            chunk_size=self.chunk_size,
            poll_interval=self.poll_interval,
            watch_timeout=self.watch_timeout,
        )

        async def run() -> None:
            try:
                await informer.run()
            except asyncio.CancelledError:
                raise
            except ClusterError as exc:
                if source != "owners":
                    queue.put_nowait(_Item(source, error=exc))
                    return
                # An owner kind that cannot be read costs only the pods owned through it, as in describe.
                if self.on_warning is not None:
                    self.on_warning(
                        f"cannot read {resource.kind} objects ({exc.message}); pods owned through them are not "
                        "attributed to the workload"
                    )
                queue.put_nowait(_Item(source, synced=True))
            except BaseException as exc:  # handed to the consumer, who raises it
                queue.put_nowait(_Item(source, error=exc))

        self._pending_sync += 1
        self._tasks.append(asyncio.get_running_loop().create_task(run()))
        return informer

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def updates(self) -> AsyncIterator[Update]:
        changes: list[Change] = []
        touched: set[str] = set()
        initial = True
        while True:
            items = [await self._queue.get()]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            for item in items:
                if item.error is not None:
                    raise item.error
                if item.synced:
                    self._pending_sync -= 1
                if item.change is not None:
                    touched |= self._apply(item.source, item.change)
                    if item.source == "workloads":
                        changes.append(item.change)
            self._start_owner_informers()
            if self._pending_sync > 0:
                continue  # the first update waits until every informer has listed
            if initial or changes or touched:
                yield Update(changes, touched, initial=initial)
                changes, touched, initial = [], set(), False

    def _apply(self, source: str, change: Change) -> set[str]:
        index = self.index
        if source == "workloads":
            if change.type == "DELETED":
                return index.remove_workload(change.object)
            return index.set_workload(change.object)
        if source == "pods":
            return index.remove_pod(change.object) if change.type == "DELETED" else index.set_pod(change.object)
        return index.remove_owner(change.object) if change.type == "DELETED" else index.set_owner(change.object)

    def _start_owner_informers(self) -> None:
        if self.pods is None:
            return
        for api_version, kind in sorted(self.index.unknown_owner_kinds() - self._owner_kinds):
            self._owner_kinds.add((api_version, kind))
            resource = self.discovery.preferred(api_version.rpartition("/")[0], kind)
            if resource is None or not resource.can("list"):
                continue  # not served: those pods stay unattributed, as in describe
            namespace = self.pods.resource.namespace if resource.namespaced else None
            self.owners.append(
                self._start(
                    "owners",
                    WatchedResource.of(resource, namespace, metadata_only=True),
                )
            )
