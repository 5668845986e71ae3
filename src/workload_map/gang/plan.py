"""A scheduler-neutral gang plan for one workload: which gangs, their members, min members and resources.

    from workload_map.gang import plan

    gang_plan = plan(workload)                 # from the spec alone
    gang_plan = plan(workload, pods)           # and the gang of each (already scoped) pod
    for gang in gang_plan.gangs:
        print(gang.name, gang.min_member, gang.min_resources)

The plan is what every export (KAI, Volcano, coscheduling, Kueue, the Kubernetes Workload API) is written from; see
docs/gang.md for the rules (gang keying, naming, the per-replica scale rule) and docs/compatibility.md for where
they differ from upstream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Final

from workload_map.gang.errors import GangError, InstanceIdError, MissingScaleError, NoGangInstructions
from workload_map.gang.names import is_dns1123_label, join_name, to_dns1123_label
from workload_map.gang.scale import Role, ScaleMode, desired_replicas, eff_min, role_counts, scale_mode
from workload_map.gang.summary import (
    GangFormat,
    StructureSummary,
    infer_pod_component,
    infer_pod_component_instance,
    pod_group_keys,
    pod_grouping,
)
from workload_map.model import PodGroupMember, ReplicaSelector, TopologyConstraint
from workload_map.pods import (
    PodQuerier,
    QuantityError,
    ResourceList,
    ResourceSpecError,
    SelectorError,
    add,
    format_quantity,
    fragmented_requests,
    pod_requests,
    quantity_kind,
    scale,
)
from workload_map.resolve import ComponentNotFound, ExtractionError, InvalidObjectError, ObjectRef, Workload

__all__ = [
    "SCHEMA_VERSION",
    "Gang",
    "GangPlan",
    "GangRole",
    "PodMembership",
    "SubGroupPlan",
    "Topology",
    "format_resources",
    "plan",
]

SCHEMA_VERSION: Final = "workloadmap.io/gang/v1"
"""The `schemaVersion` of `GangPlan.to_dict()`."""


# --- the plan -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Topology:
    """A topology constraint: the topology (KAI Topology object) and the required / preferred level (node label)."""

    topology: str
    required_level: str | None = None
    preferred_level: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topology": self.topology}
        if self.required_level:
            out["requiredTopologyLevel"] = self.required_level
        if self.preferred_level:
            out["preferredTopologyLevel"] = self.preferred_level
        return out


@dataclass(frozen=True, slots=True)
class GangRole:
    """The pods of one (component, instance) in one gang: `min_count` of them are needed, `count` are asked for.

    `requests` are one pod's (None when they cannot be read, see the plan's notes); `template` is the pod template
    (PodTemplateSpec) the spec gives, or one built from a fragmented spec, or None.
    """

    name: str
    component: str
    instance: str
    min_count: int
    count: int
    requests: ResourceList | None = None
    template: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "component": self.component,
            "instance": self.instance,
            "minCount": self.min_count,
            "count": self.count,
        }
        if self.requests is not None:
            out["requests"] = format_resources(self.requests)
        return out


@dataclass(frozen=True, slots=True)
class SubGroupPlan:
    """A KAI-native sub-group: the pods of `component` (or any descendant), `min_member` of them required."""

    name: str
    component: str
    min_member: int
    parent: str | None = None
    topology: Topology | None = None
    pods: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "component": self.component, "minMember": self.min_member}
        if self.parent is not None:
            out["parent"] = self.parent
        if self.topology is not None:
            out["topology"] = self.topology.to_dict()
        out["pods"] = list(self.pods)
        return out


@dataclass(frozen=True, slots=True)
class Gang:
    """One gang: pods that must be scheduled together, `min_member` of them at least.

    - `pod_group`: the definition's pod group (alpha `podGroups[].name`, or `podGroup.name`);
    - `members`: the member components; `instance` / `replica`: the instance id / replica index the gang is keyed
      on (None when it is not keyed that way); `keys`: the group-key values seen on its pods (None offline);
    - `roles`: per (component, instance), the pods needed and asked for; `min_resources`: `min_count` x per-pod
      requests, summed over the roles;
    - `sub_groups`, `min_sub_group`, `topology`: the KAI-native format's structure (empty / None otherwise);
    - `pods`: the names of its pods (plans with pods only).
    """

    name: str
    pod_group: str
    members: tuple[str, ...]
    min_member: int
    roles: tuple[GangRole, ...] = ()
    min_resources: ResourceList = field(default_factory=dict)
    instance: str | None = None
    replica: str | None = None
    keys: tuple[str, ...] | None = None
    topology: Topology | None = None
    sub_groups: tuple[SubGroupPlan, ...] = ()
    min_sub_group: int | None = None
    pods: tuple[str, ...] = ()
    template_name: str = ""
    split_keys: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """The pods the spec asks for in this gang (the sum of the roles' counts)."""
        return sum(role.count for role in self.roles)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "podGroup": self.pod_group,
            "members": list(self.members),
            "instance": self.instance,
            "replica": self.replica,
        }
        if self.keys is not None:
            out["keys"] = list(self.keys)
        out["minMember"] = self.min_member
        out["count"] = self.count
        out["roles"] = [role.to_dict() for role in self.roles]
        out["minResources"] = format_resources(self.min_resources)
        if self.topology is not None:
            out["topology"] = self.topology.to_dict()
        if self.sub_groups:
            out["subGroups"] = [group.to_dict() for group in self.sub_groups]
            out["minSubGroup"] = self.min_sub_group
        out["pods"] = list(self.pods)
        return out


