"""The informer of one resource kind, sans I/O: LIST, then WATCH, kept consistent across every way a watch ends.

`InformerCore` is a state machine: the shell (`workload_map.cluster.informer_aio.AsyncInformer`) asks it what to do
(`start()`), does it, and reports what happened (`page`, `event`, `ended`, `failed`, `woke`); every answer is the next
`Action`. What changed in the local `Store` is collected as `Change`s (and `Synced` / `WatchWarning` notices) the shell
takes with `drain()`. The rules, after client-go's reflector:

* a paged LIST (`limit` + `continue`, `chunk_size` 0: one request) fills the store, then a WATCH starts from the
  list's resourceVersion with `allowWatchBookmarks=true`; a BOOKMARK only moves the resourceVersion on;
* a watch the server closes (its `timeoutSeconds`, jittered so many informers do not reconnect together) is opened
  again from the last resourceVersion seen;
* 410 Gone, as the HTTP status of the watch request or as an ERROR event with code 410 (the resourceVersion is older
  than the server keeps: compaction, a restarted server), starts a new LIST; the new list replaces the store and
  the differences are reported (ADDED, MODIFIED, DELETED), so a consumer never sees a change twice or misses one;
  a 410 on a list page (its `continue` token expired) restarts the list from the first page;
* any other failure after the first list (the server unreachable or restarting, a 5xx, a broken stream) waits an
  exponential backoff with jitter, then resumes where it was (a watch from its resourceVersion, a list from page 1);
  a failure of the first list is `Fail`: the caller learns at once that it cannot read the kind;
* a watch refused with 403 while the list is allowed (RBAC with `list` but not `watch`) falls back to polling: a
  `WatchWarning` once, then a LIST every `poll_interval` seconds, reported as the same changes;
* `metadata_only` reads `PartialObjectMetadata` (a LIST of `PartialObjectMetadataList`): what owner chains need,
  at a fraction of the bytes of whole objects. Items get the resource's `kind` and `apiVersion`;
* the store keeps each object without `metadata.managedFields` (as client-go's informers are usually set up to):
  nothing reads them, and they are about half the memory of a small object such as a Deployment; its short
  strings are shared with the other objects' (one `apps/v1`, one copy of the namespace: `cluster.sharing`).

Store keys are `namespace/name` (`name` for a cluster-scoped kind).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workload_map.cluster.core import DEFAULT_CHUNK_SIZE, JSON, METADATA_LIST, Call, Operation
from workload_map.cluster.errors import ApiError, ClusterError, Forbidden
from workload_map.cluster.sharing import share_strings

if TYPE_CHECKING:
    from workload_map.cluster.discovery import APIResource

METADATA_WATCH = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
DEFAULT_WATCH_TIMEOUT = 300.0
DEFAULT_POLL_INTERVAL = 10.0
STREAM_READ_MARGIN = 30.0

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]


def object_key(obj: Mapping[str, Any]) -> str:
    """`namespace/name`, or `name` for a cluster-scoped object."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return ""
    name = str(metadata.get("name") or "")
    namespace = str(metadata.get("namespace") or "")
    return f"{namespace}/{name}" if namespace else name


def resource_version_of(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("resourceVersion") or "") if isinstance(metadata, Mapping) else ""


# --- what is watched ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WatchedResource:
    """One collection to keep: its path (a namespace's or the cluster's), its kind, selectors, and whether only
    metadata is needed."""

    path: str
    kind: str
    api_version: str
    resource: str
    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False

    @classmethod
    def of(
        cls,
        resource: APIResource,
        namespace: str | None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
    ) -> WatchedResource:
        """The collection of a discovered resource in `namespace` (None: the cluster's)."""
        return cls(
            path=resource.collection_path(namespace),
            kind=resource.kind,
            api_version=resource.api_version,
            resource=resource.qualified,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            metadata_only=metadata_only,
        )

    @classmethod
    def pods(cls, namespace: str | None) -> WatchedResource:
        """The pods of `namespace`, or of every namespace."""
        path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
        return cls(path=path, kind="Pod", api_version="v1", resource="pods", namespace=namespace)

    @property
    def operation(self) -> Operation:
        return Operation("list", self.resource, self.namespace)

    @property
    def watch_operation(self) -> Operation:
        return Operation("watch", self.resource, self.namespace)

    def selectors(self) -> dict[str, str]:
        params: dict[str, str] = {}
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return params


