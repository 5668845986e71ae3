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

__all__ = ["ServeConfig", "Server", "serve"]

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
    follow_kartas: bool = True  # a Karta applied, changed or deleted while serving takes effect (serve.kartas)


def serve(config: ServeConfig) -> None:
    """Run until interrupted (see the module docstring)."""
    asyncio.run(_main(config))


async def _main(config: ServeConfig) -> None:
    client = AsyncApiClient(config.context, log=config.request_log)
    try:
        server = Server(
            client,
            config.engine,
            host=config.host,
            port=config.port,
            max_series=config.max_series,
            user_tokens=config.user_tokens,
            log=config.log,
        )
        await server.start()
        try:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(signum, stop.set)
            following = None
            if config.follow_kartas:
                from workload_map.serve.kartas import follow_kartas

                following = asyncio.create_task(follow_kartas(client, server.engine, config.log))
            try:
                await server.run(stop)
            finally:
                if following is not None:
                    following.cancel()
                    await asyncio.gather(following, return_exceptions=True)
        finally:
            await server.close()
    finally:
        await client.aclose()


class Server:
    """The engine and the HTTP server over one client, on the running loop: `wmap serve` runs one, and so does
    `workload-map-controller --dashboard-bind-address` (with `user_tokens`, over the controller's client).
    `start()` listens (a port in use is `ServeError`), `run(stop)` watches until `stop` is set (or raises the
    engine's `ServeError`), `close()` stops listening."""

    def __init__(
        self,
        client: AsyncApiClient,
        engine: EngineConfig,
        *,
        host: str,
        port: int,
        max_series: int = DEFAULT_MAX_SERIES,
        user_tokens: bool = False,
        log: Callable[[str], None] = _stderr,
    ) -> None:
        self.host, self.port, self.log = host, port, log
        self.store = Store()
        self.engine = Engine(client, engine, store=self.store, log=log)
        collector = WorkloadCollector(self.store, max_series=max_series, gpu_names=engine.gpu_names)
        self.access = Access(client) if user_tokens else None

        async def changes() -> None:
            # the engine replaces its event after setting it: wait on the one in force now
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.engine.changed.wait(), KEEP_ALIVE)

        async def render_metrics() -> bytes:
            # the snapshot on the loop (where the store is written), the formatting in a thread: a scrape never
            # holds up the watch for long
            return await asyncio.to_thread(collector.render, collector.snapshot())

        app = make_app(
            self.store, engine.registry, collector, changes=changes, render_metrics=render_metrics, access=self.access
        )
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)

    async def start(self) -> str:
        """Listen; the URL served (its port is the one bound when `port` is 0)."""
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self.runner.cleanup()
            raise ServeError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        url = _url(self.host, self.runner)
        self.log(f"serving on {url} (metrics: /metrics, API: /api/v1/workloads)")
        return url

    async def run(self, stop: asyncio.Event) -> None:
        watching = asyncio.create_task(self.engine.run())
        stopping = asyncio.create_task(stop.wait())
        try:
            done, _ = await asyncio.wait({watching, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:  # cancelled too (the controller stops its dashboard so)
            for task in (watching, stopping):
                task.cancel()
            await asyncio.gather(watching, stopping, return_exceptions=True)
        if watching in done and not watching.cancelled():
            error = watching.exception()
            if error is not None:
                raise error

    async def close(self) -> None:
        await self.runner.cleanup()


def _url(host: str, runner: web.AppRunner) -> str:
    addresses = runner.addresses
    port = addresses[0][1] if addresses else 0
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"
