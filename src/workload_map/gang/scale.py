"""How many pods a component's subtree needs: upstream's CalculateSubtreeScale and the per-gang role counts.

`subtree_scale(resolution, component, instance_id=None)` is upstream's function (karta-spec §12.2), exactly:

* by-definition (any component has a scaleDefinition): effMin (`resolve.replicas.min_replicas`: minReplicas if
  > 0, else replicas if > 0, else 0; maxReplicas is never used); own = effMin of the given instance at the subtree
  root, else the sum over the
  component's instances; a component with children returns `own x kids` (kids = sum over the children), `own`
  when kids is 0 and `kids` when own is 0. The instance id applies only at the subtree root.
* by-leaves (no scaleDefinition anywhere): a leaf counts 1 (or its number of instances; 1 for a given id), a
  non-leaf the sum over its children.

`role_counts(...)` is the same recursion, split per pod-bearing (component, instance) and with the gang overrides
of the plan: the component a gang is keyed on by replica counts one replica per gang. See docs/gang.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Literal

from workload_map.errors import ArgumentTypeError
from workload_map.gang.errors import GangError, InstanceIdError
from workload_map.gang.summary import StructureSummary
from workload_map.resolve import ExtractionError, Resolution, Scale
from workload_map.resolve.replicas import min_replicas

__all__ = [
    "ScaleMode",
    "role_counts",
    "scale_mode",
    "subtree_scale",
]

ScaleMode = Literal["by-definition", "by-leaves"]
Role = tuple[str, str]  # (component, instance id)
Pick = Callable[[Scale], int]


def scale_mode(summary: StructureSummary) -> ScaleMode:
    return "by-definition" if summary.has_scale_definition else "by-leaves"


def _scales(resolution: Resolution, name: str) -> dict[str, Scale] | None:
    try:
        return resolution.component(name).require_scales()
    except ExtractionError as error:
        raise GangError(f"failed to get scale of component {name}: {error.message}") from error


def _ids(resolution: Resolution, name: str) -> tuple[str, ...]:
    try:
        return resolution.component(name).require_instance_ids()
    except ExtractionError as error:
        raise GangError(f"failed to get instance ids of component {name}: {error.message}") from error


def _check(resolution: object, component: object, instance_id: object) -> None:
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)
    if not isinstance(component, str):
        raise ArgumentTypeError("component", "a component name (a str)", component)
    if instance_id is not None and not isinstance(instance_id, str):
        raise ArgumentTypeError("instance_id", "an instance id (a str) or None", instance_id)


def subtree_scale(
    resolution: Resolution,
    component: str,
    instance_id: str | None = None,
    *,
    summary: StructureSummary | None = None,
) -> int:
    """Upstream's CalculateSubtreeScale: the min-member count of `component`'s subtree (see the module doc).

    `instance_id` (only for the subtree root) must be non-empty and one of the component's instance ids
    (`InstanceIdError` otherwise). Raises `ComponentNotFound` for an unknown component.
    """
    _check(resolution, component, instance_id)
    summary = summary or StructureSummary(resolution.karta)
    resolution.component(component)
    if instance_id is not None and instance_id == "":
        raise InstanceIdError("instance id is empty: give a non-empty instance id, or none for every instance")
    counts = role_counts(resolution, summary, component, instance_id=instance_id, pick=min_replicas)
    return sum(counts.values())


def role_counts(
    resolution: Resolution,
    summary: StructureSummary,
    component: str,
    *,
    instance_id: str | None = None,
    pick: Pick = min_replicas,
    one_replica: Collection[str] = (),
) -> dict[Role, int]:
    """Pods per (component, instance) in `component`'s subtree; the values sum to the subtree scale.

    `pick` reads one instance's count (`resolve.replicas.min_replicas` for the minimum, `desired_replicas` for the
    desired count).
    Components in `one_replica` (a gang keyed per replica of that component) count 1 replica, when they have a
    scaleDefinition. A count that belongs to no pod-bearing component (a logical component whose children give 0)
    is kept under that component's name.
    """
    _check(resolution, component, instance_id)
    if not isinstance(summary, StructureSummary):
        raise ArgumentTypeError("summary", "a StructureSummary", summary)
    if summary.has_scale_definition:
        return _by_definition(
            resolution,
            summary,
            name=component,
            root=component,
            instance_id=instance_id,
            pick=pick,
            one_replica=frozenset(one_replica),
        )
    return _by_leaves(resolution, summary, name=component, root=component, instance_id=instance_id, seen=set())


def _own(
    resolution: Resolution,
    *,
    name: str,
    root: str,
    instance_id: str | None,
    pick: Pick,
    one_replica: frozenset[str],
) -> dict[Role, int]:
    scales = _scales(resolution, name)
    if name == root and instance_id is not None:
        if scales is None or instance_id not in scales:
            raise InstanceIdError(
                f"instance id {instance_id} not found in component {name}"
                + ("" if scales is not None else " (it has no scaleDefinition)")
            )
        return {(name, instance_id): 1 if name in one_replica else pick(scales[instance_id])}
    if scales is None:
        return {}
    if name in one_replica:
        return {(name, ""): 1}
    return {(name, key): pick(scale) for key, scale in scales.items()}


def _by_definition(
    resolution: Resolution,
    summary: StructureSummary,
    *,
    name: str,
    root: str,
    instance_id: str | None,
    pick: Pick,
    one_replica: frozenset[str],
    seen: frozenset[str] = frozenset(),
) -> dict[Role, int]:
    own_split = _own(resolution, name=name, root=root, instance_id=instance_id, pick=pick, one_replica=one_replica)
    own = sum(own_split.values())
    children = [child for child in summary.children.get(name, []) if child not in seen]
    if not children:
        return own_split
    kids: dict[Role, int] = {}
    for child in children:
        for role, count in _by_definition(
            resolution,
            summary,
            name=child,
            root=root,
            instance_id=instance_id,
            pick=pick,
            one_replica=one_replica,
            seen=seen | {name},
        ).items():
            kids[role] = kids.get(role, 0) + count
    kids_total = sum(kids.values())
    if kids_total == 0:
        return own_split
    if own == 0:
        return kids
    return {role: own * count for role, count in kids.items()}


def _by_leaves(
    resolution: Resolution,
    summary: StructureSummary,
    *,
    name: str,
    root: str,
    instance_id: str | None,
    seen: set[str],
) -> dict[Role, int]:
    definition = summary.definitions[name]
    if definition.has_pod_definition:
        if not definition.instance_id_path:
            return {(name, ""): 1}
        ids = _ids(resolution, name)
        if name == root and instance_id is not None:
            if instance_id not in ids:
                raise InstanceIdError(f"instance id {instance_id} not found in component {name}")
            return {(name, instance_id): 1}
        return {(name, key): 1 for key in ids}
    seen.add(name)
    out: dict[Role, int] = {}
    for child in summary.children.get(name, []):
        if child in seen:
            continue
        for role, count in _by_leaves(
            resolution, summary, name=child, root=root, instance_id=instance_id, seen=seen
        ).items():
            out[role] = out.get(role, 0) + count
    return out
