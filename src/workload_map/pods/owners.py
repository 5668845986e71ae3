"""Owner chains: does a pod belong to a workload? (kli-cli §4.2)

A pod selector names a role (worker, leader), never a workload, so pods are first scoped by ownership: a pod
belongs to a workload when it is the workload (a bare Pod), when one of its `ownerReferences` carries the workload's
UID, or when following the **controller** reference up (pod -> ReplicaSet -> Deployment, pod -> Job -> JobSet)
reaches an object that does, at most `max_hops` owners up (6, as upstream). A missing owner, or an owner of the
same name with another UID (deleted and recreated), ends the walk with no match; a cycle ends at the cap.

No I/O here: the caller supplies the owners as data (`OwnerIndex`), e.g. one metadata list per owner kind. Pods can
own too (a LeaderWorkerSet leader pod owns its group's worker StatefulSet): `OwnerChains(pods=...)` makes them
available as owners without the caller listing them twice.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Union

from workload_map.errors import ArgumentTypeError

__all__ = [
    "DEFAULT_MAX_HOPS",
    "OwnerChains",
    "OwnerIndex",
    "OwnerRecord",
    "Owners",
    "owned_by",
]

DEFAULT_MAX_HOPS: Final = 6
"""How many owners up the controller chain are read (upstream's cap)."""

_PARTIAL_KINDS: Final = frozenset({"PartialObjectMetadata", ""})


@dataclass(frozen=True, slots=True)
class OwnerRecord:
    """What the walk needs of one owner object: identity and its own owner references."""

    kind: str
    name: str
    namespace: str
    uid: str
    owner_references: tuple[Mapping[str, Any], ...]


def _references(metadata: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    refs = metadata.get("ownerReferences")
    if not isinstance(refs, list):
        return ()
    return tuple(ref for ref in refs if isinstance(ref, (dict, Mapping)))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class OwnerIndex:
    """Owner objects (full objects, `PartialObjectMetadata` items, or bare `metadata` dicts), found by UID or by
    (namespace, kind, name).

    `kind` names the kind of every object of one `add` call, for metadata lists whose items carry no kind (or
    `PartialObjectMetadata`). Cluster-scoped owners have the namespace `""`.
    """

    __slots__ = ("_by_name", "_by_uid")

    def __init__(self, owners: Iterable[Mapping[str, Any]] = (), *, kind: str | None = None) -> None:
        self._by_uid: dict[str, OwnerRecord] = {}
        self._by_name: dict[tuple[str, str, str], OwnerRecord] = {}
        self.add(owners, kind=kind)

    def __len__(self) -> int:
        return len({id(record) for record in (*self._by_uid.values(), *self._by_name.values())})

    def add(self, owners: Iterable[Mapping[str, Any]], *, kind: str | None = None) -> None:
        """Index more owner objects (e.g. the next owner kind's list)."""
        for owner in owners:
            self.add_one(owner, kind=kind)

    def add_one(
        self, owner: object, *, kind: str | None = None, key: tuple[str, str, str] | str | None = None
    ) -> OwnerRecord | None:
        """Index one owner object; `key` ((namespace, kind, name) or a UID) fills what the object leaves out."""
        if not isinstance(owner, (dict, Mapping)):
            return None
        metadata = owner.get("metadata")
        if not isinstance(metadata, (dict, Mapping)):
            metadata = owner  # a bare ObjectMeta
            object_kind = ""
        else:
            object_kind = _text(owner.get("kind"))
        if object_kind in _PARTIAL_KINDS:
            object_kind = ""
        namespace, name, uid = _text(metadata.get("namespace")), _text(metadata.get("name")), _text(metadata.get("uid"))
        if isinstance(key, tuple):
            key_namespace, key_kind, key_name = key
            namespace, object_kind, name = namespace or key_namespace, object_kind or key_kind, name or key_name
        elif isinstance(key, str):
            uid = uid or key
        record = OwnerRecord(
            kind=kind or object_kind,
            name=name,
            namespace=namespace,
            uid=uid,
            owner_references=_references(metadata),
        )
        if record.uid:
            self._by_uid[record.uid] = record
        if record.name and record.kind:
            self._by_name[(record.namespace, record.kind, record.name)] = record
        return record

    @classmethod
    def from_mapping(cls, owners: Mapping[Any, Mapping[str, Any]]) -> OwnerIndex:
        """From a mapping (namespace, kind, name) -> owner object, or UID -> owner object."""
        index = cls()
        for key, owner in owners.items():
            if isinstance(key, tuple) and len(key) == 3 and all(isinstance(part, str) for part in key):
                index.add_one(owner, key=(key[0], key[1], key[2]))
            elif isinstance(key, str):
                index.add_one(owner, key=key)
            else:
                index.add_one(owner)
        return index

    def resolve(self, namespace: str, reference: Mapping[str, Any]) -> OwnerRecord | None:
        """The owner an ownerReference points at, seen from an object in `namespace`.

        By UID first; else by kind and name in `namespace`, then cluster-scoped. An owner found by name whose UID
        differs from the reference's is another object of the same name: None.
        """
        uid = _text(reference.get("uid"))
        if uid:
            record = self._by_uid.get(uid)
            if record is not None:
                return record
        kind, name = _text(reference.get("kind")), _text(reference.get("name"))
        record = self._by_name.get((namespace, kind, name)) or self._by_name.get(("", kind, name))
        if record is None:
            return None
        if uid and record.uid and record.uid != uid:
            return None
        return record


Owners = Union[OwnerIndex, Mapping[Any, Mapping[str, Any]], Iterable[Mapping[str, Any]], None]
"""What callers may pass as owners: an `OwnerIndex`, a mapping (namespace, kind, name) or UID -> owner object, an
iterable of owner objects, or None (only the pods' own ownerReferences are read)."""


def as_owner_index(owners: Owners) -> OwnerIndex:
    """Any accepted `owners` value as an `OwnerIndex`."""
    if owners is None:
        return OwnerIndex()
    if isinstance(owners, OwnerIndex):
        return owners
    if isinstance(owners, Mapping):
        return OwnerIndex.from_mapping(owners)
    given: object = owners  # what a caller passed, whatever the annotation says
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise ArgumentTypeError(
            "owners", "an OwnerIndex, a mapping key -> owner object, an iterable of owner objects or None", owners
        )
    return OwnerIndex(owners)


def _controller(references: tuple[Mapping[str, Any], ...]) -> Mapping[str, Any] | None:
    for reference in references:
        if reference.get("controller") is True:
            return reference
    return None


class OwnerChains:
    """Ownership answers for many pods over one owner index; the chain above each owner is walked once."""

    __slots__ = ("_chains", "_pods", "index", "max_hops")

    def __init__(
        self, owners: Owners = None, *, max_hops: int = DEFAULT_MAX_HOPS, pods: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self.index = as_owner_index(owners)
        self.max_hops = max_hops
        # (owner uid or kind/name key, hops left) -> UIDs referenced at each level above, nearest first
        self._chains: dict[tuple[str, int], tuple[tuple[str, ...], ...]] = {}
        self._pods: dict[str, Mapping[str, Any]] = {}
        self.add_pods(pods)

    def add_pods(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """Make pods available as owners (a LeaderWorkerSet leader pod owns its group's worker StatefulSet)."""
        for pod in pods:
            metadata = pod.get("metadata") if isinstance(pod, (dict, Mapping)) else None
            if isinstance(metadata, (dict, Mapping)):
                uid = _text(metadata.get("uid"))
                if uid:
                    self._pods[uid] = pod

    def _resolve(self, namespace: str, reference: Mapping[str, Any]) -> OwnerRecord | None:
        record = self.index.resolve(namespace, reference)
        if record is None and reference.get("kind") == "Pod":
            pod = self._pods.get(_text(reference.get("uid")))
            if pod is not None:
                metadata = pod["metadata"]
                record = OwnerRecord(
                    kind="Pod",
                    name=_text(metadata.get("name")),
                    namespace=_text(metadata.get("namespace")),
                    uid=_text(metadata.get("uid")),
                    owner_references=_references(metadata),
                )
        return record

    def levels(self, obj: Mapping[str, Any]) -> list[tuple[str, ...]]:
        """The UIDs on an object's owner chain, level by level: the object's own UID, its ownerReferences, then
        those of its controller, and so on, at most `max_hops` owners up."""
        metadata = obj.get("metadata")
        if not isinstance(metadata, (dict, Mapping)):
            return []
        references = _references(metadata)
        levels: list[tuple[str, ...]] = [
            (_text(metadata.get("uid")),),  # the object itself (a bare Pod is its own workload)
            tuple(_text(reference.get("uid")) for reference in references),
        ]
        controller = _controller(references)
        if controller is not None and self.max_hops > 0:
            levels.extend(self._above(_text(metadata.get("namespace")), controller, self.max_hops))
        return levels

    def _above(self, namespace: str, reference: Mapping[str, Any], hops: int) -> tuple[tuple[str, ...], ...]:
        """Levels above the owner `reference` points at, reading at most `hops` owners (this one included)."""
        key = (_text(reference.get("uid")) or f"{namespace}/{reference.get('kind')}/{reference.get('name')}", hops)
        cached = self._chains.get(key)
        if cached is not None:
            return cached
        self._chains[key] = ()  # a cycle back to this owner adds nothing
        record = self._resolve(namespace, reference)
        result: tuple[tuple[str, ...], ...] = ()
        if record is not None:
            level = tuple(_text(parent.get("uid")) for parent in record.owner_references)
            result = (level,)
            controller = _controller(record.owner_references)
            if controller is not None and hops > 1:
                result += self._above(record.namespace or namespace, controller, hops - 1)
        self._chains[key] = result
        return result

    def find_root(self, obj: Mapping[str, Any], roots: Container[str]) -> str | None:
        """The first UID of `roots` met on the object's owner chain (nearest level first), or None."""
        for level in self.levels(obj):
            for uid in level:
                if uid and uid in roots:
                    return uid
        return None

    def owned_by(self, obj: Mapping[str, Any], root_uid: str) -> bool:
        """Whether the object belongs to the workload whose UID is `root_uid`."""
        if not root_uid:
            return False
        return self.find_root(obj, (root_uid,)) is not None


def owned_by(pod: Mapping[str, Any], root_uid: str, owners: Owners = None, *, max_hops: int = DEFAULT_MAX_HOPS) -> bool:
    """Whether `pod` belongs to the workload with UID `root_uid` (for many pods, reuse one `OwnerChains`)."""
    if not isinstance(pod, Mapping):
        raise ArgumentTypeError("the pod", "a mapping (a Pod object)", pod)
    if not isinstance(root_uid, str):
        raise ArgumentTypeError("root_uid", "a string", root_uid)
    return OwnerChains(owners, max_hops=max_hops).owned_by(pod, root_uid)
