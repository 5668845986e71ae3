"""The live engine builds views without holding up the event loop (issue 23): while the views of 2,000
workloads are computed (a first LIST's worth), a real HTTP /healthz on the same loop is answered, and another
coroutine gets its turns, before the batch is done. Ordering, not timing: with the views built in one go, the
batch would finish before either got a turn."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import aiohttp
from aiohttp import web

from workload_map.catalog.registry import builtin_registry
from workload_map.cluster.discovery import APIResource, DiscoveryDocument
from workload_map.serve.engine import Engine, EngineConfig
from workload_map.serve.http import make_app
from workload_map.serve.metrics import WorkloadCollector

WORKLOADS = 2000


def _deployment(i: int) -> dict[str, Any]:
    labels = {"app": f"web-{i}"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"web-{i}", "namespace": "team", "uid": f"uid-{i}", "resourceVersion": "1"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "web", "resources": {"requests": {"cpu": "1"}}}]},
            },
        },
    }


def _engine() -> tuple[Engine, set[str]]:
    deployments = APIResource("apps", "v1", "Deployment", "deployments", "deployment", True, ("list", "watch"))
    config = EngineConfig(discovery=DiscoveryDocument([deployments], {"apps": ["v1"]}), registry=builtin_registry())
    # the client is never used: only the view step runs here (no informer is started)
    engine = Engine(cast(Any, None), config, log=lambda _line: None)
    engine._plan(config.discovery)
    touched: set[str] = set()
    for i in range(WORKLOADS):
        touched |= engine._workload_change(("apps", "Deployment"), _deployment(i), deleted=False)
    engine.store.synced = True
    return engine, touched


def test_healthz_is_answered_while_two_thousand_views_are_built() -> None:
    async def scenario() -> None:
        engine, touched = _engine()
        assert len(touched) == WORKLOADS
        runner = web.AppRunner(make_app(engine.store, builtin_registry(), WorkloadCollector(engine.store)))
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/healthz"
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(url) as warm:  # the connection made before the batch starts
                    assert warm.status == 200
                generation = engine.store.generation
                batch = asyncio.create_task(engine._refresh(touched))

                async def turns() -> bool:
                    for _ in range(10):
                        await asyncio.sleep(0)
                    return batch.done()

                async def healthz() -> tuple[int, bool, int]:
                    async with session.get(url) as answer:
                        await answer.read()
                        return answer.status, batch.done(), len(engine.store.views)

                done_after_turns, (status, done_at_answer, views_at_answer) = await asyncio.gather(turns(), healthz())
                await batch
        finally:
            await runner.cleanup()
        assert status == 200
        assert not done_after_turns and not done_at_answer  # both answered in the middle of the batch
        assert 0 < views_at_answer < WORKLOADS  # the store was filling in
        assert len(engine.store.views) == WORKLOADS  # and the batch completed every view
        assert engine.store.generation == generation + 1  # one change for the live stream, at the end

    asyncio.run(scenario())
