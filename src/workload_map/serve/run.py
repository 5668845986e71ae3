"""`serve(config)`: start the engine and the HTTP server on one event loop and run until SIGINT/SIGTERM (then
return) or until the engine cannot go on (then raise `ServeError`). The CLI's `wmap serve` calls it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.kubeconfig import KubeContext
from workload_map.serve.access import Access
from workload_map.serve.engine import Engine, EngineConfig
from workload_map.serve.errors import ServeError
from workload_map.serve.http import make_app
from workload_map.serve.metrics import DEFAULT_MAX_SERIES, WorkloadCollector
from workload_map.serve.store import Store

__all__ = ["ServeConfig", "serve"]

KEEP_ALIVE = 15.0  # seconds between two writes on an idle event stream (proxies close silent connections)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class ServeConfig:
    """The connection (`context`), what to watch (`engine`), where to listen, and the metrics' series cap."""

    context: KubeContext
    engine: EngineConfig
    host: str = "127.0.0.1"
    port: int = 8080
    max_series: int = DEFAULT_MAX_SERIES
    user_tokens: bool = False  # check each request's token (serve.access) and show what it may list
    log: Callable[[str], None] = _stderr
    request_log: Callable[[str], None] | None = None


def serve(config: ServeConfig) -> None:
    """Run until interrupted (see the module docstring)."""
    asyncio.run(_main(config))


async def _main(config: ServeConfig) -> None:
    store = Store()
    client = AsyncApiClient(config.context, log=config.request_log)
    engine = Engine(client, config.engine, store=store, log=config.log)
    collector = WorkloadCollector(store, max_series=config.max_series, gpu_names=config.engine.gpu_names)

    async def changes() -> None:
        # the engine replaces its event after setting it: wait on the one in force now
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(engine.changed.wait(), KEEP_ALIVE)

    async def render_metrics() -> bytes:
        # the snapshot on the loop (where the store is written), the formatting in a thread: a scrape never
        # holds up the watch for long
        return await asyncio.to_thread(collector.render, collector.snapshot())

    access = Access(client) if config.user_tokens else None
    app = make_app(
        store, config.engine.registry, collector, changes=changes, render_metrics=render_metrics, access=access
    )
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, config.host, config.port)
        try:
            await site.start()
        except OSError as exc:
            raise ServeError(f"cannot listen on {config.host}:{config.port}: {exc.strerror or exc}") from None
        config.log(f"serving on {_url(config.host, runner)} (metrics: /metrics, API: /api/v1/workloads)")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop.set)
        watching = asyncio.create_task(engine.run())
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({watching, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for task in (watching, stopping):
            task.cancel()
        await asyncio.gather(watching, stopping, return_exceptions=True)
        if watching in done and not watching.cancelled():
            error = watching.exception()
            if error is not None:
                raise error
    finally:
        await runner.cleanup()
        await client.aclose()


def _url(host: str, runner: web.AppRunner) -> str:
    addresses = runner.addresses
    port = addresses[0][1] if addresses else 0
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"