@dataclass(frozen=True, slots=True)
class PodMembership:
    """Where one pod falls: its leaf component and instance, its gang (None when it is in none: see `error`), the
    group-key values, and its KAI-native sub-groups (`sub_group` is the deepest)."""

    name: str
    namespace: str = ""
    component: str | None = None
    instance: str | None = None
    gang: str | None = None
    pod_group: str | None = None
    member: str | None = None
    keys: tuple[str, ...] = ()
    sub_groups: tuple[str, ...] = ()
    error: str | None = None

    @property
    def sub_group(self) -> str | None:
        return self.sub_groups[-1] if self.sub_groups else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "component": self.component,
            "instance": self.instance,
            "gang": self.gang,
            "podGroup": self.pod_group,
            "member": self.member,
            "keys": list(self.keys),
        }
        if self.sub_groups:
            out["subGroups"] = list(self.sub_groups)
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True, slots=True)
class GangPlan:
    """Every gang of one workload, scheduler-neutral; exports turn it into PodGroups, Workloads, PodSets."""

    workload: ObjectRef
    uid: str
    definition: str
    format: GangFormat
    scale_mode: ScaleMode
    gangs: tuple[Gang, ...]
    pods: tuple[PodMembership, ...] = ()
    notes: tuple[str, ...] = ()
    with_pods: bool = False

    def gang(self, name: str) -> Gang:
        for gang in self.gangs:
            if gang.name == name:
                return gang
        known = ", ".join(gang.name for gang in self.gangs) or "none"
        raise KeyError(f"no gang {name!r} in the plan of {self.workload.name!r}; gangs: {known}")

    @property
    def unplaced(self) -> list[PodMembership]:
        """Pods that are in no gang (with the reason in `error`)."""
        return [pod for pod in self.pods if pod.gang is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schemaVersion": SCHEMA_VERSION,
            "workload": self.workload.to_dict(),
            "definition": self.definition,
            "format": self.format,
            "scaleMode": self.scale_mode,
            "gangs": [gang.to_dict() for gang in self.gangs],
            "pods": [pod.to_dict() for pod in self.pods],
            "notes": list(self.notes),
        }


def format_resources(resources: Mapping[str, Fraction]) -> dict[str, str]:
    """Amounts as Kubernetes quantity strings (`"500m"`, `"16Gi"`, `"8"`), names sorted, zeros dropped."""
    return {name: format_quantity(amount, quantity_kind(name)) for name, amount in sorted(resources.items()) if amount}


