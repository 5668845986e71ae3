"""Pod attribution: which of a workload's pods belongs to which component, instance and replica (kli-cli §4.2-4.3).

    from workload_map.pods import attribute

    result = attribute(workload, pods, owners)        # owners: OwnerIndex or owner objects (ReplicaSets, Jobs, ...)
    for pod in result.claimed:
        print(pod.name, pod.component, pod.instance, pod.replica)
    result.unclaimed                                   # owned pods no component claims (upstream drops them)

Steps, per pod:

1. **Ownership** (`owners.py`): only pods whose owner chain reaches the workload's UID are considered, so pods of
   two workloads of one type in one namespace never mix.
2. **Component**: the first component, in declaration order (the root first), whose `componentTypeSelector`
   matches; components without a type selector are skipped. When none matches and the definition has exactly one
   pod-bearing component, that component takes the pod. Otherwise the pod is unclaimed.
3. **Instance**: `componentInstanceSelector` gives the id, which must be one of the component's instance ids (a
   single-instance component without a selector takes `""`).
4. **Replica**: `replicaSelector` of the component or of its nearest ancestor that defines one (LWS group index).

Per-pod selector failures are recorded on the pod (`errors`), never raised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.errors import ArgumentTypeError
from workload_map.model import ComponentInstanceSelector, ComponentTypeSelector, ReplicaSelector
from workload_map.pods.owners import DEFAULT_MAX_HOPS, OwnerChains, Owners
from workload_map.pods.selectors import PodQuerier, SelectorError
from workload_map.resolve import Resolution

__all__ = [
    "AttributedPod",
    "Attribution",
    "AttributionPlan",
    "attribute",
    "attribute_many",
    "workload_uid",
]


@dataclass(frozen=True, slots=True)
class AttributedPod:
    """One owned pod and where it belongs.

    `component` is None when no component claims the pod; `instance` is the instance id (`""` for a
    single-instance component) or None when it could not be told (see `errors`); `replica` is the replica key
    when the component (or an ancestor) has a `replicaSelector`.
    """

    pod: Mapping[str, Any] = field(repr=False)
    name: str
    component: str | None = None
    instance: str | None = None
    replica: str | None = None
    errors: tuple[str, ...] = ()

    @property
    def claimed(self) -> bool:
        """True when the pod has a component and an instance."""
        return self.component is not None and self.instance is not None


@dataclass(frozen=True, slots=True)
class Attribution:
    """The pods of one workload: every owned pod (input order) and how many given pods were someone else's."""

    root_uid: str
    pods: tuple[AttributedPod, ...]
    foreign: int = 0

    @property
    def claimed(self) -> list[AttributedPod]:
        return [pod for pod in self.pods if pod.claimed]

    @property
    def unclaimed(self) -> list[AttributedPod]:
        """Owned pods with no component or no instance: listed by the view, never silently dropped."""
        return [pod for pod in self.pods if not pod.claimed]

    def by_component(self) -> dict[str, dict[str, list[AttributedPod]]]:
        """Claimed pods by component name, then by instance id."""
        grouped: dict[str, dict[str, list[AttributedPod]]] = {}
        for pod in self.pods:
            if pod.component is not None and pod.instance is not None:
                grouped.setdefault(pod.component, {}).setdefault(pod.instance, []).append(pod)
        return grouped

    def for_component(self, component: str, instance: str | None = None) -> list[AttributedPod]:
        """Claimed pods of a component (and of one of its instances when `instance` is given)."""
        return [
            pod
            for pod in self.pods
            if pod.claimed and pod.component == component and (instance is None or pod.instance == instance)
        ]


@dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    pod_bearing: bool
    type_selector: ComponentTypeSelector | None
    instance_selector: ComponentInstanceSelector | None
    replica_selector: ReplicaSelector | None
    instance_ids: tuple[str, ...] | None
    ids_error: str | None


def _pod_name(pod: Mapping[str, Any]) -> str:
    metadata = pod.get("metadata")
    if isinstance(metadata, (dict, Mapping)):
        name = metadata.get("name")
        if isinstance(name, str):
            return name
    return ""


def workload_uid(resolution: Resolution) -> str:
    """The workload object's `metadata.uid` (`""` when it has none)."""
    _check_resolution(resolution)
    return resolution.object.uid