# --- actions (what the shell does next) and notices (what happened) ----------------------------------------------


@dataclass(frozen=True)
class Send:
    """Send one LIST page; answer with `page(body)` or `failed(error)`."""

    call: Call


@dataclass(frozen=True)
class Watch:
    """Open a watch stream; each event goes to `event(...)`, its end to `ended()`, a failure to `failed(error)`.
    `read_timeout`: how long the stream may stay silent (the server closes it at `timeoutSeconds` before that)."""

    call: Call
    read_timeout: float


@dataclass(frozen=True)
class Wait:
    """Sleep `seconds` (a backoff or a poll interval), then call `woke()`."""

    seconds: float
    why: str


@dataclass(frozen=True)
class Fail:
    """Stop: the kind cannot be read at all (the first LIST failed)."""

    error: ClusterError


Action = Send | Watch | Wait | Fail


@dataclass(frozen=True)
class Change:
    """One object added, modified or deleted (`old`: the previous state, for MODIFIED and DELETED)."""

    type: ChangeType
    key: str
    object: dict[str, Any]
    old: dict[str, Any] | None = None


@dataclass(frozen=True)
class Synced:
    """The store holds a complete list (after the first LIST, and after each re-LIST)."""

    relist: bool


@dataclass(frozen=True)
class WatchWarning:
    """Something the user should know: a watch fell back to polling, the server is being retried."""

    message: str


Notice = Change | Synced | WatchWarning


# --- the store ----------------------------------------------------------------------------------------------------


