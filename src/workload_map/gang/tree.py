"""The gangs of the KAI-native `podGroup` format, as trees: gang → sub-groups (nested where the workload nests) →
leaves, each with its minimum, from the definition and its `workloadmap.io/gang` annotation.

Without the annotation this is upstream's reading (karta-spec §13.2): one gang, a sub-group per listed component
with its subtree scale as minimum, the root requiring every top-level sub-group. The annotation
(`workload_map.model.gang_rules`) adds what a start-up order needs: minimums from the framework's own fields, a
sub-group per instance and a leaf per replica, members the controller creates later (`deferred`: not required
until their pods exist), a root minimum, and one gang per replica of a component. A tree that could never be met
is refused (`UnsatisfiableGang`) with the reason. See docs/gang.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from workload_map.gang.builder import Builder, make_roles, min_resources_of, pod_identity
from workload_map.gang.errors import GangError, MissingScaleError, UnsatisfiableGang
from workload_map.gang.keys import Keying
from workload_map.gang.names import is_dns1123_label, join_name, to_dns1123_label
from workload_map.gang.scale import Role
from workload_map.gang.summary import StructureSummary, infer_pod_component, infer_pod_component_instance
from workload_map.gang.types import Gang, GangRole, PodMembership, SubGroupPlan, Topology
from workload_map.jq import JqError
from workload_map.model import PodGroupMember, ReplicaSelector, TopologyConstraint
from workload_map.model.gang_rules import GANG_RULES, GangRules, SubGroupRule, gang_rule_problems, gang_rules
from workload_map.pods import PodQuerier, SelectorError
from workload_map.resolve import ComponentNotFound, ExtractionError
from workload_map.resolve.replicas import desired_replicas, min_replicas

__all__ = ["build"]

_ANNOTATION = f'metadata.annotations["{GANG_RULES}"]'


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


@dataclass
class _Node:
    """One sub-group while the tree is built (the same skeleton serves every gang of a gang-per-replica plan)."""

    name: str
    component: str
    instance: str | None
    replica: str | None
    parent: str | None
    min_member: int | None
    min_sub_group: int | None
    explicit_min_sub_group: bool
    count: int
    minimum: dict[Role, int]
    desired: dict[Role, int]
    deferred: str | None
    topology: Topology | None
    after: str | None = None
    first: int = 0  # a layout leaf: the index (`layoutIndex`) of its first pod in its component
    key: str | None = None  # a layout leaf: the `layoutKey` of its pods
    gang: str = ""  # a layout node: the gang it is in, "" the gang itself (else `<gang>-<this>`)
    children: list[str] = field(default_factory=list)
    pods: list[str] = field(default_factory=list)


@dataclass
class _Listed:
    """A listed sub-group component: its rule, topology and the nodes it made (one, one per instance, ...)."""

    component: str
    rule: SubGroupRule
    topology: Topology | None
    nodes: list[str] = field(default_factory=list)
    by_instance: dict[str, str] = field(default_factory=dict)  # instance id -> node (perInstance)


class _Tree:
    """Builds the skeleton of the sub-groups once, then one gang per gang key with its pods."""

    def __init__(self, builder: Builder, rules: GangRules, *, annotated: bool) -> None:
        self.builder = builder
        self.annotated = annotated
        self.summary: StructureSummary = builder.summary
        self.rules = rules
        gang = self.summary.gang
        assert gang is not None and gang.pod_group is not None
        self.definition = gang.pod_group
        self.replicated = rules.gang_per_replica_of
        self.replica_selector = self._replica_selector()
        self.listed: list[_Listed] = []
        self.nodes: dict[str, _Node] = {}
        self.layout_leaves: dict[str, list[str]] | None = None  # component -> its leaves, when a layout is used
        self.layout_gangs: list[str] = [""]  # the layout's gangs per gang key: "" itself, then each entry's `gang`
        self.key_gang: dict[str | None, str] = {}  # gang key -> its layout gang (absent: "", the gang itself)
        self._role_cache: dict[tuple[Any, Any], tuple[GangRole, ...]] = {}

    # -- evaluation of the annotation's expressions on the workload

    def _values(self, expression: str | None, count: int, where: str) -> list[Any]:
        """One value per instance (`count` of them): the outputs of `expression`, or its single output for all."""
        if expression is None:
            return [None] * count
        try:
            outputs = self.builder.resolution.evaluate(expression, field=where)
        except ExtractionError as error:
            raise GangError(f"{where}: {error.message}") from error
        if len(outputs) == 1:
            return outputs * count
        if len(outputs) != count:
            raise GangError(
                f"{where}: gave {len(outputs)} outputs; expected one, or one per instance ({count}), in instance order"
            )
        return outputs

    @staticmethod
    def _count(value: Any, where: str, *, nullable: bool = True) -> int | None:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < 0:
            raise GangError(f"{where}: expected a count (a whole number >= 0), got {value!r}")
        return int(value)

    @staticmethod
    def _reason(value: Any, where: str) -> str | None:
        if value is None or value is False:
            return None
        if isinstance(value, str) and value:
            return value
        raise GangError(f"{where}: expected null or a string saying why the pods are created later, got {value!r}")

    def _replica_selector(self) -> ReplicaSelector | None:
        if self.replicated is None:
            return None
        definition = self.summary.definitions.get(self.replicated)
        selector = definition.pod_selector if definition is not None else None
        if selector is None or selector.replica_selector is None:
            raise GangError(
                f"{_ANNOTATION}.gangPerReplicaOf: component {self.replicated} has no podSelector.replicaSelector"
            )
        return selector.replica_selector

    # -- the skeleton

    def gang_keys(self) -> list[str | None]:
        """One gang per replica of the replicated component (from its scale), else one gang (with `gangKey`, the
        pods' values name the gangs)."""
        if self.replicated is None:
            return self.with_layout_gangs([None])
        try:
            scales = self.builder.resolution.component(self.replicated).require_scales()
        except (ExtractionError, ComponentNotFound) as error:
            raise GangError(f"{_ANNOTATION}.gangPerReplicaOf: cannot read the replicas of {self.replicated}") from error
        count = sum(desired_replicas(scale) for scale in (scales or {}).values()) if scales else 1
        return self.with_layout_gangs([str(index) for index in range(count)])

    def with_layout_gangs(self, keys: Sequence[str | None]) -> list[str | None]:
        """Each gang key followed by the layout's other gangs under it (`<key>-<gang>`: Grove's scaled PodGangs)."""
        out: list[str | None] = []
        for key in keys:
            for gang in self.layout_gangs:
                out.append(self.layout_key(key, gang))
        return out

    def layout_key(self, key: str | None, gang: str) -> str | None:
        """The gang key of a layout gang under `key` (itself for ""), remembered with its layout gang."""
        if not gang:
            return key
        composed = f"{key}-{gang}" if key is not None else gang
        self.key_gang[composed] = gang
        return composed

    def build_skeleton(self) -> None:
        names: set[str] = set()
        for index, sub_group in enumerate(self.definition.sub_groups or ()):
            component = sub_group.component_name
            where = f"gangScheduling.podGroup.subGroups[{index}]"
            if not component:
                raise GangError(f"{where}: subgroup component name cannot be empty")
            if component not in self.summary.definitions:
                raise GangError(
                    f"{where}: subgroup component {component} not found; components: "
                    f"{', '.join(self.summary.definitions)}"
                )
            rule = self.rules.sub_groups.get(component) or SubGroupRule(component)
            self.listed.append(_Listed(component, rule, _topology(sub_group.topology, where)))
        if self._build_layout():
            return
        for listed in self.listed:  # once every listed component is known (nesting depends on it)
            self._nodes_of(listed, names)
        self._nest()

    # -- a layout: the tree written out by the definition (segments of a component's pods)

    def _build_layout(self) -> bool:
        """The annotation's `layout`, when it gives a tree: its nodes are the sub-groups (they replace the listed
        components' own); False when it is unset or null."""
        if self.rules.layout is None:
            return False
        where = f"{_ANNOTATION}.layout"
        value = self._values(self.rules.layout, 1, where)[0]
        if value is None:
            return False
        if not isinstance(value, list) or not value:
            raise GangError(f"{where}: expected null or a non-empty list of sub-groups, got {value!r}")
        written: list[tuple[str, Mapping[str, Any]]] = []
        for index, entry in enumerate(value):
            here = f"{where}[{index}]"
            if not isinstance(entry, Mapping):
                raise GangError(f"{here}: expected a mapping (name, parent, component, minMember, ...), got {entry!r}")
            unknown = sorted(set(entry) - _LAYOUT_KEYS)
            if unknown:
                raise GangError(f"{here}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_LAYOUT_KEYS))})")
            for copy_here, copy in self._copies(entry, here):
                written.extend(self._segments(copy, copy_here))
        keyed: list[tuple[str, Mapping[str, Any], str]] = []  # (where, entry, the node's key in self.nodes)
        for here, entry in written:
            name = entry.get("name")
            if not isinstance(name, str) or not is_dns1123_label(name):
                raise GangError(f"{here}.name: expected a sub-group name (a DNS label), got {name!r}")
            node = self._layout_node(name, entry, here)
            key = _node_key(node.gang, name)
            if key in self.nodes:
                raise GangError(f"{here}.name: sub-group {name} is listed twice in its gang")
            self.nodes[key] = node
            keyed.append((here, entry, key))
        for here, _, key in keyed:
            node = self.nodes[key]
            if node.parent is None:
                continue
            parent = self.nodes.get(_node_key(node.gang, node.parent))
            if parent is None or parent is node:
                raise GangError(f"{here}.parent: {node.parent!r} is not another sub-group of the layout in its gang")
            parent.children.append(node.name)
        leaves: dict[str, list[str]] = {}
        for here, entry, key in keyed:
            node = self.nodes[key]
            if node.children:
                if node.minimum or entry.get("minMember") is not None:
                    raise GangError(f"{here}: sub-group {node.name} has sub-groups under it: it takes minSubGroup")
                node.min_member = None
                if node.min_sub_group is None:
                    node.min_sub_group = len(node.children)
                node.component = _common(
                    [self.nodes[_node_key(node.gang, child)].component for child in node.children], self.summary.root
                )
                continue
            if not node.minimum:
                raise GangError(f"{here}: leaf {node.name} needs a component and a count (the pods it holds)")
            leaves.setdefault(node.component, []).append(key)
        self.layout_leaves = leaves
        # the gang itself ("") only when the layout puts sub-groups in it (an LLMInferenceService has only the gangs
        # of its groups)
        self.layout_gangs = list(dict.fromkeys(node.gang for node in self.nodes.values()))
        return True

    def _copies(self, entry: Mapping[str, Any], here: str) -> list[tuple[str, Mapping[str, Any]]]:
        """A layout entry with `each: n`: n copies, k = eachFrom ... eachFrom + n - 1; `{i}` in its name, parent,
        gang and key is k, `{n}` the copy's position (0 ... n - 1). Without `each`, the entry itself."""
        count = self._count(entry.get("each"), f"{here}.each")
        if count is None:
            return [(here, entry)]
        start = self._count(entry.get("eachFrom"), f"{here}.eachFrom") or 0
        if count > _MAX_SEGMENTS:
            raise GangError(f"{here}.each: {count} copies; at most {_MAX_SEGMENTS}")
        copies: list[tuple[str, Mapping[str, Any]]] = []
        for position in range(count):
            copy = {key: value for key, value in entry.items() if key not in ("each", "eachFrom")}
            for key in _EACH_TEXT:
                value = copy.get(key)
                if isinstance(value, str):
                    copy[key] = value.replace("{i}", str(start + position)).replace("{n}", str(position))
            copies.append((f"{here} (copy {position})", copy))
        return copies

    def _segments(self, entry: Mapping[str, Any], here: str) -> list[tuple[str, Mapping[str, Any]]]:
        """A layout entry with `segments`: its pods, in index order, cut into leaves of that many pods (the last
        shorter), `<name>-<k>`; the first ceil(minMember / segments) are required whole, the others not at all (as
        KAI cuts a PyTorchJob's workers). The leaves go under the entry (`segmentParent`, default) or in its place."""
        size = self._count(entry.get("segments"), f"{here}.segments")
        if size is None:
            return [(here, entry)]
        name = entry.get("name")
        if size < 1:
            raise GangError(f"{here}.segments: expected at least 1 pod per segment, got {size}")
        if not isinstance(name, str) or not name:
            raise GangError(f"{here}.name: expected a sub-group name (a DNS label), got {name!r}")
        total = self._count(entry.get("count"), f"{here}.count", nullable=False) or 0
        minimum = self._count(entry.get("minMember"), f"{here}.minMember")
        minimum = total if minimum is None else minimum
        first = self._count(entry.get("first"), f"{here}.first") or 0
        start = self._count(entry.get("segmentStart"), f"{here}.segmentStart") or 0
        pieces = -(-total // size)
        if pieces == 0:
            raise GangError(f"{here}: sub-group {name} has no pods to cut into segments (count 0)")
        if pieces > _MAX_SEGMENTS:
            raise GangError(f"{here}: {pieces} segments of {name}; at most {_MAX_SEGMENTS}")
        required = -(-minimum // size)
        under_entry = entry.get("segmentParent", True)
        if not isinstance(under_entry, bool):
            raise GangError(f"{here}.segmentParent: expected true or false, got {under_entry!r}")
        parent = entry.get("parent")
        out: list[tuple[str, Mapping[str, Any]]] = []
        if under_entry:
            out.append(
                (
                    here,
                    {
                        "name": name,
                        "parent": parent,
                        "minSubGroup": entry.get("minSubGroup"),
                        "gang": entry.get("gang"),
                    },
                )
            )
            parent = name
        shared = {key: value for key, value in entry.items() if key in _SEGMENT_SHARED}
        for piece in range(pieces):
            pods = min(size, total - piece * size)
            out.append(
                (
                    f"{here} (segment {start + piece})",
                    {
                        **shared,
                        "name": f"{name}-{start + piece}",
                        "parent": parent,
                        "first": first + piece * size,
                        "count": pods,
                        "minMember": pods if piece < required else 0,
                    },
                )
            )
        return out

    def _layout_node(self, name: str, entry: Mapping[str, Any], here: str) -> _Node:
        parent = entry.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise GangError(f"{here}.parent: expected a sub-group name, got {parent!r}")
        min_sub_group = self._count(entry.get("minSubGroup"), f"{here}.minSubGroup")
        component = entry.get("component")
        instance = entry.get("instance")
        if instance is not None and not isinstance(instance, str):
            raise GangError(f"{here}.instance: expected an instance id (a string), got {instance!r}")
        minimum: dict[Role, int] = {}
        desired: dict[Role, int] = {}
        count = 0
        min_member: int | None = None
        if component is not None:
            if not isinstance(component, str) or component not in self.summary.definitions:
                raise GangError(
                    f"{here}.component: {component!r} is not a component; components: "
                    f"{', '.join(self.summary.definitions)}"
                )
            count = self._count(entry.get("count"), f"{here}.count", nullable=False) or 0
            min_member = self._count(entry.get("minMember"), f"{here}.minMember")
            min_member = count if min_member is None else min_member
            role = self._layout_role(component, instance, here)
            minimum, desired = {role: min_member}, {role: count}
        elif entry.get("count") is not None:
            raise GangError(f"{here}: count needs component (whose pods the leaf holds)")
        after = entry.get("after")
        if after is not None and (not isinstance(after, str) or after not in self.summary.definitions):
            raise GangError(f"{here}.after: expected a component name, got {after!r}")
        topology = entry.get("topology")
        return _Node(
            name=name,
            component=component or self.summary.root,
            instance=instance,
            replica=None,
            parent=parent,
            min_member=min_member,
            min_sub_group=min_sub_group,
            explicit_min_sub_group=min_sub_group is not None,
            count=count,
            minimum=minimum,
            desired=desired,
            deferred=self._reason(entry.get("deferred"), f"{here}.deferred"),
            topology=_layout_topology(topology, f"{here}.topology") if topology is not None else None,
            after=after,
            first=self._count(entry.get("first"), f"{here}.first") or 0,
            key=self._text(entry.get("key"), f"{here}.key"),
            gang=self._text(entry.get("gang"), f"{here}.gang") or "",
        )

    @staticmethod
    def _text(value: Any, where: str) -> str | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise GangError(f"{where}: expected a string, got {value!r}")
        return str(value)

    def _keying(self, component: str) -> Keying:
        """How the pods of `component` (all its instances, no gang key of their own) are keyed into the tree."""
        return Keying(
            self.definition.name,
            PodGroupMember(component_name=component),
            None,
            self.replicated,
            None,
            self.replica_selector,
        )

    def _layout_role(self, component: str, instance: str | None, here: str) -> Role:
        """The (component, instance) a layout leaf's pods are: the component's one role, or the named instance's."""
        keying = self._keying(component)
        _, desired = self.builder.counts(keying, instance)
        roles = [role for role in desired if role[0] == component and (instance is None or role[1] == instance)]
        if len(roles) != 1:
            what = f"instance {instance} of {component}" if instance is not None else f"component {component}"
            found = ", ".join(role[1] for role in roles) or "none"
            raise GangError(f"{here}: {what} has {len(roles)} pod roles ({found}): name one with instance")
        return roles[0]

    def _label(self, text: str, what: str) -> str:
        label = text if is_dns1123_label(text) else to_dns1123_label(text)
        if label != text.lower():  # lower-casing is routine (Dynamo's service names); anything more is told
            self.builder.note(f"sub-group of {what} is named {label} (KAI requires a DNS label)")
        return label or "subgroup"

    def _nodes_of(self, listed: _Listed, names: set[str]) -> None:
        component, rule = listed.component, listed.rule
        here = f"{_ANNOTATION}.subGroups.{component}"
        instances: list[str | None] = [None]
        if rule.per_instance:
            try:
                instances = list(self.builder.resolution.component(component).require_instance_ids())
            except ExtractionError as error:
                raise GangError(f"failed to get instance ids of component {component}: {error.message}") from error
        count = len(instances)
        minimums = self._values(rule.min_member, count, f"{here}.minMember")
        replicas = self._values(rule.replicas, count, f"{here}.replicas")
        leaves_required = self._values(rule.min_sub_group, count, f"{here}.minSubGroup")
        deferred = self._values(rule.deferred, count, f"{here}.deferred")
        keying = self._keying(component)
        for position, instance in enumerate(instances):
            if self._own_pods_only(component):
                minimum, desired = self._own_counts(component, instance)
            else:
                minimum, desired = self.builder.counts(keying, instance)
            total_min, total_desired = sum(minimum.values()), sum(desired.values())
            explicit = self._count(minimums[position], f"{here}.minMember")
            if explicit is None and total_min == 0 and total_desired == 0 and (instance is not None or self.annotated):
                # Nothing to wait for (a PyTorchJob without a master, a Ray group scaled to 0): no sub-group, as
                # KAI makes none; upstream's reading (no annotation) still calls a whole component without scale
                # an error.
                what = f"component {component}" + (f" instance {instance}" if instance is not None else "")
                self.builder.note(f"{what} asks for no pods: no sub-group")
                continue
            reason = self._reason(deferred[position], f"{here}.deferred")
            base = rule.name or (instance if instance else component)
            name = self._label(base, f"component {component}" + (f" instance {instance}" if instance else ""))
            while name in names:
                name = join_name([name, "x"])
            names.add(name)
            if instance is not None:
                listed.by_instance[instance] = name
            listed.nodes.append(name)
            leaves = self._count(replicas[position], f"{here}.replicas")
            if leaves is None:
                if explicit is None and total_min == 0 and rule.min_member is None:
                    raise MissingScaleError(component)
                self.nodes[name] = _Node(
                    name=name,
                    component=component,
                    instance=instance,
                    replica=None,
                    parent=None,
                    min_member=total_min if explicit is None else explicit,
                    min_sub_group=None,
                    explicit_min_sub_group=False,
                    count=total_desired,
                    minimum=minimum,
                    desired=desired,
                    deferred=reason,
                    topology=listed.topology,
                    after=rule.after,
                )
                continue
            required = self._count(leaves_required[position], f"{here}.minSubGroup")
            self.nodes[name] = _Node(
                name=name,
                component=component,
                instance=instance,
                replica=None,
                parent=None,
                min_member=None,
                min_sub_group=leaves if required is None else required,
                explicit_min_sub_group=required is not None,
                count=total_desired,
                minimum={},
                desired={},
                deferred=reason,
                topology=None,
                after=rule.after,
            )
            for replica in range(leaves):
                leaf_min = {role: value // leaves for role, value in minimum.items()}
                leaf_desired = {role: value // leaves for role, value in desired.items()}
                leaf = join_name([name, "replica", str(replica)]) or f"replica-{replica}"
                names.add(leaf)
                self.nodes[leaf] = _Node(
                    name=leaf,
                    component=component,
                    instance=instance,
                    replica=str(replica),
                    parent=name,
                    min_member=sum(leaf_min.values()) if explicit is None else explicit,
                    min_sub_group=None,
                    explicit_min_sub_group=False,
                    count=sum(leaf_desired.values()),
                    minimum=leaf_min,
                    desired=leaf_desired,
                    deferred=None,
                    topology=listed.topology,
                )
                self.nodes[name].children.append(leaf)

    def _own_pods_only(self, component: str) -> bool:
        """A listed component with a pod template of its own and listed descendants: its sub-group holds its own
        pods, theirs are sub-groups beside it."""
        if not self.summary.definitions[component].has_pod_definition:
            return False
        listed = {entry.component for entry in self.listed}
        return any(descendant in listed for descendant in self.summary.descendants(component))

    def _own_counts(self, component: str, instance: str | None) -> tuple[dict[Role, int], dict[Role, int]]:
        """(min, desired) of the component's own pods only: one replica per gang when it is the replicated one."""
        try:
            scales = self.builder.resolution.component(component).require_scales() or {}
        except ExtractionError as error:
            raise GangError(f"failed to get scale of component {component}: {error.message}") from error
        chosen = {key: scale for key, scale in scales.items() if instance is None or key == instance}
        if component == self.replicated:
            return {(component, key): 1 for key in chosen}, {(component, key): 1 for key in chosen}
        return (
            {(component, key): min_replicas(scale) for key, scale in chosen.items()},
            {(component, key): desired_replicas(scale) for key, scale in chosen.items()},
        )

    def _nest(self) -> None:
        """Each listed component's nodes go under the nearest listed ancestor's node; that node becomes a parent
        (its minimum is then its children), so every pod under it must be in a nested sub-group."""
        by_component = {listed.component: listed for listed in self.listed}
        for listed in self.listed:
            ancestor = next((a for a in self.summary.ancestors(listed.component) if a in by_component), None)
            if ancestor is None or self._own_pods_only(ancestor):
                continue  # a listed ancestor with pods of its own (a NIMService's leader) is a sibling sub-group
            above = by_component[ancestor]
            if len(above.nodes) != 1:
                raise GangError(
                    f"sub-group {listed.component} nests under {ancestor}, which has a sub-group per instance: "
                    "only a single sub-group can hold nested ones"
                )
            parent = self.nodes[above.nodes[0]]
            if any(self.nodes[child].replica is not None for child in parent.children):
                raise GangError(f"sub-group {listed.component} nests under {ancestor}, which has a leaf per replica")
            for name in listed.nodes:
                self.nodes[name].parent = parent.name
                parent.children.append(name)
        for listed in self.listed:
            for name in listed.nodes:
                node = self.nodes[name]
                if node.replica is not None or not node.children or node.min_sub_group is not None:
                    continue
                covered = {self.nodes[child].component for child in node.children}
                descendants = [node.component, *self.summary.descendants(node.component)]
                uncovered = [
                    component
                    for component in descendants
                    if self.summary.definitions[component].has_pod_definition
                    and not any(c == component or component in self.summary.descendants(c) for c in covered)
                ]
                if uncovered:
                    raise GangError(
                        f"sub-group {node.name} holds pods of {', '.join(uncovered)} that no nested sub-group "
                        "covers: list them in gangScheduling.podGroup.subGroups too"
                    )
                node.min_sub_group = len(node.children)
                node.min_member = None
                node.explicit_min_sub_group = False

    # -- one gang

    def gang(
        self,
        key: str | None,
        *,
        base: str,
        placed: Mapping[str, list[str]],
        members_seen: Sequence[str],
        gang_topology: Topology | None,
        scheduled: frozenset[str] = frozenset(),
    ) -> tuple[Gang, list[str]]:
        """The gang of one gang key, with the pods placed in each node; also the notes about deferred nodes."""
        layout_gang = self.key_gang.get(key, "")
        nodes = {  # by name: names are unique in a gang (self.nodes keys those of a layout's other gangs apart)
            node.name: _copy(node, placed.get(key, [])) for key, node in self.nodes.items() if node.gang == layout_gang
        }
        deferred_notes: list[str] = []
        active = {name: self._active(nodes, name, scheduled) for name in nodes}
        for name, node in nodes.items():
            if node.deferred is not None and not active[name]:
                deferred_notes.append(f"sub-group {name} is deferred: {node.deferred}; not required until it exists")
        top = [name for name, node in nodes.items() if node.parent is None]
        name = gang_name(base, self.definition.name, key)
        where = f"gang {name}"
        self._defaults(nodes, active)
        self._check(nodes, active, where)
        roles: list[GangRole] = []
        plans: list[SubGroupPlan] = []
        for node_name, node in nodes.items():
            leaf_roles: tuple[GangRole, ...] = ()
            if node.min_sub_group is None:
                leaf_roles = self._roles(node, required=active[node_name])
                roles.extend(leaf_roles)
            plans.append(
                SubGroupPlan(
                    name=node_name,
                    component=node.component,
                    min_member=node.min_member if node.min_sub_group is None else None,
                    min_sub_group=node.min_sub_group,
                    parent=node.parent,
                    instance=node.instance,
                    replica=node.replica,
                    count=node.count,
                    roles=leaf_roles,
                    deferred=node.deferred if not active[node_name] else None,
                    topology=node.topology,
                    pods=tuple(self._pods_under(nodes, node_name)),
                )
            )
        root_min = self._count(
            self._values(self.rules.min_member, 1, f"{_ANNOTATION}.minMember")[0], f"{_ANNOTATION}.minMember"
        )
        root_groups = self._count(
            self._values(self.rules.min_sub_group, 1, f"{_ANNOTATION}.minSubGroup")[0], f"{_ANNOTATION}.minSubGroup"
        )
        members = tuple(listed.component for listed in self.listed)
        if not nodes:
            keying = self._keying(self.summary.root)
            minimum, desired = self.builder.counts(keying, None)
            whole = make_roles(self.builder, minimum, desired)
            roles = list(whole)
            min_member = sum(minimum.values()) if root_min is None else root_min
            min_sub_group = None
            members = (self.summary.root,)
        else:
            active_top = [n for n in top if active[n]]
            if root_min is not None:
                # A root minimum counts every member; until a deferred one exists its pods are not waited for
                # (KAI leaves an MPIJob's delayed launcher out the same way).
                later = sum(
                    self._cost(nodes, n, None)
                    for n, node in nodes.items()
                    if not active[n] and (node.parent is None or active[node.parent])
                )  # the topmost deferred nodes, wherever they are (an LWS segment's workers are under segment-0)
                min_sub_group = None
                min_member = max(0, root_min - later)
                available = sum(self._available(nodes, n, active) for n in active_top)
                if min_member > available:
                    raise UnsatisfiableGang(
                        self._short(where, min_member, available, "pods", nodes=nodes, active=active)
                    )
            else:
                min_sub_group = len(active_top) if root_groups is None else root_groups
                if min_sub_group > len(active_top):
                    raise UnsatisfiableGang(
                        self._short(where, min_sub_group, len(active_top), "sub-groups", nodes=nodes, active=active)
                    )
                min_member = self._flat(nodes, active_top, min_sub_group, active)
        merged = _merge_roles(roles)
        gang = Gang(
            name=name,
            pod_group=self.definition.name,
            members=members,
            min_member=min_member,
            roles=merged,
            min_resources=min_resources_of(merged),
            replica=key,
            topology=gang_topology,
            sub_groups=tuple(plans),
            min_sub_group=min_sub_group,
            pods=tuple(members_seen),
            template_name=join_name([self.definition.name]) or "podgroup",
            split_keys=(),
        )
        return gang, deferred_notes

    def _active(self, nodes: Mapping[str, _Node], name: str, scheduled: frozenset[str] = frozenset()) -> bool:
        """Required now: not deferred, or deferred but with pods (anywhere under it) already there, or deferred
        `after` a sub-group whose pods are all scheduled; and under an active parent."""
        node = nodes[name]
        if (
            node.deferred is not None
            and not self._pods_under(nodes, name)
            and not self._after_met(nodes, node, scheduled)
        ):
            return False
        return node.parent is None or self._active(nodes, node.parent, scheduled)

    def _after_met(self, nodes: Mapping[str, _Node], node: _Node, scheduled: frozenset[str]) -> bool:
        if node.after is None:
            return False
        waited = [pod for other in nodes.values() if other.component == node.after for pod in other.pods]
        return bool(waited) and all(pod in scheduled for pod in waited)

    def _pods_under(self, nodes: Mapping[str, _Node], name: str) -> list[str]:
        node = nodes[name]
        found = list(node.pods)
        for child in node.children:
            found.extend(self._pods_under(nodes, child))
        return found

    @staticmethod
    def _defaults(nodes: Mapping[str, _Node], active: Mapping[str, bool]) -> None:
        """A parent's default minimum counts only the children that are required now."""
        for node in nodes.values():
            if node.min_sub_group is not None and not node.explicit_min_sub_group:
                node.min_sub_group = sum(1 for child in node.children if active[child])

    def _check(self, nodes: Mapping[str, _Node], active: Mapping[str, bool], where: str) -> None:
        for name, node in nodes.items():
            if not active[name]:
                continue
            if node.min_sub_group is not None:
                live = [child for child in node.children if active[child]]
                if node.min_sub_group > len(live):
                    raise UnsatisfiableGang(
                        self._short(
                            f"{where}: sub-group {name}",
                            node.min_sub_group,
                            len(live),
                            "sub-groups",
                            nodes=nodes,
                            active=active,
                        )
                    )
            elif node.min_member is not None and node.min_member > node.count:
                raise UnsatisfiableGang(
                    f"{where}: sub-group {name} requires {node.min_member} pods but the spec asks for {node.count}: "
                    "the gang can never form"
                )

    @staticmethod
    def _short(
        where: str, needed: int, available: int, what: str, *, nodes: Mapping[str, _Node], active: Mapping[str, bool]
    ) -> str:
        later = [f"{name} ({node.deferred})" for name, node in nodes.items() if node.deferred and not active[name]]
        if later:
            return (
                f"{where} requires {needed} {what}, but only {available} can exist before the members created later "
                f"are: {'; '.join(later)}. A member created only after another is ready cannot be required with it: "
                "the gang can never form"
            )
        return f"{where} requires {needed} {what}, but the spec asks for {available}: the gang can never form"

    def _available(self, nodes: Mapping[str, _Node], name: str, active: Mapping[str, bool]) -> int:
        node = nodes[name]
        if node.min_sub_group is None:
            return node.count
        return sum(self._available(nodes, child, active) for child in node.children if active[child])

    def _flat(
        self, nodes: Mapping[str, _Node], names: Sequence[str], required: int, active: Mapping[str, bool] | None
    ) -> int:
        """The fewest pods that satisfy `required` of these nodes (what a scheduler without sub-groups can ask)."""
        costs = sorted(self._cost(nodes, name, active) for name in names)
        return sum(costs[:required])

    def _cost(self, nodes: Mapping[str, _Node], name: str, active: Mapping[str, bool] | None) -> int:
        """The fewest pods that meet a node (`active` None: as if every member existed)."""
        node = nodes[name]
        if node.min_sub_group is None:
            return node.min_member or 0
        live = [child for child in node.children if active is None or active[child]]
        return self._flat(nodes, live, node.min_sub_group, active)

    def _roles(self, node: _Node, *, required: bool) -> tuple[GangRole, ...]:
        minimum = dict(node.minimum) if required else {role: 0 for role in node.minimum}
        explicit = required and node.min_member is not None and sum(minimum.values()) != node.min_member
        if explicit and node.min_member is not None and len(node.desired) == 1:
            (role,) = node.desired  # an explicit minimum of a one-role leaf is that role's
            minimum = {role: node.min_member}
        key = (tuple(minimum.items()), tuple(node.desired.items()))
        roles = self._role_cache.get(key)
        if roles is None:  # the leaves of one replicatedJob's Jobs have the same roles: made once
            roles = self._role_cache[key] = make_roles(self.builder, minimum, node.desired)
        return roles


_SEGMENT_SHARED = frozenset({"component", "instance", "deferred", "after", "topology", "key", "gang"})
_LAYOUT_KEYS = frozenset(
    {"name", "parent", "first", "count", "minMember", "minSubGroup", "segments", "segmentStart", "segmentParent"}
    | {"each", "eachFrom"}
    | _SEGMENT_SHARED
)
_EACH_TEXT = ("name", "parent", "gang", "key")
_MAX_SEGMENTS = 10_000  # KAI's own bound on the segments of one group


def _common(components: Sequence[str], root: str) -> str:
    """The component of a layout parent: its children's, when they share one, else the workload's root."""
    found = set(components)
    return components[0] if len(found) == 1 else root


def _layout_topology(value: Any, where: str) -> Topology:
    if not isinstance(value, Mapping):
        raise GangError(f"{where}: expected a mapping (topology, requiredTopologyLevel, preferredTopologyLevel)")
    found = _topology(
        TopologyConstraint(
            topology_name=str(value.get("topology") or ""),
            required_topology_level=str(value.get("requiredTopologyLevel") or ""),
            preferred_topology_level=str(value.get("preferredTopologyLevel") or ""),
        ),
        where,
    )
    assert found is not None  # a constraint was given
    return found


def _copy(node: _Node, pods: list[str]) -> _Node:
    """The skeleton's node for one gang: its own counts, children and pods (the skeleton serves every gang)."""
    return dataclasses.replace(
        node, minimum=dict(node.minimum), desired=dict(node.desired), children=list(node.children), pods=list(pods)
    )


def _merge_roles(roles: Iterable[GangRole]) -> tuple[GangRole, ...]:
    """The gang's roles: leaves of one (component, instance) summed (the leaves of its replicas)."""
    merged: dict[tuple[str, str], GangRole] = {}
    for role in roles:
        key = (role.component, role.instance)
        found = merged.get(key)
        if found is None:
            merged[key] = role
            continue
        merged[key] = GangRole(
            found.name,
            found.component,
            found.instance,
            found.min_count + role.min_count,
            found.count + role.count,
            found.requests,
            found.template,
        )
    return tuple(merged.values())


def build(
    builder: Builder, base: str, pods: Iterable[Mapping[str, Any]] | None
) -> tuple[list[Gang], list[PodMembership], str | None]:
    """The gangs and each pod's place; or, when the annotation's `noGang` says this object needs none, no gangs
    and that reason."""
    annotations = builder.resolution.karta.metadata.annotations if builder.resolution.karta.metadata else None
    problems = gang_rule_problems(annotations)
    if problems:
        raise GangError(f"{_ANNOTATION}: {problems[0]}")
    rules = gang_rules(annotations)
    tree = _Tree(builder, rules or GangRules(), annotated=rules is not None)
    if rules is not None and rules.no_gang is not None:
        where = f"{_ANNOTATION}.noGang"
        reason = tree._reason(tree._values(rules.no_gang, 1, where)[0], where)
        if reason is not None:
            return [], [_ungrouped(pod) for pod in pods or ()], reason
    summary = builder.summary
    assert summary.gang is not None and summary.gang.pod_group is not None
    gang_topology = _topology(summary.gang.pod_group.topology, "gangScheduling.podGroup")
    tree.build_skeleton()
    keys: list[str | None] = tree.gang_keys()
    placements: list[tuple[PodMembership, str | None, str | None]] = []
    scheduled: set[str] = set()
    if pods is not None:
        for pod in pods:
            placements.append(_place(tree, pod))
            spec = pod.get("spec")
            if isinstance(spec, Mapping) and spec.get("nodeName"):
                scheduled.add(pod_identity(pod)[0])
        seen: list[str] = [pod_key for _, pod_key, _ in placements if pod_key is not None]
        if tree.rules.gang_key is not None and seen:
            keys = list(dict.fromkeys(seen))  # the gangs are the values the pods carry
        for seen_key in seen:
            if seen_key not in keys and tree.replicated is not None:
                keys.append(seen_key)  # a replica the spec no longer asks for still has pods
    gangs: list[Gang] = []
    gang_of_key: dict[str | None, Gang] = {}
    by_key: dict[str | None, tuple[dict[str, list[str]], list[str]]] = {key: ({}, []) for key in keys}
    for membership, pod_key, node in placements:
        if pod_key not in by_key or not _is_placed(membership):
            continue
        placed_of, members_of = by_key[pod_key]
        members_of.append(membership.name)
        if node is not None:
            placed_of.setdefault(node, []).append(membership.name)
    empty: dict[str, tuple[Gang, list[str]]] = {}  # the gangs of one layout gang without pods are alike but for
    for key in keys:  # their name
        placed, members = by_key[key]
        layout_gang = tree.key_gang.get(key, "")
        if not members and layout_gang in empty:
            template, notes = empty[layout_gang]
            gang = replace(template, name=gang_name(base, tree.definition.name, key), replica=key)
        else:
            gang, notes = tree.gang(
                key,
                base=base,
                placed=placed,
                members_seen=members,
                gang_topology=gang_topology,
                scheduled=frozenset(scheduled),
            )
            if not members:
                empty[layout_gang] = (gang, notes)
        for note in notes:
            builder.note(note)
        gangs.append(gang)
        gang_of_key[key] = gang
    memberships: list[PodMembership] = []
    for membership, key, node in placements:
        found = gang_of_key.get(key)
        if found is None or not _is_placed(membership):
            memberships.append(membership)  # unplaced: its error says why
            continue
        memberships.append(
            PodMembership(
                membership.name,
                membership.namespace,
                membership.component,
                membership.instance,
                gang=found.name,
                pod_group=tree.definition.name,
                member=membership.component,
                keys=(key,) if key is not None else (),
                sub_groups=tuple(_chain(tree.nodes, node)) if node is not None else (),
            )
        )
    return gangs, memberships, None


def _ungrouped(pod: Mapping[str, Any]) -> PodMembership:
    name, namespace = pod_identity(pod)
    return PodMembership(name, namespace)


def _is_placed(membership: PodMembership) -> bool:
    """A pod is in its gang when it was read without error (its component, and the sub-group its component's
    rules call for: instance, replica)."""
    return membership.error is None


def gang_name(base: str, pod_group: str, key: str | None) -> str:
    """`<workload>[-<replica or key>]` as a DNS label (the pod group's name when the workload has none)."""
    return join_name([base, key or ""]) or join_name([pod_group, key or ""]) or "podgroup"


def _node_key(gang: str, name: str) -> str:
    """A node's key in the tree's nodes: its name, prefixed by its layout gang (names repeat between gangs)."""
    return f"{gang}/{name}" if gang else name


def _chain(nodes: Mapping[str, _Node], key: str) -> list[str]:
    """The names from the top sub-group down to the node of `key`."""
    chain: list[str] = []
    node: _Node | None = nodes[key]
    while node is not None:
        chain.append(node.name)
        node = nodes[_node_key(node.gang, node.parent)] if node.parent is not None else None
    return list(reversed(chain))


def _place(tree: _Tree, pod: Mapping[str, Any]) -> tuple[PodMembership, str | None, str | None]:
    """(membership draft, gang key, node) of one pod; a pod that matches no node (when there are sub-groups), or
    whose replica cannot be read, is unplaced: its membership carries the reason and no gang."""
    builder = tree.builder
    summary = tree.summary
    name, namespace = pod_identity(pod)
    where = f"{namespace}/{name}" if namespace else name
    query = PodQuerier(pod, policy=builder.resolution.policy)
    component: str | None = None
    instance: str | None = None
    key: str | None = None
    if tree.rules.gang_key is not None:
        try:
            key = query.single_string(tree.rules.gang_key, "gang key")
        except SelectorError as error:
            return PodMembership(name, namespace, error=f"pod {where}: {error}"), None, None
    try:
        component = infer_pod_component(query, summary)
        instance = infer_pod_component_instance(query, component, builder.resolution)
    except (GangError, ComponentNotFound) as error:
        if tree.replicated is None and component is None:
            # One gang holds every pod of the workload (KAI puts a RayJob's submitter in its PodGroup): a pod of
            # no component is in it, in no sub-group.
            tree.builder.note(f"pod {where} is of no component ({error}): in the gang, in no sub-group")
            return PodMembership(name, namespace), key, None
        return PodMembership(name, namespace, component, instance, error=str(error)), None, None
    if tree.replica_selector is not None:
        try:
            key = query.extract_replica_key(tree.replica_selector)
        except SelectorError as error:
            return (
                PodMembership(name, namespace, component, instance, error=f"pod {where}: {error}"),
                None,
                None,
            )
    layout_gang = ""
    if tree.layout_leaves is not None and tree.rules.layout_gang is not None:
        layout_gang, problem = _layout_gang_of(tree, query, where)
        if problem is not None:
            return PodMembership(name, namespace, component, instance, error=problem), None, None
        key = tree.layout_key(key, layout_gang)
    if not tree.listed and tree.layout_leaves is None:
        return PodMembership(name, namespace, component, instance), key, None
    node, problem = _node_of(tree, query, component, instance, where, layout_gang=layout_gang)
    return PodMembership(name, namespace, component, instance, error=problem), key, node


def _node_of(
    tree: _Tree, query: PodQuerier, component: str, instance: str | None, where: str, *, layout_gang: str = ""
) -> tuple[str | None, str | None]:
    """(the deepest node the pod falls in, None), or (None, why it falls in none)."""
    if tree.layout_leaves is not None:
        return _layout_leaf_of(tree, query, component, instance, where, layout_gang=layout_gang)
    summary = tree.summary
    deepest = sorted(tree.listed, key=lambda listed: -len(summary.ancestors(listed.component)))
    for listed in deepest:
        if component != listed.component and component not in summary.descendants(listed.component):
            continue
        if listed.rule.per_instance:
            if component != listed.component or not instance:
                return None, f"pod {where}: its instance of {listed.component} cannot be told (no sub-group takes it)"
            found = listed.by_instance.get(instance)
            if found is None:
                return None, f"pod {where}: instance {instance} of {listed.component} is not in the spec"
        elif listed.nodes:
            found = listed.nodes[0]
        else:  # the spec asks for no pods of it (scaled to 0): a pod left over is in the gang, in no sub-group
            return None, None
        node = tree.nodes[found]
        if listed.rule.replica_key is not None:
            try:
                replica = query.single_string(listed.rule.replica_key, "replica key")
            except SelectorError as error:
                return None, f"pod {where}: {error}"
            leaf = next((child for child in node.children if tree.nodes[child].replica == replica), None)
            if leaf is None:
                return (
                    None,
                    f"pod {where}: replica {replica} of {found} is not in the spec (its leaves: {len(node.children)})",
                )
            return leaf, None
        return found, None
    return None, None  # a pod of no listed component is in the gang, in no sub-group (as KAI places it)


def _layout_leaf_of(
    tree: _Tree, query: PodQuerier, component: str, instance: str | None, where: str, *, layout_gang: str
) -> tuple[str | None, str | None]:
    """The layout leaf of a pod (its key in the tree's nodes): of its gang, component and instance, the one whose
    key is the pod's `layoutKey` and whose index range holds its `layoutIndex`."""
    assert tree.layout_leaves is not None
    leaves = [
        name
        for name in tree.layout_leaves.get(component, [])
        if tree.nodes[name].gang == layout_gang
        and (tree.nodes[name].instance is None or tree.nodes[name].instance == instance)
    ]
    if tree.rules.layout_key is not None and any(tree.nodes[name].key is not None for name in leaves):
        try:
            key = query.single_string(tree.rules.layout_key, "layout key")
        except SelectorError as error:
            return None, f"pod {where}: {error}"
        leaves = [name for name in leaves if tree.nodes[name].key in (None, key)]
        if not leaves:
            return None, f"pod {where}: no sub-group of {component} has key {key!r} (the spec asks for fewer)"
    if not leaves:
        return None, None  # a pod of a component the layout does not split: in the gang, in no sub-group
    expression = tree.rules.layout_index
    if expression is None:
        if len(leaves) == 1:
            return leaves[0], None
        return None, f"pod {where}: {component} has {len(leaves)} sub-groups and the definition gives no layoutIndex"
    try:
        text = query.single_string(expression, "layout index")
    except SelectorError as error:
        return None, f"pod {where}: {error}"
    if not text.isdigit():
        return None, f"pod {where}: layout index {text!r} is not a whole number"
    index = int(text)
    for name in leaves:
        node = tree.nodes[name]
        if node.first <= index < node.first + node.count:
            return name, None
    return None, f"pod {where}: index {index} of {component} is in no sub-group (the spec asks for fewer pods)"


def _layout_gang_of(tree: _Tree, query: PodQuerier, where: str) -> tuple[str, str | None]:
    """(the layout gang of a pod, None): `layoutGang` gives null or "" for the gang itself, else another gang's
    name; or ("", why it cannot be told)."""
    assert tree.rules.layout_gang is not None
    try:
        outputs = query.evaluate(tree.rules.layout_gang)
    except JqError as error:
        return "", f"pod {where}: layout gang: {error.message}"
    if len(outputs) != 1 or not (outputs[0] is None or isinstance(outputs[0], str)):
        return "", f"pod {where}: layout gang: expected one string or null, got {outputs!r}"
    found = outputs[0] or ""
    if not found and "" not in tree.layout_gangs:
        return "", f"pod {where}: in none of the definition's gangs (its layoutGang is null)"
    if found not in tree.layout_gangs:
        known = ", ".join(gang or "(the gang itself)" for gang in tree.layout_gangs)
        return "", f"pod {where}: its gang {found} is not in the spec (gangs: {known})"
    return found, None