# --- keying: what splits a member's pods into several gangs ------------------------------------------------------

_STEP: Final = re.compile(
    r"""\.(?P<field>[A-Za-z_][A-Za-z0-9_]*) | \.?"(?P<q>(?:[^"\\]|\\.)*)" | \.?\[\s*"(?P<key>(?:[^"\\]|\\.)*)"\s*\]
        | \.?\[\s*(?P<index>-?[0-9]+)\s*\]""",
    re.VERBOSE,
)


def canonical_path(expr: str) -> str:
    """A jq path in one spelling (`.metadata.labels.app` == `.metadata.labels["app"]`), for comparing paths; any
    other expression compares by its text without whitespace."""
    text = expr.strip()
    steps: list[str] = []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None:
            return "".join(text.split())
        position = match.end()
        if match.group("index") is not None:
            steps.append(f"[{int(match.group('index'))}]")
        else:
            steps.append(repr(match.group("field") or match.group("q") or match.group("key") or ""))
    return "".join(steps) if steps else "".join(text.split())


@dataclass(frozen=True, slots=True)
class _Keying:
    """How one member's pods split into gangs."""

    pod_group: str
    member: PodGroupMember
    instance_key: int | None  # index of the member's instance id among the group keys (a gang per instance)
    replica_component: str | None  # the component counted one replica per gang (a gang per replica)
    replica_key: int | None  # index of the replica index among the group keys (None: read from the selector)
    replica_selector: ReplicaSelector | None


def _keying(summary: StructureSummary, pod_group: str, member: PodGroupMember) -> _Keying:
    name = member.component_name
    paths = [canonical_path(path) for path in member.group_by_key_paths or ()]
    definition = summary.definitions[name]
    selector = definition.pod_selector
    instance_key: int | None = None
    if definition.instance_id_path and selector is not None and selector.component_instance_selector is not None:
        id_path = canonical_path(selector.component_instance_selector.id_path)
        if id_path in paths:
            instance_key = paths.index(id_path)
    replica_component: str | None = None
    replica_key: int | None = None
    replica_selector: ReplicaSelector | None = None
    for candidate in [name, *summary.ancestors(name), *summary.descendants(name)]:
        candidate_selector = summary.definitions[candidate].pod_selector
        found = candidate_selector.replica_selector if candidate_selector is not None else None
        if found is None or not found.key_path:
            continue
        key_path = canonical_path(found.key_path)
        if key_path in paths:
            replica_component, replica_key, replica_selector = candidate, paths.index(key_path), found
            break
        if candidate == name:  # the member itself is replicated: one gang per replica even without the key
            replica_component, replica_selector = candidate, found
            break
    return _Keying(pod_group, member, instance_key, replica_component, replica_key, replica_selector)


# --- building ------------------------------------------------------------------------------------------------------