class Store:
    """The objects of one kind by `namespace/name` (and by UID), with the resourceVersion they are current at."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {}
        self._by_uid: dict[str, str] = {}
        self.resource_version = ""

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(list(self._objects.values()))

    def get(self, key: str) -> dict[str, Any] | None:
        return self._objects.get(key)

    def by_uid(self, uid: str) -> dict[str, Any] | None:
        key = self._by_uid.get(uid)
        return self._objects.get(key) if key is not None else None

    def keys(self) -> list[str]:
        return list(self._objects)

    def put(self, key: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        old = self._objects.get(key)
        if old is not None:
            self._by_uid.pop(_uid(old), None)
        self._objects[key] = obj
        uid = _uid(obj)
        if uid:
            self._by_uid[uid] = key
        return old

    def remove(self, key: str) -> dict[str, Any] | None:
        old = self._objects.pop(key, None)
        if old is not None:
            self._by_uid.pop(_uid(old), None)
        return old


def _uid(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("uid") or "") if isinstance(metadata, Mapping) else ""


# --- backoff ------------------------------------------------------------------------------------------------------


@dataclass
class Backoff:
    """Exponential backoff with jitter: `initial * factor**n`, capped at `cap`, each delay drawn from its upper
    half (so many clients that failed together do not come back together). `reset()` after a success."""

    initial: float = 0.8
    factor: float = 2.0
    cap: float = 30.0
    rand: Callable[[], float] = random.random
    failures: int = 0

    def next_delay(self) -> float:
        base = min(self.cap, self.initial * self.factor**self.failures)
        self.failures += 1
        return base / 2 + base / 2 * self.rand()

    def reset(self) -> None:
        self.failures = 0


# --- the state machine --------------------------------------------------------------------------------------------

State = Literal["new", "listing", "watching", "waiting", "failed"]


@dataclass
class InformerCore:
    """LIST + WATCH of one `WatchedResource` (see the module docstring). Not thread-safe: one shell drives it."""

    resource: WatchedResource
    chunk_size: int = DEFAULT_CHUNK_SIZE
    watch_timeout: float = DEFAULT_WATCH_TIMEOUT
    poll_interval: float = DEFAULT_POLL_INTERVAL
    backoff: Backoff = field(default_factory=Backoff)
    rand: Callable[[], float] = random.random
    resume_from: str = ""
    """Start with a WATCH from this resourceVersion instead of a LIST (a consumer resuming from a saved state);
    a 410 then falls back to a LIST, as always."""

    store: Store = field(default_factory=Store)
    state: State = "new"
    polling: bool = False
    synced_once: bool = False
    lists: int = 0
    """Completed LISTs (the first, re-LISTs after a 410, polls)."""
    watches: int = 0
    """Watch requests opened."""

    def __post_init__(self) -> None:
        self._notices: list[Notice] = []
        self._pages: list[dict[str, Any]] = []
        self._continue = ""
        self._after_wait: Literal["list", "watch"] = "list"
        self._strings: dict[str, str] = {}  # sharing.share_strings' table

    # --- what the shell reports -----------------------------------------------------------------------------------

    def start(self) -> Action:
        if self.resume_from:
            self.store.resource_version = self.resume_from
            self.synced_once = True  # the caller already has a state to resume
            return self._watch()
        return self._list()

    def page(self, answer: Any) -> Action:
        """One LIST page arrived."""
        if self.state != "listing":
            raise RuntimeError(f"informer for {self.resource.resource}: a list page while {self.state}")
        if not isinstance(answer, dict):
            return self.failed(ApiError(f"GET {self.resource.path}: a list that is not an object", status=200))
        metadata = answer.get("metadata") if isinstance(answer.get("metadata"), dict) else {}
        assert isinstance(metadata, dict)
        items = answer.get("items")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                self._pages.append(self._kept(item))
        token = str(metadata.get("continue") or "")
        if token and self.chunk_size > 0:
            self._continue = token
            return Send(self._list_call())
        self._replace(self._pages, str(metadata.get("resourceVersion") or ""))
        self._pages = []
        self._continue = ""
        self.lists += 1
        self.backoff.reset()
        relist = self.synced_once
        self.synced_once = True
        self._notices.append(Synced(relist=relist))
        if self.polling:
            return self._wait(self.poll_interval, "poll", then="list")
        return self._watch()

    def event(self, event: Any) -> Action | None:
        """One watch event arrived; None: keep reading the stream; an action: close it and do that."""
        if not isinstance(event, Mapping):
            return self.failed(ApiError(f"watch {self.resource.path}: an event that is not an object", status=200))
        kind = event.get("type")
        obj = event.get("object")
        if not isinstance(obj, dict):
            return self.failed(ApiError(f"watch {self.resource.path}: an event without an object", status=200))
        if kind == "ERROR":
            code = obj.get("code")
            message = str(obj.get("message") or obj.get("reason") or "watch error")
            error = ApiError(
                f"watch {self.resource.path}: {message}",
                status=code if isinstance(code, int) else 500,
                reason=str(obj.get("reason") or ""),
            )
            return self.failed(error)
        self.backoff.reset()
        version = resource_version_of(obj)
        if kind == "BOOKMARK":
            if version:
                self.store.resource_version = version
            return None
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return None  # a type this version does not know: skipped, as client-go does
        obj = self._kept(obj)
        key = object_key(obj)
        if kind == "DELETED":
            old = self.store.remove(key)
            if old is not None:
                self._notices.append(Change("DELETED", key, obj, old))
        else:
            old = self.store.put(key, obj)
            if old is None:
                self._notices.append(Change("ADDED", key, obj))
            elif resource_version_of(old) != version:
                self._notices.append(Change("MODIFIED", key, obj, old))
        if version:
            self.store.resource_version = version
        return None

    def ended(self) -> Action:
        """The server closed the watch (its timeout): watch again from the last resourceVersion."""
        return self._watch()

    def failed(self, error: ClusterError) -> Action:
        """A request or the stream failed."""
        status = error.status if isinstance(error, ApiError) else None
        if self.state == "listing":
            if status == 410 and self._continue:
                self._pages, self._continue = [], ""  # the continue token expired: from the first page
                return Send(self._list_call())
            if not self.synced_once:
                self.state = "failed"
                return Fail(error)
            self._pages, self._continue = [], ""
            return self._backoff(error, then="list")
        if self.state == "watching":
            if status == 410:
                return self._list()
            if isinstance(error, Forbidden):
                self.polling = True
                self._notices.append(
                    WatchWarning(
                        f"not allowed to watch {self.resource.watch_operation.target} ({error.message}); "
                        f"polling with a LIST every {self.poll_interval:g}s"
                    )
                )
                if not self.synced_once:
                    return self._list()
                return self._wait(self.poll_interval, "poll", then="list")
            return self._backoff(error, then="watch")
        raise RuntimeError(f"informer for {self.resource.resource}: a failure while {self.state}")

    def woke(self) -> Action:
        """A `Wait` is over."""
        if self.state != "waiting":
            raise RuntimeError(f"informer for {self.resource.resource}: woke while {self.state}")
        return self._list() if self._after_wait == "list" else self._watch()

    def drain(self) -> list[Notice]:
        """The changes and notices since the last call, in order."""
        notices, self._notices = self._notices, []
        return notices

    # --- steps ------------------------------------------------------------------------------------------------

    def _list(self) -> Send:
        self.state = "listing"
        self._pages, self._continue = [], ""
        return Send(self._list_call())

    def _list_call(self) -> Call:
        params = self.resource.selectors()
        if self.chunk_size > 0:
            params["limit"] = str(self.chunk_size)
        if self._continue:
            params["continue"] = self._continue
        accept = METADATA_LIST if self.resource.metadata_only else JSON
        # items decoded one by one without their managedFields: a page's peak is one object with them, not 500
        return Call(
            "GET",
            self.resource.path,
            op=self.resource.operation,
            params=params,
            accept=accept,
            list_page=True,
            lean=True,
        )

    def _watch(self) -> Watch:
        self.state = "watching"
        self.watches += 1
        timeout = int(self.watch_timeout * (1 + self.rand()))
        params = {
            **self.resource.selectors(),
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(max(1, timeout)),
        }
        if self.store.resource_version:
            params["resourceVersion"] = self.store.resource_version
        accept = METADATA_WATCH if self.resource.metadata_only else JSON
        call = Call("GET", self.resource.path, op=self.resource.watch_operation, params=params, accept=accept)
        return Watch(call, read_timeout=max(1, timeout) + STREAM_READ_MARGIN)

    def _backoff(self, error: ClusterError, *, then: Literal["list", "watch"]) -> Wait:
        delay = self.backoff.next_delay()
        if self.backoff.failures == 1:  # once per run of failures, not once per retry
            self._notices.append(
                WatchWarning(f"{self.resource.resource}: {error.message}; retrying (backoff, {delay:.1f}s first)")
            )
        return self._wait(delay, "backoff", then=then)

    def _wait(self, seconds: float, why: str, *, then: Literal["list", "watch"]) -> Wait:
        self.state = "waiting"
        self._after_wait = then
        return Wait(seconds, why)

    def _kept(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as the store keeps it: with its kind and apiVersion, without `metadata.managedFields` (half
        of a small object's memory, read by nothing here; a PUT of the object without them keeps the server's),
        its short strings shared with the other objects' (`sharing.share_strings`)."""
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            metadata.pop("managedFields", None)
        share_strings(obj, self._strings)
        if self.resource.metadata_only or not obj.get("kind"):
            obj["kind"] = self.resource.kind
        if self.resource.metadata_only or not obj.get("apiVersion"):
            obj["apiVersion"] = self.resource.api_version
        return obj

    def _replace(self, items: list[dict[str, Any]], version: str) -> None:
        """A complete list replaces the store: what differs is reported."""
        seen: set[str] = set()
        for obj in items:
            key = object_key(obj)
            seen.add(key)
            old = self.store.put(key, obj)
            if old is None:
                self._notices.append(Change("ADDED", key, obj))
            elif resource_version_of(old) != resource_version_of(obj):
                self._notices.append(Change("MODIFIED", key, obj, old))
        for key in sorted(set(self.store.keys()) - seen):
            old = self.store.remove(key)
            if old is not None:
                self._notices.append(Change("DELETED", key, old, old))
        self.store.resource_version = version
