"""What a live pod's status says, read the way `kubectl` users expect (phase, readiness, node, why not ready)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from workload_map.errors import ArgumentTypeError

__all__ = ["pod_node", "pod_phase", "pod_ready", "pod_reason"]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def _pod(pod: Any) -> Mapping[str, Any]:
    if not isinstance(pod, Mapping):
        raise ArgumentTypeError("the pod", "a mapping (a Pod object)", pod)
    return pod


def _conditions(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    conditions = _mapping(pod.get("status")).get("conditions")
    found: dict[str, Mapping[str, Any]] = {}
    if isinstance(conditions, list):
        for condition in conditions:
            if isinstance(condition, (dict, Mapping)) and isinstance(condition.get("type"), str):
                found.setdefault(condition["type"], condition)
    return found


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def pod_phase(pod: Mapping[str, Any]) -> str:
    """`status.phase`; a pod with no phase yet is `Pending` (what the API server sets on create)."""
    return _text(_mapping(_pod(pod).get("status")).get("phase")) or "Pending"


def pod_ready(pod: Mapping[str, Any]) -> bool:
    """The `Ready` condition is `True`."""
    conditions = _mapping(_pod(pod).get("status")).get("conditions")
    if isinstance(conditions, list):
        for condition in conditions:
            if isinstance(condition, (dict, Mapping)) and condition.get("type") == "Ready":
                return condition.get("status") == "True"
    return False


def pod_node(pod: Mapping[str, Any]) -> str | None:
    """`spec.nodeName`, or None while unscheduled."""
    return _text(_mapping(_pod(pod).get("spec")).get("nodeName")) or None


def _container_states(status: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainerStatuses", "containerStatuses"):
        statuses = status.get(key)
        if isinstance(statuses, list):
            for item in statuses:
                if isinstance(item, (dict, Mapping)):
                    yield _mapping(item.get("state"))


def pod_reason(pod: Mapping[str, Any], ready: bool | None = None) -> str | None:
    """Why a pod is not ready, or None when it is ready (or nothing says why).

    In order: the `PodScheduled=False` reason (`Unschedulable`); `status.reason` (`Evicted`); the first waiting
    container's reason, init containers first (`ImagePullBackOff`, `CrashLoopBackOff`); the first container that
    terminated with a non-zero exit code (`OOMKilled`, `Error`); the `Ready=False` reason (`PodCompleted`).
    """
    _pod(pod)
    if ready is None:
        ready = pod_ready(pod)
    if ready:
        return None
    conditions = _conditions(pod)
    scheduled = conditions.get("PodScheduled", {})
    if scheduled.get("status") == "False" and _text(scheduled.get("reason")):
        return _text(scheduled.get("reason"))
    status = _mapping(pod.get("status"))
    if _text(status.get("reason")):
        return _text(status.get("reason"))
    states = list(_container_states(status))
    for state in states:
        reason = _text(_mapping(state.get("waiting")).get("reason"))
        if reason:
            return reason
    for state in states:
        terminated = _mapping(state.get("terminated"))
        if terminated.get("exitCode") not in (None, 0) and _text(terminated.get("reason")):
            return _text(terminated.get("reason"))
    ready_condition = conditions.get("Ready", {})
    return _text(ready_condition.get("reason")) or None
