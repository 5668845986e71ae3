"""A cluster as the placement rules see it: its nodes (allocatable, labels, taints) and what the pods bound to them
already request.

Amounts are whole nano units per resource name (`workload_map.resources.NANO` per unit), so the fit loop adds and
compares ints, never `Fraction`s. A pod counts against its node while it is bound (`spec.nodeName`) and not
finished (`status.phase` neither `Succeeded` nor `Failed`), with the scheduler's request formula
(`workload_map.resources.pod_requests`), plus one `pods` each.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from workload_map.errors import WorkloadMapError
from workload_map.resources import NANO, QuantityError, ResourceSpecError, parse_nanos, pod_requests

__all__ = ["PODS", "ClusterSnapshot", "NodeState", "PlacementError", "Taint", "to_nanos"]

PODS: Final = "pods"
"""The resource every pod takes one of (a node's `allocatable.pods`, its most pods)."""

_FINISHED: Final = frozenset({"Succeeded", "Failed"})
_BLOCKING_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})


class PlacementError(WorkloadMapError, ValueError):
    """A node, pod or plan the placement rules cannot read (one line naming the object and field)."""


def to_nanos(amount: Fraction | int) -> int:
    """An amount in whole nano units, rounded up (as the API server rounds stored quantities)."""
    return math.ceil(Fraction(amount) * NANO)


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint; only `NoSchedule` and `NoExecute` keep a pod off (`blocks`)."""

    key: str
    value: str = ""
    effect: str = ""

    @property
    def blocks(self) -> bool:
        return self.effect in _BLOCKING_EFFECTS

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


@dataclass(frozen=True, slots=True)
class NodeState:
    """One node: `allocatable` and `requested` (by its bound pods) in nanos per resource name. A `spec.unschedulable`
    node carries the taint the node controller would give it (`node.kubernetes.io/unschedulable:NoSchedule`)."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]

    def free(self, resource: str) -> int:
        """What is left of `resource` (0 when the node has none, never negative)."""
        return max(0, self.allocatable.get(resource, 0) - self.requested.get(resource, 0))


@dataclass(frozen=True)
class ClusterSnapshot:
    """A cluster's nodes as they are now; `notes` say what could not be read (a pod or quantity skipped)."""

    name: str
    nodes: tuple[NodeState, ...]
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def from_objects(
        cls, nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]] = (), *, name: str = ""
    ) -> ClusterSnapshot:
        """The snapshot of Node objects and Pod objects (dicts as the API returns them). Pods bound to a node not
        in `nodes`, unbound pods and finished pods are left out. A node without a name is a `PlacementError`."""
        notes: list[str] = []
        requested: dict[str, dict[str, int]] = {}
        for pod in pods:
            _count_pod(pod, requested, notes)
        states = [_node_state(node, requested.get(_node_name(node), {}), notes) for node in nodes]
        return cls(name, tuple(states), tuple(notes))


def _node_name(node: Mapping[str, Any]) -> str:
    metadata = node.get("metadata") if isinstance(node, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise PlacementError("a Node without metadata.name")
    return name


def _node_state(node: Mapping[str, Any], requested: dict[str, int], notes: list[str]) -> NodeState:
    name = _node_name(node)
    metadata = node["metadata"]
    labels = metadata.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise PlacementError(f"node {name}: metadata.labels is not an object")
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    if not isinstance(spec, Mapping) or not isinstance(status, Mapping):
        raise PlacementError(f"node {name}: spec and status must be objects")
    taints = [_taint(name, raw) for raw in spec.get("taints") or ()]
    if spec.get("unschedulable") is True:
        taints.append(Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"))
    # allocatable is what the kubelet offers pods; capacity only when a node reports no allocatable
    amounts = status.get("allocatable") or status.get("capacity") or {}
    if not isinstance(amounts, Mapping):
        raise PlacementError(f"node {name}: status.allocatable is not an object")
    allocatable: dict[str, int] = {}
    for resource, raw in amounts.items():
        try:
            allocatable[str(resource)] = parse_nanos(raw)
        except (QuantityError, TypeError):
            notes.append(f"node {name}: allocatable {resource} is not a quantity; counted as none")
    return NodeState(name, {str(k): str(v) for k, v in labels.items()}, tuple(taints), allocatable, requested)


def _taint(node: str, raw: Any) -> Taint:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), str):
        raise PlacementError(f"node {node}: spec.taints has an entry without a key")
    return Taint(raw["key"], str(raw.get("value") or ""), str(raw.get("effect") or ""))


def _count_pod(pod: Mapping[str, Any], requested: dict[str, dict[str, int]], notes: list[str]) -> None:
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    if not isinstance(spec, Mapping):
        return
    node = spec.get("nodeName")
    if not isinstance(node, str) or not node:
        return
    status = pod.get("status")
    if isinstance(status, Mapping) and status.get("phase") in _FINISHED:
        return
    try:
        amounts = pod_requests(spec)
    except (ResourceSpecError, QuantityError) as error:
        metadata = pod.get("metadata") or {}
        notes.append(f"pod {metadata.get('namespace', '')}/{metadata.get('name', '')}: {error}; counted as none")
        amounts = {}
    used = requested.setdefault(node, {})
    for resource, amount in amounts.items():
        used[resource] = used.get(resource, 0) + to_nanos(amount)
    used[PODS] = used.get(PODS, 0) + NANO
