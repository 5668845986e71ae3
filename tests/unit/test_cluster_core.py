"""The sans-I/O core both cluster shells run (issue 18): paging, errors thrown into operations, the chain of a
transport error. The shells themselves are proven against the real API server (tests/e2e, sync and async)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from workload_map.cluster.aio import adrive
from workload_map.cluster.core import Call, Op, drive, list_op, transport_reason
from workload_map.cluster.errors import ClusterError, NotFound

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


def _context(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, timeout: float | None = 30.0) -> Any:
    from workload_map.cluster import ConnectionSettings, load_context

    monkeypatch.setenv("HOME", str(tmp_path))
    settings = ConnectionSettings(server="https://10.0.0.1:6443", token="t", request_timeout=timeout)
    return load_context(settings, environ={})


def test_both_shells_answer_alike_and_the_async_one_is_cancellable(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2

    from workload_map.cluster import ApiClient, Forbidden, Operation
    from workload_map.cluster.aio import AsyncApiClient

    http: Any = httpx2
    context = _context(tmp_path, monkeypatch)
    body = b'{"kind":"Status","message":"jobsets is forbidden: User \\"alice\\" cannot list","reason":"Forbidden"}'
    op = Operation("list", "jobsets.jobset.x-k8s.io", "ml")

    def answer(request: Any) -> Any:
        if request.url.path == "/slow":
            raise http.ReadTimeout("timed out", request=request)
        return http.Response(403, content=body)

    async def answer_async(request: Any) -> Any:
        if request.url.path == "/hang":
            await asyncio.sleep(60)
        return answer(request)

    with ApiClient(context, transport=http.MockTransport(answer)) as client:
        with pytest.raises(Forbidden) as sync_forbidden:
            client.list("/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets", op=op)
        with pytest.raises(ClusterError) as sync_timeout:
            client.get("/slow")
        sync_records = [r.line.split(" (")[0] for r in client.requests]

    async def main() -> tuple[Any, Any, list[str]]:
        async with AsyncApiClient(context, transport=http.MockTransport(answer_async)) as client:
            with pytest.raises(Forbidden) as forbidden:
                await client.list("/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets", op=op)
            with pytest.raises(ClusterError) as timeout:
                await client.get("/slow")
            records = [r.line.split(" (")[0] for r in client.requests]
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await client.get("/hang")
            return forbidden.value, timeout.value, records

    forbidden, timeout, records = asyncio.run(main())
    assert (
        str(forbidden)
        == str(sync_forbidden.value)
        == ("not allowed to list jobsets.jobset.x-k8s.io in namespace ml (as user alice)")
    )
    assert type(timeout) is type(sync_timeout.value)
    assert str(timeout) == str(sync_timeout.value) == "no answer from https://10.0.0.1:6443 within 30s (GET /slow)"
    assert (
        records
        == sync_records
        == [
            "GET /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets?limit=500 -> 403",
            "GET /slow -> timeout",
        ]
    )
