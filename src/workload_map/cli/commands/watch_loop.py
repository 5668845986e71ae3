"""What `wmap watch` and `wmap get -w` share: the event loop they run on, and a `LiveWatch` opened from a live
session (the same connection, discovery and definitions as every live command).

This is the CLI's one module that imports asyncio and the async cluster shell (`cluster.informer_aio`), and only
the two watching commands import it (`get` only inside its `-w` function, so a plain `get` never loads it),
so every other command still runs without an event loop of ours.
Ctrl-C ends a watch with exit 0 and no traceback, as kubectl's does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from workload_map.cli.context import state
from workload_map.cli.live import LiveSession, cli_error, debug_log
from workload_map.cli.options import poll_interval_option  # re-exported: the watching commands' flag
from workload_map.cluster import ClusterError, ResolvedType
from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.informer import WatchedResource
from workload_map.cluster.informer_aio import LiveWatch, Update

__all__ = ["LiveWatch", "Update", "open_watch", "poll_interval_option", "run_until_interrupted", "workload_resource"]


def run_until_interrupted(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run `main` on a new event loop until it returns or the user presses Ctrl-C (then: return, exit 0)."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())


def workload_resource(
    rtype: ResolvedType, *, namespace: str | None, name: str | None = None, selector: str | None = None
) -> WatchedResource:
    """What to watch for a TYPE (one object with `name`: a field selector on metadata.name)."""
    from workload_map.cluster.session import served

    resource = served(rtype)
    scope = namespace if resource.namespaced else None
    return WatchedResource.of(
        resource, scope, label_selector=selector, field_selector=f"metadata.name={name}" if name else None
    )


def _pods_resource(namespace: str | None) -> WatchedResource:
    return WatchedResource.pods(namespace)


@contextlib.asynccontextmanager
async def open_watch(
    session: LiveSession,
    workloads: WatchedResource,
    *,
    with_pods: bool,
    chunk_size: int,
    poll_interval: float,
) -> AsyncIterator[tuple[LiveWatch, AsyncIterator[Update]]]:
    """A `LiveWatch` on the session's cluster and its updates; cluster errors become CLI errors (a first LIST that
    fails, e.g. forbidden, is exit 1; later failures are retried with a warning)."""
    cluster = session.cluster
    try:
        discovery = cluster.discovery_document()
        client = AsyncApiClient(cluster.context, log=debug_log if state().debug else None)
    except ClusterError as exc:
        raise cli_error(exc) from None

    def warn(message: str) -> None:
        state().warn(message)
        state().flush_warnings()  # now: a watch has no end to print them after

    watch = LiveWatch(
        client,
        discovery,
        workloads,
        pods=_pods_resource(workloads.namespace) if with_pods else None,
        on_warning=warn,
        chunk_size=chunk_size,
        poll_interval=poll_interval,
    )

    async def updates() -> AsyncIterator[Update]:
        try:
            async for update in watch.updates():
                yield update
        except ClusterError as exc:
            raise cli_error(exc) from None

    try:
        yield watch, updates()
    finally:
        await watch.aclose()
        await client.aclose()
