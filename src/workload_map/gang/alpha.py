"""The gangs of the alpha `podGroups` format: each member's pods keyed into gangs per instance and per replica
(see `workload_map.gang.keys`), from the spec alone and, with pods, from the group-key values the pods carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from msgspec.structs import replace

from workload_map.gang.builder import Builder, add_counts, make_roles, min_resources_of, pod_identity
from workload_map.gang.errors import GangError, InstanceIdError
from workload_map.gang.keys import Keying, keying_of
from workload_map.gang.names import join_name
from workload_map.gang.scale import Role
from workload_map.gang.summary import infer_pod_component, infer_pod_component_instance, pod_group_keys, pod_grouping
from workload_map.gang.types import Gang, GangRole, PodMembership
from workload_map.pods import PodQuerier, SelectorError
from workload_map.resolve import ComponentNotFound, ExtractionError
from workload_map.resolve.replicas import desired_replicas
from workload_map.resources import ResourceList

__all__ = ["build"]

_Slot = tuple[str, str | None, str | None]  # (pod group, instance, replica)


@dataclass
class _Draft:
    slot: _Slot
    members: list[str]
    minimum: dict[Role, int]
    desired: dict[Role, int]
    error: str | None = None


def build(
    builder: Builder, base: str, pods: Iterable[Mapping[str, Any]] | None
) -> tuple[list[Gang], list[PodMembership]]:
    summary = builder.summary
    assert summary.gang is not None and summary.gang.pod_groups
    definitions = summary.gang.pod_groups
    several = len(definitions) > 1
    keyings: dict[tuple[str, str], Keying] = {}
    drafts: dict[_Slot, _Draft] = {}
    for group in definitions:
        for member in group.members:
            if member.component_name not in summary.definitions:
                raise GangError(
                    f"pod group {group.name}: member component {member.component_name} not found in the definition"
                )
            keying = keying_of(summary, group.name, member)
            keyings[(group.name, member.component_name)] = keying
            for slot in _slots(builder, keying):
                _draft_into(builder, drafts, keying, slot)

    placements: list[tuple[PodMembership, _Slot | None, tuple[str, ...] | None]] = []
    seen: dict[_Slot, dict[tuple[str, ...], list[str]]] = {}
    full_keys: dict[tuple[_Slot, tuple[str, ...]], tuple[str, ...]] = {}
    members_seen: dict[_Slot, list[str]] = {}
    if pods is not None:
        for pod in pods:
            membership, placed, extras = _place_alpha(builder, keyings, pod)
            placements.append((membership, placed, extras))
            if placed is None or extras is None:
                continue
            slot = placed
            seen.setdefault(slot, {}).setdefault(extras, []).append(membership.name)
            full_keys[(slot, extras)] = membership.keys
            if membership.member is not None:
                listed = members_seen.setdefault(slot, [])
                if membership.member not in listed:
                    listed.append(membership.member)
        for slot, members in members_seen.items():
            if slot not in drafts:  # a gang the spec does not predict (a removed instance, a replica scaled away)
                for member_name in members:
                    _draft_into(builder, drafts, keyings[(slot[0], member_name)], slot)

    gangs: list[Gang] = []
    shapes: dict[tuple[Any, Any], tuple[tuple[GangRole, ...], ResourceList]] = {}  # replicas share roles
    gang_of: dict[tuple[_Slot, tuple[str, ...]], str] = {}
    used_names: set[str] = set()
    for slot, draft in drafts.items():
        pod_group, instance, replica = slot
        template = join_name([pod_group, instance or ""])
        shape = (tuple(draft.minimum.items()), tuple(draft.desired.items()))
        made = shapes.get(shape)
        if made is None:
            roles = make_roles(builder, draft.minimum, draft.desired)
            made = shapes[shape] = (roles, min_resources_of(roles))
        roles, min_resources = made
        variants = seen.get(slot) or {(): []}
        varying = _varying(list(variants))
        for extras, pod_names in variants.items():
            parts = [base, pod_group if several else "", instance or "", replica or ""]
            parts.extend(extras[index] for index in varying)
            name = _unique(join_name(parts) or join_name([pod_group]), used_names)
            gang_of[(slot, extras)] = name
            if draft.error is not None:
                builder.note(f"gang {name}: {draft.error}")
            gangs.append(
                Gang(
                    name=name,
                    pod_group=pod_group,
                    members=tuple(draft.members),
                    min_member=sum(draft.minimum.values()),
                    roles=roles,
                    min_resources=min_resources,
                    instance=instance,
                    replica=replica,
                    keys=full_keys.get((slot, extras)) if pod_names else None,
                    pods=tuple(pod_names),
                    template_name=template,
                    split_keys=tuple(extras[index] for index in varying),
                )
            )
    memberships = [
        replace(membership, gang=gang_of.get((slot, extras))) if slot is not None and extras is not None else membership
        for membership, slot, extras in placements
    ]
    return gangs, memberships


def _slots(builder: Builder, keying: Keying) -> list[_Slot]:
    """The gangs a member has from the spec alone: one per instance when keyed per instance, one per replica when
    keyed per replica (from the replicated component's replica count), else one."""
    resolution = builder.resolution
    name = keying.member.component_name
    instances: list[str | None] = [None]
    if keying.instance_key is not None:
        try:
            instances = list(resolution.component(name).require_instance_ids())
        except ExtractionError as error:
            raise GangError(f"failed to get instance ids of component {name}: {error.message}") from error
    replicas: list[str | None] = [None]
    replicated = keying.replica_component
    if replicated is not None:
        try:
            scales = resolution.component(replicated).require_scales()
        except ExtractionError as error:
            raise GangError(f"failed to get scale of component {replicated}: {error.message}") from error
        if scales is None:
            builder.note(
                f"component {replicated} is replicated (replicaSelector) but has no scaleDefinition: its gangs are "
                f"known from pods only"
            )
        else:
            count = sum(desired_replicas(value) for value in scales.values())
            replicas = [str(index) for index in range(count)]
    return [(keying.pod_group, instance, replica) for instance in instances for replica in replicas]


def _draft_into(builder: Builder, drafts: dict[_Slot, _Draft], keying: Keying, slot: _Slot) -> None:
    draft = drafts.setdefault(slot, _Draft(slot, [], {}, {}))
    name = keying.member.component_name
    if name in draft.members:
        return
    draft.members.append(name)
    try:
        minimum, desired = builder.counts(keying, slot[1] if keying.instance_key is not None else None)
    except InstanceIdError as error:
        draft.error = str(error)
        return
    add_counts(draft.minimum, minimum)
    add_counts(draft.desired, desired)


def _varying(variants: list[tuple[str, ...]]) -> list[int]:
    """Positions where the group-key values of one slot's pods differ (they split it into several gangs)."""
    if len(variants) < 2:
        return []
    width = min(len(variant) for variant in variants)
    return [index for index in range(width) if len({variant[index] for variant in variants}) > 1]


def _unique(name: str, used: set[str]) -> str:
    candidate, index = name, 2
    while candidate in used:
        candidate = join_name([name, str(index)])
        index += 1
    used.add(candidate)
    return candidate


def _place_alpha(
    builder: Builder, keyings: Mapping[tuple[str, str], Keying], pod: Mapping[str, Any]
) -> tuple[PodMembership, _Slot | None, tuple[str, ...] | None]:
    summary = builder.summary
    name, namespace = pod_identity(pod)
    query = PodQuerier(pod, policy=builder.resolution.policy)
    try:
        component = infer_pod_component(query, summary)
    except GangError as error:
        return PodMembership(name, namespace, error=str(error)), None, None
    instance: str | None = None
    problems: list[str] = []
    try:
        instance = infer_pod_component_instance(query, component, builder.resolution)
    except (GangError, ComponentNotFound) as error:
        problems.append(str(error))
    if instance is None and not problems:
        instance = ""
    try:
        grouping = pod_grouping(query, component, summary)
    except GangError as error:
        return PodMembership(name, namespace, component, instance, error=str(error)), None, None
    if grouping is None:
        where = f"{namespace}/{name}" if namespace else name
        return (
            PodMembership(
                name,
                namespace,
                component,
                instance,
                error=f"pod {where} does not match any Karta pod group member definition",
            ),
            None,
            None,
        )
    try:
        keys = tuple(pod_group_keys(query, grouping.member))
    except GangError as error:
        return (
            PodMembership(
                name,
                namespace,
                component,
                instance,
                pod_group=grouping.pod_group,
                member=grouping.effective_component,
                error=str(error),
            ),
            None,
            None,
        )
    keying = keyings[(grouping.pod_group, grouping.effective_component)]
    slot_instance = keys[keying.instance_key] if keying.instance_key is not None else None
    replica: str | None = None
    if keying.replica_key is not None:
        replica = keys[keying.replica_key]
    elif keying.replica_component is not None:
        try:
            replica = query.extract_replica_key(keying.replica_selector)
        except SelectorError as error:
            problems.append(f"component {keying.replica_component}: {error}")
    structural = {index for index in (keying.instance_key, keying.replica_key) if index is not None}
    extras = tuple(value for index, value in enumerate(keys) if index not in structural)
    slot: _Slot = (grouping.pod_group, slot_instance, replica)
    membership = PodMembership(
        name,
        namespace,
        component,
        instance,
        pod_group=grouping.pod_group,
        member=grouping.effective_component,
        keys=keys,
        error="; ".join(problems) or None,
    )
    return membership, slot, extras
