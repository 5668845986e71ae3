"""Owner objects read from the cluster: one metadata-only LIST per (owner kind, namespace), shared by every pod.

`OwnerLoader` answers "which object is this ownerReference?" from those lists (never a GET per object), keeping
each list (or the error that prevented it) for the rest of the run. On top of it:

* `walk_pod_owners(loader, root_uid, pods)`: the intermediate owners (ReplicaSets, Jobs, StatefulSets) that
  connect a workload's pods to it, level by level: one LIST per owner kind the pods' controller chains pass
  through, nothing for a pod that references the workload directly. The result is an `OwnerIndex` for
  `workload_map.pods` / `workload_map.view`.
* `top_level(objects, covered, loader)`: `get --all-types`' rule (kli-cli §3.3): an object is a row unless its
  controller chain reaches an object of a covered type. A covered controller is recognised from the reference and
  the objects listed (one not among them is gone: what it owned is a row); only uncovered owners (a
  ReplicationController) are read to climb further.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from workload_map.cluster.core import Op, drive
from workload_map.cluster.errors import ApiError, ClusterError, NotFound

if TYPE_CHECKING:
    from workload_map.cluster.client import ApiClient
    from workload_map.cluster.discovery import APIResource, DiscoveryDocument
    from workload_map.pods import OwnerIndex

MAX_HOPS = 6
T = TypeVar("T")


def group_of(api_version: str) -> str:
    """`apps/v1` -> `apps`; `v1` -> `` (the core group)."""
    return api_version.rpartition("/")[0]


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def owner_references(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    refs = _metadata(obj).get("ownerReferences")
    return [ref for ref in refs if isinstance(ref, Mapping)] if isinstance(refs, list) else []


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in owner_references(obj):
        if ref.get("controller") is True:
            return ref
    return None


def uid_of(obj: Mapping[str, Any]) -> str:
    uid = _metadata(obj).get("uid")
    return uid if isinstance(uid, str) else ""


def namespace_of(obj: Mapping[str, Any]) -> str:
    namespace = _metadata(obj).get("namespace")
    return namespace if isinstance(namespace, str) else ""


def name_of(obj: Mapping[str, Any]) -> str:
    name = _metadata(obj).get("name")
    return name if isinstance(name, str) else ""


class OwnerListing(msgspec.Struct):
    """One metadata LIST: the items by UID, or why there are none (`error`; `served` False: no such type)."""

    kind: str
    items: list[dict[str, Any]] = msgspec.field(default_factory=list)
    by_uid: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    error: ClusterError | None = None
    served: bool = True


class Owners(msgspec.Struct, frozen=True):
    """The need of an owner walk: the objects these (namespace, ownerReference) pairs name, answered with a list of
    (object or None, its `OwnerListing`) in order, by an owner loader (sync or async)."""

    pairs: tuple[tuple[str, Mapping[str, Any]], ...]


def listing_key(
    document: DiscoveryDocument, group: str, kind: str, namespace: str, all_namespaces: bool
) -> tuple[tuple[str, str, str], APIResource] | None:
    """The cache key (group, kind, scope) of the owner list that holds `kind` objects for `namespace`, and the
    resource to list; None when the kind is not served."""
    resource = document.preferred(group, kind)
    if resource is None:
        return None
    scope = "" if (all_namespaces or not resource.namespaced) else namespace
    return (group, kind, scope), resource


def listing_op(kind: str, resource: APIResource, scope: str, chunk_size: int) -> Op[OwnerListing]:
    """One metadata LIST of owners, or why there is none (sans-I/O)."""
    from workload_map.cluster.core import METADATA_LIST, Operation, list_op

    op = Operation("list", resource.qualified, scope or None)
    try:
        listed = yield from list_op(
            resource.collection_path(scope or None), op=op, chunk_size=chunk_size, accept=METADATA_LIST
        )
    except NotFound:
        return OwnerListing(kind, served=False)
    except ApiError as exc:  # forbidden, or another answer; an unreachable server fails the command
        return OwnerListing(kind, error=exc)
    listing = OwnerListing(kind, items=listed.items)
    for item in listed.items:
        uid = uid_of(item)
        if uid:
            listing.by_uid[uid] = item
    return listing


def reference_kind(reference: Mapping[str, Any]) -> tuple[str, str]:
    return group_of(str(reference.get("apiVersion") or "")), str(reference.get("kind") or "")


class OwnerLoader:
    """Metadata LISTs of owner kinds, one per (group, kind, namespace) (cluster-wide with `namespace` None, and
    always for a cluster-scoped kind), cached for the run. Thread-safe."""

    def __init__(
        self,
        client: ApiClient,
        discovery: Callable[[], DiscoveryDocument],
        *,
        chunk_size: int = 500,
        all_namespaces: bool = False,
    ) -> None:
        self.client = client
        self.discovery = discovery
        self.chunk_size = chunk_size
        self.all_namespaces = all_namespaces
        self._lists: dict[tuple[str, str, str], OwnerListing] = {}
        self._locks: dict[tuple[str, str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def listing(self, group: str, kind: str, namespace: str) -> OwnerListing:
        """The metadata list of `kind` objects that can own something in `namespace`."""
        found = listing_key(self.discovery(), group, kind, namespace, self.all_namespaces)
        if found is None:
            return OwnerListing(kind, served=False)
        key, resource = found
        with self._guard:
            cached = self._lists.get(key)
            if cached is not None:
                return cached
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            cached = self._lists.get(key)
            if cached is not None:
                return cached
            listing = self.client.run(listing_op(kind, resource, key[2], self.chunk_size))
            with self._guard:
                self._lists[key] = listing
            return listing

    def resolve(self, namespace: str, reference: Mapping[str, Any]) -> tuple[dict[str, Any] | None, OwnerListing]:
        """The object an ownerReference names (matched by UID, so a recreated same-name object is not it)."""
        listing = self.listing(*reference_kind(reference), namespace)
        return listing.by_uid.get(str(reference.get("uid") or "")), listing

    def run(self, op: Op[T]) -> T:
        """Drive an owner walk (`walk_op`, `top_level_op`), answering its `Owners` needs from the lists."""
        return drive(op, lambda need: [self.resolve(namespace, ref) for namespace, ref in need.pairs])

    @property
    def listings(self) -> list[OwnerListing]:
        with self._guard:
            return list(self._lists.values())


def _forbidden_warning(listing: OwnerListing, what: str) -> str:
    error = listing.error
    reason = error.message if error is not None else "unknown error"
    return f"cannot read {listing.kind} objects ({reason}); {what}"


def walk_pod_owners(
    loader: OwnerLoader, root_uid: str, pods: Iterable[Mapping[str, Any]], *, max_hops: int = MAX_HOPS
) -> tuple[OwnerIndex, list[str]]:
    """The owners that connect `pods` to the workload `root_uid` (see the module docstring), and warnings for owner
    kinds that could not be read (their pods cannot be attributed)."""
    return loader.run(walk_op(root_uid, pods, max_hops=max_hops))


def walk_op(
    root_uid: str, pods: Iterable[Mapping[str, Any]], *, max_hops: int = MAX_HOPS
) -> Op[tuple[OwnerIndex, list[str]]]:
    """`walk_pod_owners` sans I/O: each level's owners are one `Owners` need (an async loader reads them
    concurrently)."""
    from workload_map.pods import OwnerIndex

    index = OwnerIndex()
    warnings: list[str] = []
    known: set[str] = {root_uid}
    frontier: list[Mapping[str, Any]] = []
    for pod in pods:
        uid = uid_of(pod)
        if uid:
            known.add(uid)
        frontier.append(pod)
    for _ in range(max_hops):
        wanted: dict[str, Mapping[str, Any]] = {}
        namespaces: dict[str, str] = {}
        for obj in frontier:
            refs = owner_references(obj)
            if any(ref.get("uid") == root_uid for ref in refs):
                continue
            ref = controller_of(obj)
            if ref is None:
                continue
            uid = str(ref.get("uid") or "")
            if not uid or uid in known:
                continue
            wanted[uid] = ref
            namespaces[uid] = namespace_of(obj)
        if not wanted:
            break
        frontier = []
        answers = yield Owners(tuple((namespaces[uid], ref) for uid, ref in wanted.items()))
        for (uid, ref), (owner, listing) in zip(wanted.items(), answers, strict=True):
            if listing.error is not None:
                message = _forbidden_warning(listing, "pods owned through them are not attributed to the workload")
                if message not in warnings:
                    warnings.append(message)
            known.add(uid)
            if owner is None:
                continue
            index.add_one(owner, kind=str(ref.get("kind") or ""))
            frontier.append(owner)
    return index, warnings


class TopLevelResult(msgspec.Struct, frozen=True):
    kept: list[dict[str, Any]]
    hidden: int
    warnings: list[str]


def top_level(
    objects: Iterable[tuple[str, dict[str, Any]]],
    covered: set[tuple[str, str]],
    loader: OwnerLoader,
    *,
    max_hops: int = MAX_HOPS,
) -> TopLevelResult:
    """Keep the objects whose controller chain reaches no covered (group, kind). `objects` are (Kind, object)."""
    return loader.run(top_level_op(objects, covered, max_hops=max_hops))


def top_level_op(
    objects: Iterable[tuple[str, dict[str, Any]]], covered: set[tuple[str, str]], *, max_hops: int = MAX_HOPS
) -> Op[TopLevelResult]:
    """`top_level` sans I/O (one `Owners` need per link climbed)."""
    kept: list[dict[str, Any]] = []
    warnings: list[str] = []
    hidden = 0
    listed = list(objects)
    # The covered objects listed here, by (group, kind): an owner of such a kind that is not among them is gone
    # (a Pod whose ReplicaSet was deleted), so what it owned is a top-level workload now, not hidden.
    listed_uids: dict[tuple[str, str], set[str]] = {}
    for _, obj in listed:
        listed_uids.setdefault(reference_kind(obj), set()).add(uid_of(obj))
    for kind, obj in listed:
        reference = controller_of(obj)
        namespace = namespace_of(obj)
        verdict = "top"
        for _ in range(max_hops):
            if reference is None:
                break
            group_kind = reference_kind(reference)
            if group_kind in covered:
                uids = listed_uids.get(group_kind)
                if uids is None or reference.get("uid") in uids:
                    verdict = "hidden"
                break
            ((owner, listing),) = yield Owners(((namespace, reference),))
            if listing.error is not None:
                warnings.append(
                    f"listing {kind}/{name_of(obj)}, though it may belong to another workload: {listing.error.message}"
                )
                break
            if owner is None:
                break
            reference = controller_of(owner)
            namespace = namespace_of(owner) or namespace
        else:
            if reference is not None:
                warnings.append(f"listing {kind}/{name_of(obj)}: its owner chain is longer than {max_hops} links")
        if verdict == "hidden":
            hidden += 1
        else:
            kept.append(obj)
    return TopLevelResult(kept, hidden, warnings)
