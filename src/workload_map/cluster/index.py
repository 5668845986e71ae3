"""Workloads and their pods, linked by owner chain, kept current one change at a time (sans I/O).

The informers of a live view (one per workload type, one for pods, a metadata-only one per intermediate owner kind:
ReplicaSets, Jobs, StatefulSets) feed `WorkloadIndex` their changes; it answers which pods belong to which workload
and which workloads a change touches, without ever re-walking every pod:

* a pod's chain is followed through the owners the index holds (controller references; any owner reference naming
  a tracked workload ends it), and the pod is filed under the workload it reaches;
* a chain that stops at an owner not (yet) known waits on that owner's UID: when the owner arrives (its informer
  lists after the pod's), only the pods waiting on it are walked again; `unknown_owner_kinds()` says which owner
  kinds a caller should start informers for;
* an owner changed or deleted re-walks only the pods whose chains pass through it.

Each method returns the UIDs of the workloads whose set of pods (or whose own object) changed.

`ResolutionCache` keeps one computed value (a `Resolution`, a view) per workload, recomputed only when the
workload's resourceVersion, or the set of its pods and their resourceVersions, changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from workload_map.cluster.informer import object_key, resource_version_of
from workload_map.cluster.owners import MAX_HOPS, controller_of, owner_references, uid_of

if TYPE_CHECKING:
    from workload_map.pods import OwnerIndex

T = TypeVar("T")


class WorkloadIndex:
    """Workloads (by UID), intermediate owners (by UID) and pods (by `namespace/name`); see the module docstring."""

    def __init__(self, *, max_hops: int = MAX_HOPS) -> None:
        self.max_hops = max_hops
        self.workloads: dict[str, dict[str, Any]] = {}
        self.owners: dict[str, dict[str, Any]] = {}
        self.pods: dict[str, dict[str, Any]] = {}
        self._root_of: dict[str, str] = {}
        self._pods_of: dict[str, set[str]] = {}
        self._through: dict[str, set[str]] = {}  # owner UID -> pods whose chain passes through it
        self._chain_of: dict[str, tuple[str, ...]] = {}  # pod -> the owner UIDs its chain passed
        self._waiting: dict[str, set[str]] = {}  # unknown owner UID -> pods whose chain stops there
        self._waits_on: dict[str, str] = {}
        self._missing_kinds: dict[str, tuple[str, str]] = {}  # unknown owner UID -> (apiVersion, kind)

    # --- what changed -------------------------------------------------------------------------------------------

    def set_workload(self, obj: dict[str, Any]) -> set[str]:
        uid = uid_of(obj)
        if not uid:
            return set()
        self.workloads[uid] = obj
        self._missing_kinds.pop(uid, None)
        return {uid} | self._rewalk(self._waiting.pop(uid, set()))

    def remove_workload(self, obj: Mapping[str, Any]) -> set[str]:
        uid = uid_of(obj)
        if self.workloads.pop(uid, None) is None:
            return set()
        return {uid} | self._rewalk(set(self._pods_of.get(uid, ())))

    def set_owner(self, obj: dict[str, Any]) -> set[str]:
        uid = uid_of(obj)
        if not uid:
            return set()
        self.owners[uid] = obj
        self._missing_kinds.pop(uid, None)
        return self._rewalk(self._waiting.pop(uid, set()) | self._through.get(uid, set()))

    def remove_owner(self, obj: Mapping[str, Any]) -> set[str]:
        uid = uid_of(obj)
        if self.owners.pop(uid, None) is None:
            return set()
        return self._rewalk(set(self._through.get(uid, ())))

    def set_pod(self, obj: dict[str, Any]) -> set[str]:
        key = object_key(obj)
        self.pods[key] = obj
        before = self._root_of.get(key)
        after = self._walk(key)
        return {root for root in (before, after) if root}

    def remove_pod(self, obj: Mapping[str, Any]) -> set[str]:
        key = object_key(obj)
        if self.pods.pop(key, None) is None:
            return set()
        before = self._forget(key)
        return {before} if before else set()

    # --- what it holds ------------------------------------------------------------------------------------------

    def root_of(self, pod_key: str) -> str | None:
        return self._root_of.get(pod_key)

    def pods_of(self, uid: str) -> list[dict[str, Any]]:
        """The pods whose owner chain reaches the workload, in key order."""
        return [self.pods[key] for key in sorted(self._pods_of.get(uid, ()))]

    def owner_index(self, uid: str) -> OwnerIndex:
        """The owners on the chains of the workload's pods, as `workload_map.pods` takes them."""
        from workload_map.pods import OwnerIndex

        index = OwnerIndex()
        seen: set[str] = set()
        for key in self._pods_of.get(uid, ()):
            for owner_uid in self._chain_of.get(key, ()):
                owner = self.owners.get(owner_uid)
                if owner is not None and owner_uid not in seen:
                    seen.add(owner_uid)
                    index.add_one(owner, kind=str(owner.get("kind") or ""))
        return index

    def unknown_owner_kinds(self) -> set[tuple[str, str]]:
        """(apiVersion, kind) of the owners some pod's chain stops at: kinds to start an informer for."""
        return set(self._missing_kinds.values())

    # --- walking ------------------------------------------------------------------------------------------------

    def _rewalk(self, keys: set[str]) -> set[str]:
        touched: set[str] = set()
        for key in keys:
            before = self._root_of.get(key)
            after = self._walk(key) if key in self.pods else self._forget(key)
            touched.update(root for root in (before, after) if root)
        return touched

    def _forget(self, key: str) -> str | None:
        root = self._root_of.pop(key, None)
        if root is not None:
            members = self._pods_of.get(root)
            if members is not None:
                members.discard(key)
                if not members:
                    del self._pods_of[root]
        for owner_uid in self._chain_of.pop(key, ()):
            passing = self._through.get(owner_uid)
            if passing is not None:
                passing.discard(key)
                if not passing:
                    del self._through[owner_uid]
        waited = self._waits_on.pop(key, None)
        if waited is not None:
            waiting = self._waiting.get(waited)
            if waiting is not None:
                waiting.discard(key)
                if not waiting:
                    del self._waiting[waited]
                    self._missing_kinds.pop(waited, None)
        return root

    def _walk(self, key: str) -> str | None:
        self._forget(key)
        obj: Mapping[str, Any] = self.pods[key]
        chain: list[str] = []
        root: str | None = None
        for _ in range(self.max_hops + 1):
            refs = owner_references(obj)
            named = next((str(ref.get("uid")) for ref in refs if str(ref.get("uid") or "") in self.workloads), None)
            if named is not None:
                root = named
                break
            ref = controller_of(obj)
            uid = str(ref.get("uid") or "") if ref is not None else ""
            if ref is None or not uid or uid in chain:
                break
            owner = self.owners.get(uid)
            if owner is None:
                self._waiting.setdefault(uid, set()).add(key)
                self._waits_on[key] = uid
                self._missing_kinds[uid] = (str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
                break
            chain.append(uid)
            obj = owner
        self._chain_of[key] = tuple(chain)
        for owner_uid in chain:
            self._through.setdefault(owner_uid, set()).add(key)
        if root is not None:
            self._root_of[key] = root
            self._pods_of.setdefault(root, set()).add(key)
        return root


@dataclass(frozen=True)
class _Entry(Generic[T]):
    signature: tuple[str, frozenset[tuple[str, str]]]
    value: T


class ResolutionCache(Generic[T]):
    """One value per workload UID (see the module docstring): `compute(workload, pods, owners)` runs again only when
    the workload's resourceVersion or one of its pods' (or which pods it has) changed. `computed` counts the runs."""

    def __init__(self, compute: Callable[[dict[str, Any], list[dict[str, Any]], OwnerIndex], T]) -> None:
        self.compute = compute
        self.computed = 0
        self._entries: dict[str, _Entry[T]] = {}

    def get(self, index: WorkloadIndex, uid: str) -> T | None:
        """The workload's value, recomputed if it changed; None when the index does not hold the workload."""
        workload = index.workloads.get(uid)
        if workload is None:
            self._entries.pop(uid, None)
            return None
        pods = index.pods_of(uid)
        signature = (
            resource_version_of(workload),
            frozenset((object_key(pod), resource_version_of(pod)) for pod in pods),
        )
        entry = self._entries.get(uid)
        if entry is not None and entry.signature == signature:
            return entry.value
        value = self.compute(workload, pods, index.owner_index(uid))
        self.computed += 1
        self._entries[uid] = _Entry(signature, value)
        return value

    def forget(self, uid: str) -> None:
        self._entries.pop(uid, None)
