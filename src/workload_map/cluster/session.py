"""`Cluster`: one connection (kubeconfig context, HTTP client, discovery) and the reads and writes the commands need.

    from workload_map.cluster import Cluster, ConnectionSettings

    with Cluster(ConnectionSettings(context="prod", namespace="ml")) as cluster:
        registry = ...                                    # a DefinitionRegistry (+ cluster.definitions())
        rtype = cluster.resolve_type("pytorchjob", registry)
        jobs = cluster.list_objects(rtype, namespace="ml").items
        live = cluster.fetch_workload(rtype, "llama", namespace="ml")
        resolution = live.workload().resolve()
        view = build_view(resolution, attribute(resolution, live.pods, live.owners), origin=live.origin)

Request budget: `list_objects` is one LIST per page; `fetch_workload` is one GET, one pod LIST (per page) in the
workload's namespace, and one metadata LIST per owner kind the pods' controller chains pass through. Nothing is
read per pod or per object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from workload_map.cluster.client import DEFAULT_CHUNK_SIZE, USER_AGENT, ApiClient, ListResult, Operation
from workload_map.cluster.core import Call, Op, drive, list_op, merge_patch_op
from workload_map.cluster.definitions import ClusterDefinitions, load_cluster_definitions
from workload_map.cluster.discovery import Discovery, DiscoveryDocument, default_cache_dir
from workload_map.cluster.errors import ApiError, NotFound, NotServed, TypeNotCovered, WorkloadNotFound
from workload_map.cluster.kubeconfig import ConnectionSettings, KubeContext, load_context
from workload_map.cluster.owners import OwnerLoader, Owners, walk_op
from workload_map.cluster.typetokens import ResolvedType, resolve_type

if TYPE_CHECKING:
    from workload_map.catalog import DefinitionRegistry
    from workload_map.cluster.discovery import APIResource
    from workload_map.jq import EvaluationPolicy
    from workload_map.pods import OwnerIndex
    from workload_map.resolve import Workload

T = TypeVar("T")


def _typed(items: list[dict[str, Any]], api_version: str, kind: str) -> list[dict[str, Any]]:
    """Give each item of a LIST its `apiVersion` and `kind` (the server leaves them out of built-in types' items)."""
    for item in items:
        if not item.get("kind"):
            item["kind"] = kind
        if not item.get("apiVersion"):
            item["apiVersion"] = api_version
    return items


class _DefaultCache:
    """The default of `Cluster(cache_dir=...)`: the default cache dir (None means no disk cache)."""


DEFAULT_CACHE = _DefaultCache()


class LiveWorkload(msgspec.Struct):
    """A workload read from the cluster with what its view needs: the object, the pods of its namespace, and the
    owners that connect them (an `OwnerIndex`). `warnings` are owner kinds that could not be read."""

    object: dict[str, Any]
    type: ResolvedType
    pods: list[dict[str, Any]]
    owners: OwnerIndex
    warnings: list[str] = msgspec.field(default_factory=list)

    @property
    def origin(self) -> str:
        return self.type.definition.origin

    @property
    def uid(self) -> str:
        metadata = self.object.get("metadata") or {}
        return str(metadata.get("uid") or "")

    def workload(self, *, policy: EvaluationPolicy | None = None) -> Workload:
        """The object resolved through its definition, its jq expressions evaluated under `policy` (None: in
        process; a definition read from the cluster deserves a "worker" policy)."""
        from workload_map.resolve import Workload

        return Workload(self.type.definition.karta, self.object, policy=policy)

    def owned_pods(self) -> list[dict[str, Any]]:
        """The pods whose owner chain reaches the workload (what `wmap gang` plans with)."""
        from workload_map.pods import OwnerChains

        chains = OwnerChains(self.owners, pods=self.pods)
        uid = self.uid
        return [pod for pod in self.pods if chains.owned_by(pod, uid)]


class Cluster:
    """A connection to one cluster (see the module docstring). `log` receives one line per request (`--debug`)
    and notes; `cache_dir` holds the discovery cache (None: no disk cache)."""

    def __init__(
        self,
        settings: ConnectionSettings | KubeContext | None = None,
        *,
        cache_dir: Path | _DefaultCache | None = DEFAULT_CACHE,
        log: Callable[[str], None] | None = None,
        user_agent: str = USER_AGENT,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
    ) -> None:
        if isinstance(settings, KubeContext):
            self.context = settings
        else:
            self.context = load_context(settings or ConnectionSettings())
        self.log = log
        self.chunk_size = chunk_size
        self.client = ApiClient(self.context, log=log, user_agent=user_agent)
        directory = default_cache_dir() if isinstance(cache_dir, _DefaultCache) else cache_dir
        self.discovery = Discovery(self.client, directory)

    # --- lifecycle --------------------------------------------------------------------------------------------

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def namespace(self) -> str:
        """The default namespace: `-n`, else the context's, else `default`."""
        return self.context.namespace

    @property
    def requests(self) -> int:
        """How many requests were sent so far."""
        return len(self.client.requests)

    # --- definitions and types --------------------------------------------------------------------------------

    def definitions(self) -> ClusterDefinitions:
        """The cluster's Karta definitions (one LIST; never raises, see `workload_map.cluster.definitions`)."""
        return load_cluster_definitions(self.client, chunk_size=self.chunk_size)

    def discovery_document(self) -> DiscoveryDocument:
        return self.discovery.document()

    def resolve_type(self, token: str, registry: DefinitionRegistry) -> ResolvedType:
        """Resolve a TYPE token through discovery and the definitions; a cached discovery that does not serve the
        type is re-read once first (a CRD installed since the cache was written)."""
        return self.run(resolve_type_op(token, registry))

    def served(self, rtype: ResolvedType) -> APIResource:
        """The resource to read the type through; `NotServed` when its CRD is not installed."""
        return served(rtype)

    # --- reads ------------------------------------------------------------------------------------------------

    def list_objects(
        self,
        rtype: ResolvedType,
        *,
        namespace: str | None,
        selector: str | None = None,
        chunk_size: int | None = None,
    ) -> ListResult:
        """Every object of the type in `namespace` (None: all namespaces), paged. `NotServed` when not installed."""
        size = self.chunk_size if chunk_size is None else chunk_size
        return self.run(list_objects_op(rtype, namespace=namespace, selector=selector, chunk_size=size))

    def get_object(self, rtype: ResolvedType, name: str, *, namespace: str | None) -> dict[str, Any]:
        """One object by name; `WorkloadNotFound` when it does not exist, `NotServed` when the type is not served."""
        return self.run(get_object_op(rtype, name, namespace=namespace))

    def list_pods(self, namespace: str | None, *, chunk_size: int | None = None) -> list[dict[str, Any]]:
        """Every pod of a namespace (None: of the cluster), paged: one LIST per page."""
        return self.run(list_pods_op(namespace, chunk_size=self.chunk_size if chunk_size is None else chunk_size))

    def owner_loader(self, *, all_namespaces: bool = False) -> OwnerLoader:
        return OwnerLoader(
            self.client, self.discovery.document, chunk_size=self.chunk_size, all_namespaces=all_namespaces
        )

    def fetch_workload(
        self, rtype: ResolvedType, name: str, *, namespace: str | None, obj: Mapping[str, Any] | None = None
    ) -> LiveWorkload:
        """The workload, the pods of its namespace and the owners connecting them (see the module docstring).

        A bare Pod is its own only pod (no pod LIST). `obj` skips the GET when the caller already has the object.
        """
        return self.run(fetch_workload_op(rtype, name, namespace=namespace, obj=obj, chunk_size=self.chunk_size))

    # --- writes -----------------------------------------------------------------------------------------------

    def merge_patch(
        self,
        rtype: ResolvedType,
        name: str,
        patch: Mapping[str, Any],
        *,
        namespace: str | None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """A JSON merge patch of one object (`dry_run`: the server validates it and stores nothing)."""
        return self.run(merge_patch_object_op(rtype, name, patch, namespace=namespace, dry_run=dry_run))

    # --- the shell ----------------------------------------------------------------------------------------------

    def run(self, op: Op[T]) -> T:
        """Drive an operation of the core: calls go to the client, `Discover` to the discovery, `Owners` to an owner
        loader made for this operation."""
        loader: OwnerLoader | None = None

        def handle(need: Any) -> Any:
            nonlocal loader
            if isinstance(need, Discover):
                return self.discovery.refresh() if need.refresh else self.discovery.document()
            if isinstance(need, Owners):
                loader = loader or self.owner_loader()
                return [loader.resolve(namespace, ref) for namespace, ref in need.pairs]
            return self.client.handle(need)

        return drive(op, handle)


# --- the operations both shells run (sans-I/O) ------------------------------------------------------------------


class Discover(msgspec.Struct, frozen=True):
    """The need for the discovery document (`refresh`: re-read it; answered None when it is already fresh)."""

    refresh: bool = False


def served(rtype: ResolvedType) -> APIResource:
    """The resource to read the type through; `NotServed` when its CRD is not installed."""
    if rtype.resource is None:
        raise NotServed(rtype.kind, group=rtype.group)
    return rtype.resource


def resolve_type_op(token: str, registry: DefinitionRegistry) -> Op[ResolvedType]:
    document = yield Discover()
    try:
        resolved = resolve_type(token, document, registry)
    except TypeNotCovered:
        fresh = yield Discover(refresh=True)
        if fresh is None:
            raise
        return resolve_type(token, fresh, registry)
    if resolved.resource is None:
        fresh = yield Discover(refresh=True)
        if fresh is not None:
            return resolve_type(token, fresh, registry)
    return resolved


def list_objects_op(
    rtype: ResolvedType, *, namespace: str | None, selector: str | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> Op[ListResult]:
    resource = served(rtype)
    scope = namespace if resource.namespaced else None
    params = {"labelSelector": selector} if selector else None
    op = Operation("list", resource.qualified, scope)
    try:
        listed = yield from list_op(resource.collection_path(scope), op=op, params=params, chunk_size=chunk_size)
    except NotFound:  # the CRD went away after discovery
        raise NotServed(rtype.kind, group=rtype.group) from None
    _typed(listed.items, resource.api_version, resource.kind)
    return listed


def get_object_op(rtype: ResolvedType, name: str, *, namespace: str | None) -> Op[dict[str, Any]]:
    resource = served(rtype)
    scope = namespace if resource.namespaced else None
    op = Operation("get", resource.qualified, scope, name)
    try:
        obj = yield Call("GET", resource.object_path(name, scope), op=op)
    except NotFound:
        where = f" in namespace {scope}" if scope else ""
        raise WorkloadNotFound(f'{rtype.kind} "{name}" not found{where}') from None
    if not isinstance(obj, dict):
        raise ApiError(f"GET {resource.object_path(name, scope)}: not an object", status=200)
    return obj


def list_pods_op(namespace: str | None, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> Op[list[dict[str, Any]]]:
    path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
    listed = yield from list_op(path, op=Operation("list", "pods", namespace), chunk_size=chunk_size)
    return _typed(listed.items, "v1", "Pod")


def fetch_workload_op(
    rtype: ResolvedType,
    name: str,
    *,
    namespace: str | None,
    obj: Mapping[str, Any] | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Op[LiveWorkload]:
    found = dict(obj) if obj is not None else (yield from get_object_op(rtype, name, namespace=namespace))
    metadata = found.get("metadata") or {}
    root_uid = str(metadata.get("uid") or "")
    if rtype.group == "" and rtype.kind == "Pod":
        pods = [found]
    else:
        pods = yield from list_pods_op(str(metadata.get("namespace") or "") or None, chunk_size=chunk_size)
    owners, warnings = yield from walk_op(root_uid, pods)
    return LiveWorkload(object=found, type=rtype, pods=pods, owners=owners, warnings=warnings)


def merge_patch_object_op(
    rtype: ResolvedType, name: str, patch: Mapping[str, Any], *, namespace: str | None, dry_run: bool = False
) -> Op[dict[str, Any]]:
    resource = served(rtype)
    scope = namespace if resource.namespaced else None
    op = Operation("patch", resource.qualified, scope, name)
    try:
        return (yield from merge_patch_op(resource.object_path(name, scope), patch, op=op, dry_run=dry_run))
    except NotFound:
        where = f" in namespace {scope}" if scope else ""
        raise WorkloadNotFound(f'{rtype.kind} "{name}" not found{where}') from None
