"""The gang of the KAI-native `podGroup` format: one gang with its (nested) sub-groups and topology constraints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.gang.builder import Builder, add_counts, make_roles, min_resources_of, pod_identity
from workload_map.gang.errors import GangError, MissingScaleError
from workload_map.gang.keys import Keying
from workload_map.gang.names import is_dns1123_label, join_name, to_dns1123_label
from workload_map.gang.scale import Role
from workload_map.gang.summary import StructureSummary, infer_pod_component, infer_pod_component_instance
from workload_map.gang.types import Gang, PodMembership, SubGroupPlan, Topology
from workload_map.model import PodGroupMember, TopologyConstraint
from workload_map.pods import PodQuerier, SelectorError
from workload_map.resolve import ComponentNotFound

__all__ = ["build"]


def _topology(constraint: TopologyConstraint | None, where: str) -> Topology | None:
    if constraint is None:
        return None
    if not constraint.topology_name:
        raise GangError(f"{where}: topology constraint must include topology name (topologyName)")
    if not constraint.required_topology_level and not constraint.preferred_topology_level:
        raise GangError(
            f"{where}: topology constraint must include preferred or required topology level "
            f"(preferredTopologyLevel or requiredTopologyLevel)"
        )
    return Topology(
        constraint.topology_name,
        constraint.required_topology_level or None,
        constraint.preferred_topology_level or None,
    )


def build(
    builder: Builder, base: str, pods: Iterable[Mapping[str, Any]] | None
) -> tuple[list[Gang], list[PodMembership]]:
    summary = builder.summary
    assert summary.gang is not None and summary.gang.pod_group is not None
    definition = summary.gang.pod_group
    topology = _topology(definition.topology, "gangScheduling.podGroup")
    name = join_name([base, definition.name]) or join_name([definition.name])
    listed: list[tuple[str, Any]] = []
    for index, sub_group in enumerate(definition.sub_groups or ()):
        component = sub_group.component_name
        where = f"gangScheduling.podGroup.subGroups[{index}]"
        if not component:
            raise GangError(f"{where}: subgroup component name cannot be empty")
        if component not in summary.definitions:
            raise GangError(
                f"{where}: subgroup component {component} not found; components: {', '.join(summary.definitions)}"
            )
        listed.append((component, sub_group))
    names: dict[str, str] = {}
    for component, _ in listed:
        group_name = component if is_dns1123_label(component) else to_dns1123_label(component)
        if group_name != component:
            builder.note(f"sub-group of component {component} is named {group_name} (KAI requires a DNS label)")
        names[component] = group_name or "subgroup"
    sub_groups: list[SubGroupPlan] = []
    minimum: dict[Role, int] = {}
    desired: dict[Role, int] = {}
    listed_names = {component for component, _ in listed}
    for index, (component, sub_group) in enumerate(listed):
        where = f"gangScheduling.podGroup.subGroups[{index}]"
        keying = Keying(definition.name, PodGroupMember(component_name=component), None, None, None, None)
        group_min, group_desired = builder.counts(keying, None)
        total = sum(group_min.values())
        if total == 0:
            raise MissingScaleError(component)
        parent = next((ancestor for ancestor in summary.ancestors(component) if ancestor in listed_names), None)
        if parent is None:  # a top-level sub-group: its pods count towards the gang
            add_counts(minimum, group_min)
            add_counts(desired, group_desired)
        sub_groups.append(
            SubGroupPlan(
                name=names[component],
                component=component,
                min_member=total,
                parent=names[parent] if parent is not None else None,
                topology=_topology(sub_group.topology, where),
            )
        )
    if not listed:
        keying = Keying(definition.name, PodGroupMember(component_name=summary.root), None, None, None, None)
        minimum, desired = builder.counts(keying, None)
    memberships: list[PodMembership] = []
    members_of: dict[str, list[str]] = {group.name: [] for group in sub_groups}
    if pods is not None:
        for pod in pods:
            membership = _place_native(
                builder, listed=listed, names=names, pod=pod, gang=name, pod_group=definition.name
            )
            memberships.append(membership)
            for group_name in membership.sub_groups:
                members_of[group_name].append(membership.name)
    roles = make_roles(builder, minimum, desired)
    top_level = [group for group in sub_groups if group.parent is None]
    gang = Gang(
        name=name,
        pod_group=definition.name,
        members=tuple(component for component, _ in listed) or (summary.root,),
        min_member=sum(minimum.values()),
        roles=roles,
        min_resources=min_resources_of(roles),
        topology=topology,
        sub_groups=tuple(
            SubGroupPlan(
                group.name,
                group.component,
                group.min_member,
                group.parent,
                group.topology,
                tuple(members_of[group.name]),
            )
            for group in sub_groups
        ),
        min_sub_group=len(top_level) if sub_groups else None,
        pods=tuple(membership.name for membership in memberships),
        template_name=join_name([definition.name]) or "podgroup",
    )
    return [gang], memberships


def _place_native(
    builder: Builder,
    *,
    listed: list[tuple[str, Any]],
    names: Mapping[str, str],
    pod: Mapping[str, Any],
    gang: str,
    pod_group: str,
) -> PodMembership:
    summary = builder.summary
    name, namespace = pod_identity(pod)
    query = PodQuerier(pod, policy=builder.resolution.policy)
    problems: list[str] = []
    component: str | None = None
    instance: str | None = None
    try:
        component = infer_pod_component(query, summary)
        instance = infer_pod_component_instance(query, component, builder.resolution)
        if instance is None:
            instance = ""
    except (GangError, ComponentNotFound) as error:
        problems.append(str(error))
    groups: list[str] = []
    for listed_component, _ in listed:
        for candidate in [listed_component, *summary.descendants(listed_component)]:
            selector = summary.definitions[candidate].pod_selector
            if selector is None:
                continue
            try:
                if query.matches_component_type(selector.component_type_selector):
                    groups.append(names[listed_component])
                    break
            except SelectorError as error:
                problems.append(f"component {candidate}: {error}")
    return PodMembership(
        name,
        namespace,
        component,
        instance,
        gang=gang,
        pod_group=pod_group,
        member=component,
        sub_groups=tuple(_by_depth(groups, listed, names, summary)),
        error="; ".join(problems) or None,
    )


def _by_depth(
    groups: list[str], listed: list[tuple[str, Any]], names: Mapping[str, str], summary: StructureSummary
) -> list[str]:
    """Sub-group names ordered shallowest first, so the last is the pod's own (deepest) sub-group."""
    depth = {names[component]: len(summary.ancestors(component)) for component, _ in listed}
    return sorted(dict.fromkeys(groups), key=lambda group: depth.get(group, 0))
