"""The sans-I/O core both cluster shells run (issue 18): paging, errors thrown into operations, the chain of a
transport error. The shells themselves are proven against the real API server (tests/e2e, sync and async)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from workload_map.cluster.aio import adrive
from workload_map.cluster.core import Call, Op, drive, list_op, transport_reason
from workload_map.cluster.errors import NotFound

PAGES = {
    "": {"kind": "JobSetList", "metadata": {"continue": "a"}, "items": [{"n": 1}]},
    "a": {"kind": "JobSetList", "metadata": {"continue": "b"}, "items": [{"n": 2}, "not an object"]},
    "b": {"kind": "JobSetList", "metadata": {"resourceVersion": "7"}, "items": [{"n": 3}]},
}


def _server(sent: list[Call]) -> Any:
    def handle(call: Call) -> Any:
        sent.append(call)
        if call.path == "/missing":
            raise NotFound("nope")
        return PAGES[(call.params or {}).get("continue", "")]

    return handle


def _with_fallback() -> Op[str]:
    try:
        yield Call("GET", "/missing")
    except NotFound as exc:
        return f"fell back: {exc.message}"
    return "unreachable"


def test_one_operation_runs_the_same_under_both_drivers() -> None:
    sync_sent: list[Call] = []
    async_sent: list[Call] = []
    blocking = drive(list_op("/apis/x/v1/jobsets", chunk_size=1), _server(sync_sent))

    async def awaiting() -> Any:
        handle = _server(async_sent)

        async def answer(call: Call) -> Any:
            await asyncio.sleep(0)
            return handle(call)

        return await adrive(list_op("/apis/x/v1/jobsets", chunk_size=1), answer), await adrive(_with_fallback(), answer)

    awaited, fallback = asyncio.run(awaiting())
    assert blocking == awaited
    assert [item["n"] for item in blocking.items] == [1, 2, 3]
    assert (blocking.pages, blocking.kind, blocking.resource_version) == (3, "JobSetList", "7")
    assert [c.query for c in sync_sent] == ["limit=1", "limit=1&continue=a", "limit=1&continue=b"]
    assert [c.query for c in async_sent][:3] == [c.query for c in sync_sent]
    assert fallback == "fell back: nope"
    assert drive(_with_fallback(), _server([])) == "fell back: nope"


def test_an_error_not_caught_by_the_operation_propagates() -> None:
    def bare() -> Op[Any]:
        return (yield Call("GET", "/missing"))

    with pytest.raises(NotFound):
        drive(bare(), _server([]))


def test_the_async_transports_wrapped_os_error_reads_as_the_sync_one() -> None:
    inner = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)")
    outer = OSError("All connection attempts failed")
    outer.__cause__ = inner
    wrapped = RuntimeError("All connection attempts failed")
    wrapped.__cause__ = outer
    assert transport_reason(wrapped) == "connection refused"
    assert transport_reason(OSError("[Errno -2] Name or service not known")) == "name or service not known"
