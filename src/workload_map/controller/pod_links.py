"""What the pod webhook puts on a pod, decided from a resolution kept per workload version (sans I/O).

A burst of pod creations is nearly always many pods of one workload: the resolution of that workload (and the
definition's structure summary) is the same for all of them until the workload changes. `WorkloadPlans` keeps it
per (uid, resourceVersion, definition): the first pod of a version resolves the workload, the next ones only plan
with their own pod (`gang.plan(resolution, [pod])`: a pod's gang and leaf depend on the pod and the spec, not on
its siblings), which reads the resolution's memoised values. A new resourceVersion (a scale change, an edit) or
a new definition object (a Karta changed) resolves again.

Thread-safety: the webhook plans in worker threads (a cluster definition's jq may run up to its deadline, which
must not hold the event loop). A resolution memoises as it is read, so the pods of one entry plan one at a time
(the entry's lock); pods of different workloads plan in parallel.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.controller.grouping import KAI_SKIP_ANNOTATION
from workload_map.gang import StructureSummary, plan, pod_join
from workload_map.jq import EvaluationPolicy
from workload_map.model import Karta
from workload_map.resolve import Resolution, Workload

__all__ = ["Resolver", "WorkloadPlans", "link_patch"]

Resolver = Callable[[Karta, Mapping[str, Any], EvaluationPolicy], Resolution]
_KEPT = 1024  # workload versions kept (least recently used dropped first)


def _resolve(karta: Karta, top: Mapping[str, Any], policy: EvaluationPolicy) -> Resolution:
    return Workload(karta, top, validate=False, policy=policy).resolve()


@dataclass
class _Entry:
    karta: Karta
    resolution: Resolution
    summary: StructureSummary
    lock: threading.Lock = field(default_factory=threading.Lock)


def _key(top: Mapping[str, Any]) -> tuple[str, str] | None:
    metadata = top.get("metadata") or {}
    uid, version = metadata.get("uid"), metadata.get("resourceVersion")
    if not isinstance(uid, str) or not uid or not isinstance(version, str) or not version:
        return None  # nothing says two reads are the same version: never shared
    return uid, version


class WorkloadPlans:
    """The links of each admitted pod, from a resolution per workload version (`resolve` is the resolver: a
    parameter so tests can count its calls)."""

    def __init__(self, resolve: Resolver = _resolve, *, kept: int = _KEPT) -> None:
        self._resolve = resolve
        self._kept = kept
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def _entry(self, karta: Karta, top: Mapping[str, Any], policy: EvaluationPolicy) -> _Entry:
        key = _key(top)
        if key is not None:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and entry.karta is karta:
                    self._entries.move_to_end(key)
                    return entry
        # resolved outside the table's lock (a slow definition must not hold other workloads' pods); two pods of
        # a new version arriving together may both resolve it, and the second entry replaces the first
        entry = _Entry(karta, self._resolve(karta, top, policy), StructureSummary(karta))
        if key is not None:
            with self._lock:
                self._entries[key] = entry
                self._entries.move_to_end(key)
                while len(self._entries) > self._kept:
                    self._entries.popitem(last=False)
        return entry

    def links(
        self,
        karta: Karta,
        top: Mapping[str, Any],
        pod: Mapping[str, Any],
        format: str,
        *,
        policy: EvaluationPolicy,
        queue: str | None = None,
    ) -> dict[str, Any] | None:
        """What `pod` (named, with its namespace) carries to join its gang in `format` (`gang.pod_join`: labels,
        annotations, spec), with KAI's skip annotation under `kai`; None when the plan places it in no gang (KAI's
        one group per pod is named after the pod: the grouper links it once it is named). Raises what `plan`
        raises (`WorkloadMapError`)."""
        entry = self._entry(karta, top, policy)
        with entry.lock:
            gang_plan = plan(entry.resolution, [pod], summary=entry.summary)
        if gang_plan.no_gang is not None:
            return None
        membership = gang_plan.pods[0] if gang_plan.pods else None
        if membership is None or membership.gang is None:
            return None
        join = pod_join(gang_plan, membership.gang, format, sub_group=membership.sub_group, queue=queue)
        if format == "kai":
            join["annotations"] = {**join.get("annotations", {}), KAI_SKIP_ANNOTATION: "true"}
        return join


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def link_patch(pod: Mapping[str, Any], join: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch that puts `join` (`WorkloadPlans.links`) on `pod`: only the keys it lacks or holds with
    another value; the spec fields (the Workload API's link) as given."""
    metadata = pod.get("metadata") or {}
    ops: list[dict[str, Any]] = []
    for key in ("labels", "annotations"):
        old, wanted = metadata.get(key), join.get(key) or {}
        added = {k: v for k, v in wanted.items() if not isinstance(old, Mapping) or old.get(k) != v}
        if not added:
            continue
        if not isinstance(old, Mapping):
            ops.append({"op": "add", "path": f"/metadata/{key}", "value": added})
        else:
            ops += [{"op": "add", "path": f"/metadata/{key}/{_escape(k)}", "value": v} for k, v in added.items()]
    spec = pod.get("spec") or {}
    for name, value in (join.get("spec") or {}).items():
        if spec.get(name) != value:
            ops.append({"op": "add", "path": f"/spec/{_escape(name)}", "value": value})
    return ops
