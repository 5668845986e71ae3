"""The async shell of the cluster layer: `AsyncApiClient` and `AsyncCluster`, over httpx's `AsyncClient`.

Nothing here decides what to send or what an answer means: the requests, the paging, the status -> error mapping, the
request records, discovery parsing and its cache, the owner walks and the Karta list are the sans-I/O core's
(`core`, `discovery`, `owners`, `definitions`, `session`'s operations), the same code the blocking `ApiClient` and
`Cluster` run. This shell only sends (`AsyncApiClient.send`) and drives operations (`adrive`): a `Gather` is
`asyncio.gather` (at most `limit` at a time), an `Owners` need is answered concurrently by an `AsyncOwnerLoader`.

Timeouts: the per-request timeout of the connection settings (`request_timeout`, default 30 s) applies as in the
sync client and raises `Unreachable`; wrap any call in `asyncio.timeout(...)` for an overall budget. Cancellation
closes the request in flight (httpx). Errors are the sync API's (`ClusterError` and its family, under
`WorkloadMapError`). Only this module (and `workload_map.jq.aio`) imports asyncio: the sync CLI never loads it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from workload_map.cluster.client import USER_AGENT, Recorder, RequestRecord, http_settings, invalid_server
from workload_map.cluster.core import (
    DEFAULT_CHUNK_SIZE,
    JSON,
    Call,
    Gather,
    ListResult,
    Need,
    Op,
    Operation,
    list_op,
    merge_patch_op,
    transport_errors,
)
from workload_map.cluster.definitions import ClusterDefinitions, definitions_op
from workload_map.cluster.discovery import DEFAULT_TTL, DiscoveryCache, DiscoveryDocument, default_cache_dir, fetch_op
from workload_map.cluster.errors import ClusterError
from workload_map.cluster.kubeconfig import ConnectionSettings, KubeContext, load_context
from workload_map.cluster.owners import (
    MAX_HOPS,
    OwnerListing,
    Owners,
    TopLevelResult,
    listing_key,
    listing_op,
    reference_kind,
    top_level_op,
    walk_op,
)
from workload_map.cluster.session import (
    DEFAULT_CACHE,
    Discover,
    LiveWorkload,
    _DefaultCache,
    fetch_workload_op,
    get_object_op,
    list_objects_op,
    list_pods_op,
    merge_patch_object_op,
    resolve_type_op,
    served,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from workload_map.catalog import DefinitionRegistry
    from workload_map.cluster.credentials import Credentials
    from workload_map.cluster.discovery import APIResource
    from workload_map.cluster.typetokens import ResolvedType
    from workload_map.pods import OwnerIndex

__all__ = [
    "AsyncApiClient",
    "AsyncCluster",
    "AsyncDiscovery",
    "AsyncOwnerLoader",
    "adrive",
    "load_cluster_definitions",
    "top_level",
    "walk_pod_owners",
]

T = TypeVar("T")


async def adrive(op: Op[T], handle: Callable[[Need], Awaitable[Any]]) -> T:
    """`core.drive`, awaiting each answer: a `ClusterError` of `handle` is thrown into `op`."""
    value: Any = None
    error: ClusterError | None = None
    while True:
        try:
            need = op.send(value) if error is None else op.throw(error)
        except StopIteration as stop:
            result: T = stop.value
            return result
        try:
            value, error = await handle(need), None
        except ClusterError as exc:
            value, error = None, exc


def _async_auth(auth: Any, http_mod: Any) -> Any:
    """The credentials' auth for the async client: one that may run an exec plugin runs it in a thread, not on the
    loop."""
    found: Credentials | None = getattr(auth, "credentials", None)
    if found is None or not found.runs_plugin:
        return auth
    plugin: Credentials = found

    class AsyncCredentialAuth(http_mod.Auth):  # type: ignore[misc]
        credentials = plugin

        def sync_auth_flow(self, request: Any) -> Any:
            return auth.sync_auth_flow(request)

        async def async_auth_flow(self, request: Any) -> Any:
            request.headers["Authorization"] = await asyncio.to_thread(plugin.authorization)
            response = yield request
            if response.status_code == 401:
                request.headers["Authorization"] = await asyncio.to_thread(lambda: plugin.authorization(renew=True))
                yield request

    return AsyncCredentialAuth()


class AsyncApiClient(Recorder):
    """`ApiClient`, awaitable: the same requests, records (`requests`, `log`) and errors. Close it (`aclose`, or
    `async with`)."""

    def __init__(
        self,
        context: KubeContext,
        *,
        log: Callable[[str], None] | None = None,
        user_agent: str = USER_AGENT,
        transport: Any = None,
    ) -> None:
        super().__init__(context, log)
        http_mod, settings = http_settings(context, user_agent)
        settings["auth"] = _async_auth(settings["auth"], http_mod)
        self._http_errors = http_mod
        try:
            self._http: Any = http_mod.AsyncClient(**settings, transport=transport)
        except (http_mod.InvalidURL, ValueError) as exc:
            raise invalid_server(context, exc) from None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def send(self, call: Call) -> Any:
        """Send one request and return the decoded JSON body; raise a `ClusterError` for any failure."""
        start = time.perf_counter()
        try:
            async with self._http.stream(
                call.method,
                call.path,
                params=dict(call.params or {}),
                headers=call.headers,
                content=call.body,
                extensions=self.context.request_extensions,
            ) as response:
                status = response.status_code
                self._declared_too_large(call, status, response.headers.get("content-length"), start)
                parts: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        raise self._too_large(call, status, size, start)
                    parts.append(chunk)
        except transport_errors(self._http_errors) as exc:
            raise self._failed(call, exc, self._http_errors, start) from None
        return self._answered(call, status, b"".join(parts), response.headers.get("content-type"), start)

    async def stream_lines(self, call: Call, *, read_timeout: float) -> AsyncIterator[bytes]:
        """Send one request whose answer is a stream (a watch) and yield each line of it as it arrives; the stream
        may stay silent `read_timeout` seconds. A status of 400 or more raises its `ClusterError` (as `send`); a
        stream that breaks raises `Unreachable`. The request is recorded once, when the stream ends."""
        start = time.perf_counter()
        timeout = self._http_errors.Timeout(self.context.request_timeout, read=read_timeout)
        size = 0
        try:
            async with self._http.stream(
                call.method,
                call.path,
                params=dict(call.params or {}),
                headers=call.headers,
                timeout=timeout,
                extensions=self.context.request_extensions,
            ) as response:
                status = response.status_code
                if status >= 400:
                    content = bytearray()
                    async for chunk in response.aiter_bytes():
                        content += chunk
                        if len(content) > self.max_response_bytes:
                            raise self._too_large(call, status, len(content), start)
                    self._answered(call, status, bytes(content), response.headers.get("content-type"), start)
                    return  # pragma: no cover - _answered raised
                pending = bytearray()  # one event per line; a line is bounded as an answer is
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    pending += chunk
                    if b"\n" in chunk:  # split only then: a long line is not rescanned for each chunk
                        *lines, rest = pending.split(b"\n")
                        pending = bytearray(rest)
                        for line in lines:
                            if line.strip():
                                yield bytes(line.rstrip(b"\r"))
                    if len(pending) > self.max_response_bytes:
                        raise self._too_large(call, status, size, start)
                if pending.strip():
                    yield bytes(pending.rstrip(b"\r"))
        except transport_errors(self._http_errors) as exc:
            raise self._failed(call, exc, self._http_errors, start) from None
        self._record(RequestRecord(call.method, call.path, call.query, status, time.perf_counter() - start, size))

    async def handle(self, need: Need) -> Any:
        """Answer one need of an operation: a `Call` (sent), a `Gather` (sent concurrently, `limit` at a time)."""
        if isinstance(need, Call):
            return await self.send(need)
        if isinstance(need, Gather):
            gate = asyncio.Semaphore(max(1, need.limit))

            async def one(call: Call) -> Any:
                async with gate:
                    try:
                        return await self.send(call)
                    except ClusterError as exc:
                        return exc

            return list(await asyncio.gather(*(one(call) for call in need.calls)))
        raise TypeError(f"AsyncApiClient cannot answer {type(need).__name__}")

    async def run(self, op: Op[T]) -> T:
        """Drive an operation of the core to its result."""
        return await adrive(op, self.handle)

    async def request(
        self,
        method: str,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        accept: str = JSON,
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> Any:
        return await self.send(
            Call(method, path, op=op, params=params, accept=accept, body=body, content_type=content_type)
        )

    async def get(
        self, path: str, *, op: Operation | None = None, params: Mapping[str, str] | None = None, accept: str = JSON
    ) -> Any:
        return await self.send(Call("GET", path, op=op, params=params, accept=accept))

    async def list(
        self,
        path: str,
        *,
        op: Operation | None = None,
        params: Mapping[str, str] | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        accept: str = JSON,
    ) -> ListResult:
        """Every item of a paged LIST (one request per page)."""
        return await self.run(list_op(path, op=op, params=params, chunk_size=chunk_size, accept=accept))

    async def merge_patch(
        self,
        path: str,
        patch: Mapping[str, Any],
        *,
        op: Operation | None = None,
        dry_run: bool = False,
        field_manager: str = "wmap",
    ) -> dict[str, Any]:
        return await self.run(merge_patch_op(path, patch, op=op, dry_run=dry_run, field_manager=field_manager))


class AsyncDiscovery(DiscoveryCache):
    """`Discovery`, awaitable (the same disk cache). Concurrent callers share one read."""

    def __init__(self, client: AsyncApiClient, cache_dir: Path | None = None, ttl: float = DEFAULT_TTL) -> None:
        super().__init__(client.server, cache_dir, ttl)
        self.client = client
        self._lock = asyncio.Lock()

    async def document(self) -> DiscoveryDocument:
        current = self.current()
        if current is not None:
            return current
        async with self._lock:
            return self.current() or self.store(await self.client.run(fetch_op()))

    async def refresh(self) -> DiscoveryDocument | None:
        async with self._lock:
            if not self.needs_refresh():
                return None
            return self.store(await self.client.run(fetch_op()))


class AsyncOwnerLoader:
    """`OwnerLoader`, awaitable: one metadata LIST per (group, kind, scope), shared by concurrent callers."""

    def __init__(
        self,
        client: AsyncApiClient,
        discovery: Callable[[], Awaitable[DiscoveryDocument]],
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        all_namespaces: bool = False,
    ) -> None:
        self.client = client
        self.discovery = discovery
        self.chunk_size = chunk_size
        self.all_namespaces = all_namespaces
        self._lists: dict[tuple[str, str, str], OwnerListing] = {}
        self._locks: dict[tuple[str, str, str], asyncio.Lock] = {}

    async def listing(self, group: str, kind: str, namespace: str) -> OwnerListing:
        found = listing_key(await self.discovery(), group, kind, namespace, self.all_namespaces)
        if found is None:
            return OwnerListing(kind, served=False)
        key, resource = found
        async with self._locks.setdefault(key, asyncio.Lock()):
            cached = self._lists.get(key)
            if cached is None:
                cached = self._lists[key] = await self.client.run(listing_op(kind, resource, key[2], self.chunk_size))
            return cached

    async def resolve(self, namespace: str, reference: Mapping[str, Any]) -> tuple[dict[str, Any] | None, OwnerListing]:
        listing = await self.listing(*reference_kind(reference), namespace)
        return listing.by_uid.get(str(reference.get("uid") or "")), listing

    async def answer(self, need: Owners) -> list[tuple[dict[str, Any] | None, OwnerListing]]:
        return list(await asyncio.gather(*(self.resolve(namespace, ref) for namespace, ref in need.pairs)))

    async def run(self, op: Op[T]) -> T:
        async def handle(need: Need) -> Any:
            if isinstance(need, Owners):
                return await self.answer(need)
            return await self.client.handle(need)

        return await adrive(op, handle)

    @property
    def listings(self) -> list[OwnerListing]:
        return list(self._lists.values())


async def walk_pod_owners(
    loader: AsyncOwnerLoader, root_uid: str, pods: Iterable[Mapping[str, Any]], *, max_hops: int = MAX_HOPS
) -> tuple[OwnerIndex, list[str]]:
    """`owners.walk_pod_owners`, awaitable (each level's owner kinds listed concurrently)."""
    return await loader.run(walk_op(root_uid, pods, max_hops=max_hops))


async def top_level(
    objects: Iterable[tuple[str, dict[str, Any]]],
    covered: set[tuple[str, str]],
    loader: AsyncOwnerLoader,
    *,
    max_hops: int = MAX_HOPS,
) -> TopLevelResult:
    """`owners.top_level`, awaitable."""
    return await loader.run(top_level_op(objects, covered, max_hops=max_hops))


async def load_cluster_definitions(client: AsyncApiClient, *, chunk_size: int = 500) -> ClusterDefinitions:
    """`definitions.load_cluster_definitions`, awaitable (never raises a `ClusterError`)."""
    return await client.run(definitions_op(chunk_size=chunk_size))


class AsyncCluster:
    """`Cluster`, awaitable: the same methods, requests and errors, as coroutines. `async with AsyncCluster(...)`.

    Loading the kubeconfig reads local files (and may run nothing else): it happens in the constructor, as in the
    sync `Cluster`; an exec credential plugin runs in a thread when a request first needs its token."""

    def __init__(
        self,
        settings: ConnectionSettings | KubeContext | None = None,
        *,
        cache_dir: Path | _DefaultCache | None = DEFAULT_CACHE,
        log: Callable[[str], None] | None = None,
        user_agent: str = USER_AGENT,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        transport: Any = None,
    ) -> None:
        if isinstance(settings, KubeContext):
            self.context = settings
        else:
            self.context = load_context(settings or ConnectionSettings())
        self.log = log
        self.chunk_size = chunk_size
        self.client = AsyncApiClient(self.context, log=log, user_agent=user_agent, transport=transport)
        directory = default_cache_dir() if isinstance(cache_dir, _DefaultCache) else cache_dir
        self.discovery = AsyncDiscovery(self.client, directory)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def __aenter__(self) -> AsyncCluster:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def namespace(self) -> str:
        return self.context.namespace

    @property
    def requests(self) -> int:
        return len(self.client.requests)

    async def definitions(self) -> ClusterDefinitions:
        return await load_cluster_definitions(self.client, chunk_size=self.chunk_size)

    async def discovery_document(self) -> DiscoveryDocument:
        return await self.discovery.document()

    async def resolve_type(self, token: str, registry: DefinitionRegistry) -> ResolvedType:
        return await self.run(resolve_type_op(token, registry))

    def served(self, rtype: ResolvedType) -> APIResource:
        return served(rtype)

    async def list_objects(
        self,
        rtype: ResolvedType,
        *,
        namespace: str | None,
        selector: str | None = None,
        chunk_size: int | None = None,
    ) -> ListResult:
        size = self.chunk_size if chunk_size is None else chunk_size
        return await self.run(list_objects_op(rtype, namespace=namespace, selector=selector, chunk_size=size))

    async def get_object(self, rtype: ResolvedType, name: str, *, namespace: str | None) -> dict[str, Any]:
        return await self.run(get_object_op(rtype, name, namespace=namespace))

    async def list_pods(self, namespace: str | None, *, chunk_size: int | None = None) -> list[dict[str, Any]]:
        size = self.chunk_size if chunk_size is None else chunk_size
        return await self.run(list_pods_op(namespace, chunk_size=size))

    def owner_loader(self, *, all_namespaces: bool = False) -> AsyncOwnerLoader:
        return AsyncOwnerLoader(
            self.client, self.discovery.document, chunk_size=self.chunk_size, all_namespaces=all_namespaces
        )

    async def fetch_workload(
        self, rtype: ResolvedType, name: str, *, namespace: str | None, obj: Mapping[str, Any] | None = None
    ) -> LiveWorkload:
        return await self.run(fetch_workload_op(rtype, name, namespace=namespace, obj=obj, chunk_size=self.chunk_size))

    async def merge_patch(
        self,
        rtype: ResolvedType,
        name: str,
        patch: Mapping[str, Any],
        *,
        namespace: str | None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        return await self.run(merge_patch_object_op(rtype, name, patch, namespace=namespace, dry_run=dry_run))

    async def run(self, op: Op[T]) -> T:
        """Drive an operation of the core (see `Cluster.run`)."""
        loader: AsyncOwnerLoader | None = None

        async def handle(need: Need) -> Any:
            nonlocal loader
            if isinstance(need, Discover):
                return await (self.discovery.refresh() if need.refresh else self.discovery.document())
            if isinstance(need, Owners):
                loader = loader or self.owner_loader()
                return await loader.answer(need)
            return await self.client.handle(need)

        return await adrive(op, handle)
