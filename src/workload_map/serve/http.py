"""The HTTP routes of `wmap serve` on aiohttp (read-only: every route is a GET).

| route | answer |
|---|---|
| `/metrics` | the Prometheus text format (`serve.metrics`) |
| `/api/v1/workloads`, `/api/v1/workloads/{namespace}/{kind}/{name}`, `/api/v1/definitions` | JSON (`serve.api`) |
| `/healthz` | 200 while the process serves |
| `/readyz` | 200 once every informer has listed; 503 before, or after the watch failed |
| `/api/v1/events` | server-sent events: `changed` (with the store's generation) after each applied batch |
| `/`, `/static/app.js`, `/static/app.css` | the dashboard (package files; no inline script, under a strict CSP) |
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import msgspec
from aiohttp import web

from workload_map.catalog import DefinitionRegistry
from workload_map.serve import api
from workload_map.serve.metrics import WorkloadCollector
from workload_map.serve.store import Store

__all__ = ["make_app"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_SECURITY = {
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    # the dashboard's own files only: no inline script or style, nothing from elsewhere, no framing
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}
_STATIC = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "app.css": "text/css",
}
Changes = Callable[[], Awaitable[None]]
"""Returns after the store changed, or after a while without a change (the stream then sends a keep-alive)."""


def _asset(name: str) -> bytes:
    return resources.files("workload_map.serve").joinpath("static").joinpath(name).read_bytes()


_METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _json(document: Any, status: int = 200) -> web.Response:
    return web.Response(body=msgspec.json.encode(document), status=status, content_type="application/json")


@web.middleware
async def _problems(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except api.RequestError as problem:
        response = _json(problem.document(), problem.status)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = _json(api.RequestError(exc.status, exc.reason).document(), exc.status)
    response.headers.update(_SECURITY)
    return response


def make_app(
    store: Store,
    registry: DefinitionRegistry,
    collector: WorkloadCollector,
    changes: Changes | None = None,
    render_metrics: Callable[[], Awaitable[bytes]] | None = None,
) -> web.Application:
    """The application over a store the engine keeps current; `changes` feeds the event stream;
    `render_metrics` renders /metrics (default: `collector.render()` on the loop; `serve.run` gives one that
    renders in a worker thread)."""
    assets = {name: _asset(name) for name in _STATIC}

    async def page(_: web.Request) -> web.Response:
        return web.Response(body=assets["index.html"], content_type=_STATIC["index.html"], charset="utf-8")

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in assets or name == "index.html":
            raise web.HTTPNotFound(reason=f"no static file {name!r}")
        return web.Response(body=assets[name], content_type=_STATIC[name], charset="utf-8")

    async def events(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **_SECURITY})
        await response.prepare(request)
        sent = -1
        while True:
            if store.generation != sent:
                sent = store.generation
                await response.write(f'event: changed\ndata: {{"generation": {sent}}}\n\n'.encode())
            else:
                await response.write(b": keep-alive\n\n")
            if changes is None:
                return response
            await changes()

    async def metrics(_: web.Request) -> web.Response:
        body = await render_metrics() if render_metrics is not None else collector.render()
        return web.Response(body=body, headers={"Content-Type": _METRICS_TYPE})

    async def list_workloads(request: web.Request) -> web.Response:
        return _json(api.workloads(store, request.query))

    async def one_workload(request: web.Request) -> web.Response:
        info = request.match_info
        return _json(api.workload(store, info["namespace"], info["kind"], info["name"]))

    async def definitions(_: web.Request) -> web.Response:
        return _json(api.definitions(store, registry))

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(_: web.Request) -> web.Response:
        ready, document = api.readiness(store)
        return _json(document, 200 if ready else 503)

    app = web.Application(middlewares=[_problems])
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/api/v1/workloads", list_workloads)
    app.router.add_get("/api/v1/workloads/{namespace}/{kind}/{name}", one_workload)
    app.router.add_get("/api/v1/definitions", definitions)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/api/v1/events", events)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static)
    return app