class _Builder:
    """Everything computed once per plan: role counts per slot, templates and requests per role."""

    def __init__(self, workload: Workload, summary: StructureSummary) -> None:
        self.workload = workload
        self.summary = summary
        self.notes: list[str] = []
        self._roles: dict[Role, tuple[dict[str, Any] | None, ResourceList | None]] = {}
        self._counts: dict[tuple[str, str, str | None, str | None], tuple[dict[Role, int], dict[Role, int]]] = {}

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # -- counts

    def ancestor_factor(self, name: str, one_replica: str | None, pick: Any) -> int:
        """Replicas of the member's ancestors (each child counts per one replica of its parent); the ancestor a gang
        is keyed on by replica counts 1."""
        if not self.summary.has_scale_definition:
            return 1
        factor = 1
        for ancestor in self.summary.ancestors(name):
            if ancestor == one_replica:
                continue
            try:
                scales = self.workload.component(ancestor).scales
            except ExtractionError as error:
                raise GangError(f"failed to get scale of component {ancestor}: {error.message}") from error
            own = sum(pick(value) for value in (scales or {}).values())
            factor *= own if own > 0 else 1
        return factor

    def counts(self, keying: _Keying, instance: str | None) -> tuple[dict[Role, int], dict[Role, int]]:
        """(min counts, desired counts) per role for one gang of this member (the replicas of a gang share them)."""
        key = (keying.pod_group, keying.member.component_name, keying.replica_component, instance)
        found = self._counts.get(key)
        if found is None:
            found = self._compute_counts(keying, instance)
            self._counts[key] = found
        return found

    def _compute_counts(self, keying: _Keying, instance: str | None) -> tuple[dict[Role, int], dict[Role, int]]:
        name = keying.member.component_name
        one = keying.replica_component
        in_subtree = one is not None and (one == name or one in self.summary.descendants(name))
        one_replica = (one,) if in_subtree and one is not None else ()
        results: list[dict[Role, int]] = []
        for pick in (eff_min, desired_replicas):
            counts = role_counts(
                self.workload, self.summary, name, instance_id=instance, pick=pick, one_replica=one_replica
            )
            factor = self.ancestor_factor(name, one, pick)
            results.append({role: count * factor for role, count in counts.items()})
        return results[0], results[1]

    # -- roles

    def role(self, role: Role) -> tuple[dict[str, Any] | None, ResourceList | None]:
        """(pod template, one pod's requests) of a role, read once."""
        found = self._roles.get(role)
        if found is None:
            found = self._read_role(*role)
            self._roles[role] = found
        return found

    def _read_role(self, name: str, instance: str) -> tuple[dict[str, Any] | None, ResourceList | None]:
        component = self.workload.component(name)
        if not component.has_pod_definition:
            return None, None
        where = f"component {name}" + (f" instance {instance}" if instance else "")
        try:
            template = _template(component, instance)
        except ExtractionError as error:
            self.note(f"{where}: no pod template ({error.message}); its requests are not counted")
            return None, None
        if template is None:
            self.note(f"{where}: the spec has no pod template for this instance; its requests are not counted")
            return None, None
        try:
            fragments = component.fragmented_pod_specs
            if fragments is not None and instance in fragments and component.pod_template_specs is None:
                requests = fragmented_requests(fragments[instance].to_dict())
            else:
                spec = template.get("spec")
                requests = pod_requests(spec if isinstance(spec, Mapping) else {})
        except (QuantityError, ResourceSpecError, ExtractionError) as error:
            self.note(f"{where}: cannot read resource requests ({error}); they are not counted")
            return template, None
        return template, requests


def _template(component: Any, instance: str) -> dict[str, Any] | None:
    """The pod template of one instance: the spec's PodTemplateSpec, or {metadata, spec} from podSpecPath +
    metadataPath, or one built from a fragmented spec."""
    templates = component.pod_template_specs
    if templates is not None:
        found = templates.get(instance)
        return dict(found) if isinstance(found, dict) else None
    specs = component.pod_specs
    if specs is not None:
        spec = specs.get(instance)
        if spec is None:
            return None
        metadata = (component.pod_metadata or {}).get(instance) or {}
        return {"metadata": metadata, "spec": spec}
    fragments = component.fragmented_pod_specs
    if fragments is not None and instance in fragments:
        return _template_from_fragments(fragments[instance].to_dict())
    return None


def _template_from_fragments(fragment: Mapping[str, Any]) -> dict[str, Any]:
    containers = [dict(container) for container in fragment.get("containers") or () if isinstance(container, dict)]
    single = fragment.get("container")
    if isinstance(single, dict):
        containers.append(dict(single))
    if not containers:
        container: dict[str, Any] = {"name": "main"}
        if fragment.get("image"):
            container["image"] = fragment["image"]
        containers.append(container)
    if fragment.get("resources") and not any(container.get("resources") for container in containers):
        containers[0]["resources"] = fragment["resources"]
    if fragment.get("image") and not containers[0].get("image"):
        containers[0]["image"] = fragment["image"]
    spec: dict[str, Any] = {"containers": containers}
    for key in ("schedulerName", "priorityClassName", "resourceClaims"):
        if fragment.get(key):
            spec[key] = fragment[key]
    affinity = {key: fragment[key] for key in ("podAffinity", "nodeAffinity") if fragment.get(key)}
    if affinity:
        spec["affinity"] = affinity
    metadata = {key: fragment[key] for key in ("labels", "annotations") if fragment.get(key)}
    return {"metadata": metadata, "spec": spec}


