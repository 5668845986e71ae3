"""The two cluster APIs the e2e tests run through: the sync `Cluster` and the async `AsyncCluster`.

`cluster_api` (conftest) is parametrized over "sync" and "async". Under "async", `install_async` points the CLI's
cluster seam (`workload_map.cli.live.Cluster`, and `top_level` of `get --all-types`) at `AsyncBackedCluster`: the
sync `Cluster` interface, every call run as the `AsyncCluster` coroutine on an event loop of its own thread, so every
request of the case goes through the async shell (httpx's AsyncClient, `adrive`, the async owner loader). The same
cases and the same assertions then run through both APIs. A case that runs the installed executable runs
`python -m tests.e2e.async_wmap` instead (the same CLI with the same seam). No tests here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar

import pytest

from workload_map.cluster import aio

T = TypeVar("T")
_current = {"api": "sync"}


def current() -> str:
    """The API the running case uses ("sync" or "async")."""
    return _current["api"]


class AsyncBackedLoader:
    """An `OwnerLoader` face over an `AsyncOwnerLoader` (what `get --all-types` hands `top_level`)."""

    def __init__(self, cluster: AsyncBackedCluster, loader: aio.AsyncOwnerLoader) -> None:
        self.cluster = cluster
        self.loader = loader

    def resolve(self, namespace: str, reference: Mapping[str, Any]) -> Any:
        return self.cluster.call(self.loader.resolve(namespace, reference))

    @property
    def listings(self) -> Any:
        return self.loader.listings


class AsyncBackedCluster:
    """The sync `Cluster` interface over an `AsyncCluster` running on its own event loop thread."""

    def __init__(self, settings: Any = None, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="async-cluster", daemon=True)
        self._thread.start()

        async def make() -> aio.AsyncCluster:
            return aio.AsyncCluster(settings, **kwargs)

        try:
            self.inner = self.call(make())
        except BaseException:
            self._stop()
            raise
        self.context = self.inner.context
        self.client = self.inner.client
        self.discovery = self.inner.discovery
        self.chunk_size = self.inner.chunk_size

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def close(self) -> None:
        try:
            self.call(self.inner.aclose())
        finally:
            self._stop()

    def __enter__(self) -> AsyncBackedCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def namespace(self) -> str:
        return self.inner.namespace

    @property
    def requests(self) -> int:
        return self.inner.requests

    def run(self, op: Any) -> Any:
        return self.call(self.inner.run(op))

    def definitions(self) -> Any:
        return self.call(self.inner.definitions())

    def discovery_document(self) -> Any:
        return self.call(self.inner.discovery_document())

    def resolve_type(self, token: str, registry: Any) -> Any:
        return self.call(self.inner.resolve_type(token, registry))

    def served(self, rtype: Any) -> Any:
        return self.inner.served(rtype)

    def list_objects(self, rtype: Any, **kwargs: Any) -> Any:
        return self.call(self.inner.list_objects(rtype, **kwargs))

    def get_object(self, rtype: Any, name: str, **kwargs: Any) -> Any:
        return self.call(self.inner.get_object(rtype, name, **kwargs))

    def list_pods(self, namespace: str | None, **kwargs: Any) -> Any:
        return self.call(self.inner.list_pods(namespace, **kwargs))

    def owner_loader(self, *, all_namespaces: bool = False) -> AsyncBackedLoader:
        return AsyncBackedLoader(self, self.inner.owner_loader(all_namespaces=all_namespaces))

    def fetch_workload(self, rtype: Any, name: str, **kwargs: Any) -> Any:
        return self.call(self.inner.fetch_workload(rtype, name, **kwargs))

    def merge_patch(self, rtype: Any, name: str, patch: Any, **kwargs: Any) -> Any:
        return self.call(self.inner.merge_patch(rtype, name, patch, **kwargs))


def async_top_level(
    objects: Iterable[tuple[str, dict[str, Any]]], covered: set[tuple[str, str]], loader: AsyncBackedLoader, **kw: Any
) -> Any:
    return loader.cluster.call(aio.top_level(objects, covered, loader.loader, **kw))


def install_async(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route the CLI's cluster seam through the async API for one case."""
    import workload_map.cli.commands.get as get_command
    import workload_map.cli.live as live

    monkeypatch.setattr(live, "Cluster", AsyncBackedCluster)
    monkeypatch.setattr(get_command, "top_level", async_top_level)
    monkeypatch.setitem(_current, "api", "async")


def cluster_class(api: str) -> Any:
    """`Cluster` or `AsyncBackedCluster`, for cases that use the cluster layer directly."""
    if api == "async":
        return AsyncBackedCluster
    from workload_map.cluster import Cluster

    return Cluster
