"""The async shell of the informer: `AsyncInformer` sends what `informer.InformerCore` asks (LIST pages, a watch
stream, a sleep) over an `AsyncApiClient` and hands the changes to callbacks.

    informer = AsyncInformer(client, WatchedResource(...), on_change=print)
    task = asyncio.create_task(informer.run())
    await informer.synced.wait()          # the first LIST is in the store
    informer.store.get("ml/train")

`run()` returns only by cancellation, or raises the `ClusterError` of a first LIST that failed (`Fail`); every
later failure is retried by the core's rules (backoff, re-LIST on 410, polling when watch is forbidden).
Callbacks run on the loop, in order, between two reads; they must not block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.errors import ApiError, ClusterError
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

__all__ = ["AsyncInformer"]


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