def _role_name(component: str, instance: str) -> str:
    return join_name([component, instance]) or "main"


def _make_roles(builder: _Builder, minimum: Mapping[Role, int], desired: Mapping[Role, int]) -> tuple[GangRole, ...]:
    roles: list[GangRole] = []
    used: set[str] = set()
    for role in dict.fromkeys([*minimum, *desired]):
        min_count, count = minimum.get(role, 0), desired.get(role, 0)
        if min_count == 0 and count == 0:
            continue
        template, requests = builder.role(role)
        name = _role_name(*role)
        while name in used:
            name = join_name([name, "x"])
        used.add(name)
        roles.append(GangRole(name, role[0], role[1], min_count, max(count, min_count), requests, template))
    return tuple(roles)


def _min_resources(roles: Iterable[GangRole]) -> ResourceList:
    total: ResourceList = {}
    for role in roles:
        if role.requests is not None and role.min_count:
            total = add(total, scale(role.requests, role.min_count))
    return {name: amount for name, amount in total.items() if amount}


def _add(target: dict[Role, int], counts: Mapping[Role, int]) -> None:
    for role, count in counts.items():
        target[role] = target.get(role, 0) + count


# --- pods ------------------------------------------------------------------------------------------------------


def _pod_identity(pod: Mapping[str, Any]) -> tuple[str, str]:
    metadata = pod.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return (name if isinstance(name, str) else ""), (namespace if isinstance(namespace, str) else "")


# --- the plan ------------------------------------------------------------------------------------------------------

_Slot = tuple[str, str | None, str | None]  # (pod group, instance, replica)


@dataclass
class _Draft:
    slot: _Slot
    members: list[str]
    minimum: dict[Role, int]
    desired: dict[Role, int]
    error: str | None = None


def plan(
    workload: Workload,
    pods: Iterable[Mapping[str, Any]] | None = None,
    *,
    summary: StructureSummary | None = None,
) -> GangPlan:
    """The gang plan of `workload`, from the spec alone or, with `pods`, with each pod's gang.

    `pods` are taken as the workload's own (scope them first, e.g. with `workload_map.pods.attribute`). Raises
    `NoGangInstructions` when the definition has no gangScheduling, `GangError` for rules the definition breaks
    (a sub-group without scale, a bad topology, an unknown sub-group component).
    """
    summary = summary or StructureSummary(workload.definition)
    if summary.format is None:
        raise NoGangInstructions(workload.definition.name)
    builder = _Builder(workload, summary)
    ref = workload.object_ref
    base = ref.name or workload.definition.name
    uid = _uid(workload)
    if summary.format == "podGroup":
        gangs, memberships = _native(builder, base, pods)
    else:
        gangs, memberships = _alpha(builder, base, pods)
    return GangPlan(
        workload=ref,
        uid=uid,
        definition=workload.definition.name,
        format=summary.format,
        scale_mode=scale_mode(summary),
        gangs=tuple(gangs),
        pods=tuple(memberships),
        notes=tuple(builder.notes),
        with_pods=pods is not None,
    )


def _uid(workload: Workload) -> str:
    try:
        metadata = workload.to_object().get("metadata") or {}
    except InvalidObjectError:  # an object without name/kind still plans; it just has no uid
        return ""
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    return uid if isinstance(uid, str) else ""


# --- alpha `podGroups` -------------------------------------------------------------------------------------------


