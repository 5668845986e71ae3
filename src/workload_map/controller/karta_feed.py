"""One watch of the cluster's Karta objects for the whole controller process, shared by its readers: the Karta
operator and the pod grouper (on the leader) and the dashboard (on every replica). Each subscribes a callback
for the changes; all read the one store. The watch runs for the process's life once someone starts it (a
standby's dashboard starts it before leadership; the leader's controllers then find it listed).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.informer import Change, Store, WatchedResource
from workload_map.cluster.informer_aio import AsyncInformer

__all__ = ["KARTAS", "KartaFeed"]

KARTAS = WatchedResource(
    path="/apis/run.ai/v1alpha1/kartas",
    kind="Karta",
    api_version="run.ai/v1alpha1",
    resource="kartas.run.ai",
)


class KartaFeed:
    def __init__(self, client: AsyncApiClient) -> None:
        self.informer = AsyncInformer(client, KARTAS, on_change=self._changed)
        self._subscribers: list[Callable[[Change], None]] = []
        self._task: asyncio.Task[None] | None = None

    @property
    def store(self) -> Store:
        return self.informer.store

    @property
    def synced(self) -> asyncio.Event:
        return self.informer.synced

    def subscribe(self, callback: Callable[[Change], None]) -> None:
        self._subscribers.append(callback)

    def unsubscribe(self, callback: Callable[[Change], None]) -> None:
        with contextlib.suppress(ValueError):
            self._subscribers.remove(callback)

    def _changed(self, change: Change) -> None:
        for callback in list(self._subscribers):
            callback(change)

    def start(self) -> asyncio.Task[None]:
        """The watch's task (started by the first caller): it ends only on an error (no Karta CRD, RBAC)."""
        if self._task is None:
            self._task = asyncio.create_task(self.informer.run())
        return self._task

    async def listed(self) -> None:
        """Wait for the first LIST; raise its error when it failed."""
        task = self.start()
        synced = asyncio.ensure_future(self.synced.wait())
        try:
            await asyncio.wait([synced, task], return_when=asyncio.FIRST_COMPLETED)
        finally:
            synced.cancel()
        if not self.synced.is_set() and task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
