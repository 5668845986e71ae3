"""The HTTP routes of `wmap serve` on aiohttp (read-only: every route is a GET but the session's).

| route | answer |
|---|---|
| `/metrics` | the Prometheus text format (`serve.metrics`) |
| `/api/v1/workloads`, `/api/v1/workloads/{namespace}/{kind}/{name}`, `/api/v1/definitions` | JSON (`serve.api`) |
| `/healthz` | 200 while the process serves |
| `/readyz` | 200 once every informer has listed; 503 before, or after the watch failed |
| `/api/v1/events` | server-sent events: `changed` (with the store's generation) after each applied batch |
| `/`, `/static/app.js`, `/static/app.css` | the dashboard (package files; no inline script, under a strict CSP) |
| `POST`, `DELETE /api/v1/session` | with `--user-tokens`: keep a token in an HttpOnly cookie, or drop it |

With `access` (`--user-tokens`), the data routes need a token and show what it may list (`serve.access`);
`/metrics` needs a token that may GET it (a nonResourceURLs rule, as kube-rbac-proxy asks); the page, its files,
/healthz and /readyz stay open (they hold no cluster data).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import msgspec
from aiohttp import web

from workload_map.catalog import DefinitionRegistry
from workload_map.serve import api
from workload_map.serve.access import COOKIE, Access, AccessUnavailable, User
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


TOKEN_SOURCES = "Authorization: Bearer, X-Forwarded-Access-Token, or the wmap_token cookie from POST /api/v1/session"


def _token(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    forwarded = request.headers.get("X-Forwarded-Access-Token", "").strip()
    if forwarded:
        return forwarded
    return request.cookies.get(COOKIE, "").strip()


def make_app(
    store: Store,
    registry: DefinitionRegistry,
    collector: WorkloadCollector,
    *,
    changes: Changes | None = None,
    render_metrics: Callable[[], Awaitable[bytes]] | None = None,
    access: Access | None = None,
) -> web.Application:
    """The application over a store the engine keeps current; `changes` feeds the event stream;
    `render_metrics` renders /metrics (default: `collector.render()` on the loop; `serve.run` gives one that
    renders in a worker thread); with `access`, every data route needs a token and shows what it may list
    (serve.access)."""
    assets = {name: _asset(name) for name in _STATIC}

    async def caller(request: web.Request) -> User | None:
        """The request's user (None without `access`: everyone sees what the server's kubeconfig may list)."""
        if access is None:
            return None
        token = _token(request)
        if not token:
            raise api.RequestError(401, f"a bearer token is required ({TOKEN_SOURCES})")
        try:
            user = await access.user(token)
        except AccessUnavailable as exc:
            raise api.RequestError(503, f"cannot check the token with the API server: {exc.message}") from None
        if user is None:
            raise api.RequestError(401, "the API server does not accept this token")
        return user

    async def allowed_for(request: web.Request) -> api.Allowed | None:
        user = await caller(request)
        if user is None or access is None:
            return None
        try:
            visible = await access.visible(user, store.views.values(), store.types)
        except AccessUnavailable as exc:
            raise api.RequestError(503, f"cannot check access with the API server: {exc.message}") from None
        return lambda view: f"{view.namespace}/{view.kind}" in visible

    async def session(request: web.Request) -> web.Response:
        if access is None:
            raise web.HTTPNotFound(reason="no sessions: the server does not check user tokens (--user-tokens)")
        try:
            body = msgspec.json.decode(await request.read())
        except msgspec.DecodeError:
            body = None
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token.strip():
            raise api.RequestError(400, 'send {"token": "..."}: the bearer token to keep in a cookie')
        try:
            user = await access.user(token.strip())
        except AccessUnavailable as exc:
            raise api.RequestError(503, f"cannot check the token with the API server: {exc.message}") from None
        if user is None:
            raise api.RequestError(401, "the API server does not accept this token")
        response = _json({"apiVersion": api.API_VERSION, "kind": "Session", "user": user.name})
        response.set_cookie(COOKIE, token.strip(), httponly=True, samesite="Strict", path="/", secure=request.secure)
        return response

    async def end_session(_: web.Request) -> web.Response:
        response = _json({"apiVersion": api.API_VERSION, "kind": "Session", "user": None})
        response.del_cookie(COOKIE, path="/")
        return response

    async def page(_: web.Request) -> web.Response:
        return web.Response(body=assets["index.html"], content_type=_STATIC["index.html"], charset="utf-8")

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in assets or name == "index.html":
            raise web.HTTPNotFound(reason=f"no static file {name!r}")
        return web.Response(body=assets[name], content_type=_STATIC[name], charset="utf-8")

    async def events(request: web.Request) -> web.StreamResponse:
        await caller(request)
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

    async def metrics(request: web.Request) -> web.Response:
        user = await caller(request)
        if user is not None and access is not None and not await access.may_get_path(user, "/metrics"):
            raise api.RequestError(403, f'user "{user.name}" may not get /metrics (a nonResourceURLs rule allows it)')
        body = await render_metrics() if render_metrics is not None else collector.render()
        return web.Response(body=body, headers={"Content-Type": _METRICS_TYPE})

    async def list_workloads(request: web.Request) -> web.Response:
        return _json(api.workloads(store, request.query, await allowed_for(request)))

    async def one_workload(request: web.Request) -> web.Response:
        info = request.match_info
        allowed = await allowed_for(request)
        return _json(api.workload(store, info["namespace"], info["kind"], info["name"], allowed))

    async def definitions(request: web.Request) -> web.Response:
        await caller(request)
        return _json(api.definitions(store, store.registry or registry))

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
    app.router.add_post("/api/v1/session", session)
    app.router.add_delete("/api/v1/session", end_session)
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", static)
    return app