def _alpha(
    builder: _Builder, base: str, pods: Iterable[Mapping[str, Any]] | None
) -> tuple[list[Gang], list[PodMembership]]:
    summary = builder.summary
    assert summary.gang is not None and summary.gang.pod_groups
    definitions = summary.gang.pod_groups
    several = len(definitions) > 1
    keyings: dict[tuple[str, str], _Keying] = {}
    drafts: dict[_Slot, _Draft] = {}
    for group in definitions:
        for member in group.members:
            if member.component_name not in summary.definitions:
                raise GangError(
                    f"pod group {group.name}: member component {member.component_name} not found in the definition"
                )
            keying = _keying(summary, group.name, member)
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
            roles = _make_roles(builder, draft.minimum, draft.desired)
            made = shapes[shape] = (roles, _min_resources(roles))
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


def _slots(builder: _Builder, keying: _Keying) -> list[_Slot]:
    """The gangs a member has from the spec alone: one per instance when keyed per instance, one per replica when
    keyed per replica (from the replicated component's replica count), else one."""
    workload = builder.workload
    name = keying.member.component_name
    instances: list[str | None] = [None]
    if keying.instance_key is not None:
        try:
            instances = list(workload.component(name).instance_ids)
        except ExtractionError as error:
            raise GangError(f"failed to get instance ids of component {name}: {error.message}") from error
    replicas: list[str | None] = [None]
    replicated = keying.replica_component
    if replicated is not None:
        try:
            scales = workload.component(replicated).scales
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


def _draft_into(builder: _Builder, drafts: dict[_Slot, _Draft], keying: _Keying, slot: _Slot) -> None:
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
    _add(draft.minimum, minimum)
    _add(draft.desired, desired)


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
    builder: _Builder, keyings: Mapping[tuple[str, str], _Keying], pod: Mapping[str, Any]
) -> tuple[PodMembership, _Slot | None, tuple[str, ...] | None]:
    summary = builder.summary
    name, namespace = _pod_identity(pod)
    query = PodQuerier(pod, policy=builder.workload.policy)
    try:
        component = infer_pod_component(query, summary)
    except GangError as error:
        return PodMembership(name, namespace, error=str(error)), None, None
    instance: str | None = None
    problems: list[str] = []
    try:
        instance = infer_pod_component_instance(query, component, builder.workload)
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


# --- KAI-native `podGroup` --------------------------------------------------------------------------------------


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


def _native(
    builder: _Builder, base: str, pods: Iterable[Mapping[str, Any]] | None
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
        keying = _Keying(definition.name, PodGroupMember(component_name=component), None, None, None, None)
        group_min, group_desired = builder.counts(keying, None)
        total = sum(group_min.values())
        if total == 0:
            raise MissingScaleError(component)
        parent = next((ancestor for ancestor in summary.ancestors(component) if ancestor in listed_names), None)
        if parent is None:  # a top-level sub-group: its pods count towards the gang
            _add(minimum, group_min)
            _add(desired, group_desired)
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
        keying = _Keying(definition.name, PodGroupMember(component_name=summary.root), None, None, None, None)
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
    roles = _make_roles(builder, minimum, desired)
    top_level = [group for group in sub_groups if group.parent is None]
    gang = Gang(
        name=name,
        pod_group=definition.name,
        members=tuple(component for component, _ in listed) or (summary.root,),
        min_member=sum(minimum.values()),
        roles=roles,
        min_resources=_min_resources(roles),
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
    builder: _Builder,
    *,
    listed: list[tuple[str, Any]],
    names: Mapping[str, str],
    pod: Mapping[str, Any],
    gang: str,
    pod_group: str,
) -> PodMembership:
    summary = builder.summary
    name, namespace = _pod_identity(pod)
    query = PodQuerier(pod, policy=builder.workload.policy)
    problems: list[str] = []
    component: str | None = None
    instance: str | None = None
    try:
        component = infer_pod_component(query, summary)
        instance = infer_pod_component_instance(query, component, builder.workload)
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
