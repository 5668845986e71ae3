"""The HTTP routes of `wmap serve` (serve.http) on a real aiohttp server on a free port, over a store of catalog
fixture views: content types, the security headers on every answer, JSON errors, the dashboard's files (and
nothing else) served, and the event stream's first event and its next one after a change."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from workload_map.catalog.registry import builtin_registry
from workload_map.serve.http import make_app
from workload_map.serve.metrics import WorkloadCollector
from workload_map.serve.store import Store

from .test_serve_metrics import fixture_view


async def started(store: Store, changed: asyncio.Event) -> tuple[web.AppRunner, str]:
    async def changes() -> None:
        await changed.wait()
        changed.clear()

    app = make_app(store, builtin_registry(), WorkloadCollector(store), changes=changes)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


async def lines(stream: aiohttp.StreamReader) -> AsyncIterator[str]:
    while True:
        line = await stream.readline()
        if not line:
            return
        yield line.decode()


def test_routes_headers_and_the_event_stream() -> None:
    async def main() -> None:
        view, _ = fixture_view("kubeflow-org-pytorchjob-v1")
        store = Store(synced=True)
        store.put("u1", view)
        changed = asyncio.Event()
        runner, url = await started(store, changed)
        try:
            async with aiohttp.ClientSession() as http:
                for path, content_type in (
                    ("/", "text/html"),
                    ("/static/app.js", "text/javascript"),
                    ("/static/app.css", "text/css"),
                    ("/metrics", "text/plain"),
                    ("/api/v1/workloads", "application/json"),
                    ("/readyz", "application/json"),
                ):
                    async with http.get(url + path) as answer:
                        assert answer.status == 200, path
                        assert answer.headers["Content-Type"].startswith(content_type), path
                        csp = answer.headers["Content-Security-Policy"]
                        assert "script-src 'self'" in csp and "default-src 'none'" in csp
                        assert answer.headers["X-Content-Type-Options"] == "nosniff"
                async with http.get(url + "/") as answer:
                    page = await answer.text()
                assert '<script src="/static/app.js" defer></script>' in page
                assert "<script>" not in page and "style=" not in page  # nothing inline for the CSP to allow
                for path in ("/static/index.html", "/static/../run.py", "/static/nothing.js", "/nowhere"):
                    async with http.get(url + path) as answer:
                        assert answer.status == 404, path
                        body = await answer.json()
                        assert body["kind"] == "Status" and body["status"] == 404
                async with http.post(url + "/api/v1/workloads") as answer:
                    assert answer.status == 405
                async with http.get(f"{url}/api/v1/workloads/{view.namespace}/pytorchjob/{view.name}") as answer:
                    assert (await answer.json()) == view.to_dict()

                async with http.get(url + "/api/v1/events") as stream:
                    assert stream.headers["Content-Type"] == "text/event-stream"
                    reader = lines(stream.content)
                    assert await anext(reader) == "event: changed\n"
                    assert await anext(reader) == 'data: {"generation": 0}\n'
                    assert await anext(reader) == "\n"
                    changed.set()  # the store did not change: a keep-alive
                    assert await asyncio.wait_for(anext(reader), 30) == ": keep-alive\n"
                    assert await anext(reader) == "\n"
                    store.generation = 7
                    changed.set()
                    assert await asyncio.wait_for(anext(reader), 30) == "event: changed\n"
                    assert await anext(reader) == 'data: {"generation": 7}\n'
        finally:
            await runner.cleanup()

    asyncio.run(main())


@pytest.mark.parametrize(("query", "status"), [("limit=0", 400), ("limit=5001", 400), ("continue=x", 400)])
def test_bad_queries_are_400_with_a_message(query: str, status: int) -> None:
    async def main() -> None:
        runner, url = await started(Store(synced=True), asyncio.Event())
        try:
            async with aiohttp.ClientSession() as http, http.get(f"{url}/api/v1/workloads?{query}") as answer:
                assert answer.status == status
                body = await answer.json()
                assert body["message"].startswith(query.split("=", maxsplit=1)[0])
        finally:
            await runner.cleanup()

    asyncio.run(main())
