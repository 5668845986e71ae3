"""What the pod grouper wants in the cluster for one workload, decided without I/O: the scheduler's objects (the
gang plan's export, owned by the workload) and, per pod not yet scheduled, the merge patch that links it to its
gang (`gang.joined_pod`), and how to bring existing objects in step with them (`changes`).

    wanted = grouping_for(resolution, pods, "kai", queue="research")
    creates, updates, deletes = changes(wanted.objects, existing, owner_uid)
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.gang import export, joined_pod, plan
from workload_map.resolve import Resolution

__all__ = [
    "FORMAT_OF",
    "KAI_SKIP_ANNOTATION",
    "MANAGED_BY",
    "Grouping",
    "changes",
    "covers",
    "grouping_for",
    "owned_by",
    "pod_key",
    "skip_kai_grouper",
]

MANAGED_BY = "app.kubernetes.io/managed-by=workload-map"
# KAI's own pod grouper leaves a pod (and a workload) with this annotation alone: with --scheduler kai the two never
# both write a PodGroup for it.
KAI_SKIP_ANNOTATION = "kai.scheduler/skip-podgrouper"
# --scheduler -> the gang export format.
FORMAT_OF = {"kai": "kai", "volcano": "volcano", "coscheduling": "coscheduling", "workload": "workload"}


@dataclass(frozen=True)
class Grouping:
    """The objects wanted, the merge patch per pod (`namespace/name`), and what the plan had to say."""

    objects: list[dict[str, Any]]
    pod_patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)


def pod_key(pod: Mapping[str, Any]) -> str:
    metadata = pod.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


def _pod_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The labels and annotations `after` adds or changes over `before` (spec fields of a pod are immutable)."""
    old_meta, new_meta = before.get("metadata") or {}, after.get("metadata") or {}
    patch: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        old, new = old_meta.get(key) or {}, new_meta.get(key) or {}
        diff = {k: v for k, v in new.items() if old.get(k) != v}
        if diff:
            patch[key] = diff
    return {"metadata": patch} if patch else {}


def grouping_for(
    resolution: Resolution,
    pods: Sequence[Mapping[str, Any]],
    scheduler: str,
    *,
    queue: str | None = None,
    workload_api_version: str = "scheduling.k8s.io/v1alpha2",
) -> Grouping:
    """The grouping of one workload. Raises `GangError` (`UnsatisfiableGang`, `NoGangInstructions`, ...) as
    `gang.plan` does; the caller turns it into an Event."""
    fmt = FORMAT_OF[scheduler]
    gang_plan = plan(resolution, pods)
    notes = list(gang_plan.notes)
    unplaced = [f"pod {p.name} is in no gang: {p.error or 'no gang matches it'}" for p in gang_plan.unplaced]
    if gang_plan.no_gang is not None and fmt != "kai":
        return Grouping([], {}, notes, unplaced)  # nothing to write: only KAI gives every pod a group
    objects = export(gang_plan, fmt, queue=queue, workload_api_version=workload_api_version)
    for obj in objects:
        for reference in (obj.get("metadata") or {}).get("ownerReferences") or []:
            reference["controller"] = True  # the workload owns its groups: deleted with it (garbage collector)
    patches: dict[str, dict[str, Any]] = {}
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName"):
            continue  # scheduled already: a group link now would change nothing
        joined = joined_pod(gang_plan, pod, fmt, queue=queue, workload_api_version=workload_api_version)
        if fmt == "kai":
            skip_kai_grouper(joined)
        patch = _pod_patch(pod, joined)
        if patch:
            patches[pod_key(pod)] = patch
    return Grouping(objects, patches, notes, unplaced)


def skip_kai_grouper(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` (changed in place) with KAI's skip annotation."""
    metadata = obj.setdefault("metadata", {})
    annotations = metadata.get("annotations")
    metadata["annotations"] = {**(annotations if isinstance(annotations, dict) else {}), KAI_SKIP_ANNOTATION: "true"}
    return obj


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    return any(
        isinstance(ref, Mapping) and ref.get("uid") == uid
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or []
    )


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str((obj.get("metadata") or {}).get("name")))


def covers(have: Any, want: Any) -> bool:
    """Whether the stored `have` says everything `want` says: every member of `want` is in `have` with a value it
    covers, lists element by element. Members only `have` holds are the API server's defaults
    (`disruptionMode: Pod`, `schedulingConstraints: null`) and do not count as a difference."""
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and all(covers(have.get(k), v) for k, v in want.items() if v is not None)
    if isinstance(want, list):
        return isinstance(have, list) and len(have) == len(want) and all(map(covers, have, want))
    return bool(have == want)


def _differs(wanted: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    if not covers(existing.get("spec"), wanted.get("spec")):
        return True
    want_meta, have_meta = wanted.get("metadata") or {}, existing.get("metadata") or {}
    have_labels = have_meta.get("labels") or {}
    if any(have_labels.get(k) != v for k, v in (want_meta.get("labels") or {}).items()):
        return True
    return bool((want_meta.get("ownerReferences") or []) != (have_meta.get("ownerReferences") or []))


def changes(
    wanted: Iterable[Mapping[str, Any]], existing: Iterable[Mapping[str, Any]], uid: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(to create, to replace, to delete, conflicts): `existing` are the objects of the scheduler's kinds in the
    workload's namespace; those owned by `uid` and not wanted are deleted; a wanted name held by an object the
    workload does not own is a conflict (left alone, reported)."""
    have = {_identity(obj): obj for obj in existing}
    creates: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    conflicts: list[str] = []
    wanted_ids = set()
    for obj in wanted:
        ident = _identity(obj)
        wanted_ids.add(ident)
        current = have.get(ident)
        if current is None:
            creates.append(copy.deepcopy(dict(obj)))
        elif not owned_by(current, uid):
            conflicts.append(f"{ident[1]} {ident[2]} exists and is not owned by the workload")
        elif _differs(obj, current):
            replaced = copy.deepcopy(dict(current))
            replaced["spec"] = copy.deepcopy(obj.get("spec"))
            metadata = replaced.setdefault("metadata", {})
            want_meta = obj.get("metadata") or {}
            metadata["labels"] = {**(metadata.get("labels") or {}), **(want_meta.get("labels") or {})}
            metadata["ownerReferences"] = copy.deepcopy(want_meta.get("ownerReferences") or [])
            updates.append(replaced)
    deletes = [dict(obj) for ident, obj in have.items() if ident not in wanted_ids and owned_by(obj, uid)]
    return creates, updates, deletes, conflicts