class AttributionPlan:
    """What attribution needs of a workload, read once: the claiming components in order, their instance ids and
    selectors. `place(pod)` attributes one (already owned) pod, evaluating under the workload's jq policy."""

    __slots__ = ("candidates", "policy", "sole")

    def __init__(self, resolution: Resolution) -> None:
        _check_resolution(resolution)
        self.policy = resolution.policy
        candidates: list[_Candidate] = []
        pod_bearing: list[_Candidate] = []
        for component in resolution:
            selector = component.definition.pod_selector
            type_selector = selector.component_type_selector if selector is not None else None
            if not component.has_pod_definition and type_selector is None:
                continue
            ids_failure = component.ids_error
            ids = None if ids_failure is not None else component.instance_ids
            ids_error = (
                None
                if ids_failure is None
                else f"cannot read the instance ids of component {component.name!r}: {ids_failure.message}"
            )
            candidate = _Candidate(
                name=component.name,
                pod_bearing=component.has_pod_definition,
                type_selector=type_selector,
                instance_selector=selector.component_instance_selector if selector is not None else None,
                replica_selector=_replica_selector(resolution, component.name),
                instance_ids=ids,
                ids_error=ids_error,
            )
            candidates.append(candidate)
            if candidate.pod_bearing:
                pod_bearing.append(candidate)
        self.candidates = tuple(candidates)
        self.sole = pod_bearing[0] if len(pod_bearing) == 1 else None

    def place(self, pod: Mapping[str, Any]) -> AttributedPod:
        """Component, instance and replica of one pod (failures recorded on the result)."""
        query = PodQuerier(pod, policy=self.policy)
        name = _pod_name(pod)
        errors: list[str] = []
        chosen: _Candidate | None = None
        for candidate in self.candidates:
            if candidate.type_selector is None:
                continue
            try:
                if query.matches_component_type(candidate.type_selector):
                    chosen = candidate
                    break
            except SelectorError as error:
                errors.append(f"component {candidate.name!r}: {error}")
        if chosen is None:
            chosen = self.sole
        if chosen is None:
            return AttributedPod(pod, name, errors=tuple(errors))
        errors = []  # another component's selector failing does not matter once one claimed the pod
        instance: str | None = None
        if chosen.instance_ids is None:
            errors.append(chosen.ids_error or f"component {chosen.name!r} has no instance ids")
        else:
            try:
                instance = query.matching_instance_id(chosen.instance_selector, chosen.instance_ids)
            except SelectorError as error:
                errors.append(f"component {chosen.name!r}: {error}")
        replica: str | None = None
        if chosen.replica_selector is not None:
            try:
                replica = query.extract_replica_key(chosen.replica_selector)
            except SelectorError as error:
                errors.append(f"component {chosen.name!r}: {error}")
        return AttributedPod(pod, name, chosen.name, instance, replica, tuple(errors))


def _replica_selector(resolution: Resolution, name: str) -> ReplicaSelector | None:
    """The replicaSelector of the component or of its nearest ancestor that defines one."""
    seen: set[str] = set()
    current: str | None = name
    while current is not None and current not in seen:
        seen.add(current)
        component = resolution.component(current)
        selector = component.definition.pod_selector
        if selector is not None and selector.replica_selector is not None and selector.replica_selector.key_path:
            return selector.replica_selector
        parent = resolution.parent_of(current)
        current = parent.name if parent is not None else None
    return None


def _check_resolution(resolution: Any) -> None:
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)


def _pods(pods: Any) -> list[Mapping[str, Any]]:
    """The pods as a list, each a mapping (a Pod object): ArgumentTypeError, naming the index, for anything else."""
    if isinstance(pods, Mapping | str | bytes) or not isinstance(pods, Iterable):
        raise ArgumentTypeError("pods", "an iterable of Pod objects (mappings)", pods)
    found = list(pods)
    for index, pod in enumerate(found):
        if not isinstance(pod, Mapping):
            raise ArgumentTypeError(f"pods[{index}]", "a mapping (a Pod object)", pod)
    return found


def attribute(
    resolution: Resolution,
    pods: Iterable[Mapping[str, Any]],
    owners: Owners = None,
    *,
    check_ownership: bool = True,
    max_hops: int = DEFAULT_MAX_HOPS,
) -> Attribution:
    """Attribute `pods` to the components, instances and replicas of a resolved workload.

    `owners` are the intermediate owner objects (ReplicaSets, Jobs, StatefulSets, ...) as data: an `OwnerIndex`,
    a mapping (namespace, kind, name) or UID -> object, or an iterable of objects. Pods whose owner chain does not
    reach the workload's UID are counted in `foreign` and otherwise ignored. The given pods also count as owners
    (a LeaderWorkerSet leader pod owns its group's worker StatefulSet). `check_ownership=False` takes every
    given pod as the workload's (the caller scoped them already).
    """
    _check_resolution(resolution)
    pods = _pods(pods)
    plan = AttributionPlan(resolution)
    uid = workload_uid(resolution)
    if not check_ownership:
        return Attribution(uid, tuple(plan.place(pod) for pod in pods))
    chains = OwnerChains(owners, max_hops=max_hops, pods=pods)
    placed: list[AttributedPod] = []
    foreign = 0
    for pod in pods:
        if uid and chains.owned_by(pod, uid):
            placed.append(plan.place(pod))
        else:
            foreign += 1
    return Attribution(uid, tuple(placed), foreign)


def attribute_many(
    workloads: Sequence[Resolution],
    pods: Iterable[Mapping[str, Any]],
    owners: Owners = None,
    *,
    max_hops: int = DEFAULT_MAX_HOPS,
) -> list[Attribution]:
    """Attribute one pod list (e.g. a whole namespace) to many workloads at once: each pod's owner chain is walked
    once and each owner's chain once for all pods. Returns one `Attribution` per workload, in order (as
    `attribute` would give for each: `foreign` counts the given pods that are not that workload's)."""
    if isinstance(workloads, Mapping | str) or not isinstance(workloads, Sequence):
        raise ArgumentTypeError("workloads", "a sequence of Resolutions", workloads)
    for workload in workloads:
        _check_resolution(workload)
    uids = [workload_uid(workload) for workload in workloads]
    slots: dict[str, int] = {}
    for position, uid in enumerate(uids):
        if uid:
            slots.setdefault(uid, position)
    pods = _pods(pods)
    chains = OwnerChains(owners, max_hops=max_hops, pods=pods)
    grouped: list[list[Mapping[str, Any]]] = [[] for _ in workloads]
    count = 0
    for pod in pods:
        count += 1
        root = chains.find_root(pod, slots)
        if root is not None:
            grouped[slots[root]].append(pod)
    results: list[Attribution] = []
    for workload, uid, members in zip(workloads, uids, grouped, strict=True):
        plan = AttributionPlan(workload)
        results.append(Attribution(uid, tuple(plan.place(pod) for pod in members), count - len(members)))
    return results
