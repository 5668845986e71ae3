"""The structure summary of a definition and the per-pod questions KAI's pod grouper asks (karta-spec §12.2, §13).

    summary = StructureSummary(karta)
    summary.leaves                          # pod-bearing components, root first
    summary.candidates["worker"]            # (pod group, member) pairs that can gang a worker pod, own mentions first
    component = infer_pod_component(PodQuerier(pod), summary)
    grouping = pod_grouping(PodQuerier(pod), component, summary)   # effective component, pod group, member

Everything here follows upstream's rules exactly; the plan (`workload_map.gang.plan`) builds on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workload_map.errors import ArgumentTypeError
from workload_map.gang.errors import GangError, InvalidPodGroupName
from workload_map.gang.names import dns1123_subdomain_errors
from workload_map.model import ComponentDefinition, GangScheduling, Karta, PodGroupMember
from workload_map.pods import PodQuerier, SelectorError, go_string
from workload_map.resolve import ExtractionError, Resolution

__all__ = [
    "Candidate",
    "GangFormat",
    "Grouping",
    "StructureSummary",
    "infer_pod_component",
    "infer_pod_component_instance",
    "kai_pod_group_name",
    "pod_group_keys",
    "pod_grouping",
    "prioritize",
]

GangFormat = Literal["podGroups", "podGroup"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A (pod group, member) that may gang the pods of a component: the member names the component itself
    (`direct`) or one of its ancestors."""

    pod_group: str
    member: PodGroupMember
    direct: bool

    @property
    def component(self) -> str:
        return self.member.component_name


@dataclass(frozen=True, slots=True)
class Grouping:
    """Which gang a pod falls in: the effective component (the pod's own or the ancestor a member names), the
    alpha pod group's name and the member definition."""

    effective_component: str
    pod_group: str
    member: PodGroupMember


def _need(value: object, kind: type | tuple[type, ...], what: str, expected: str) -> None:
    if not isinstance(value, kind):
        raise ArgumentTypeError(what, expected, value)


def prioritize(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Stable sort: the component's own mentions first, then ancestors' mentions, declaration order kept within
    each class."""
    if isinstance(candidates, str | bytes | Mapping) or not isinstance(candidates, Iterable):
        raise ArgumentTypeError("candidates", "an iterable of Candidate", candidates)
    candidates = list(candidates)
    for candidate in candidates:
        if not isinstance(candidate, Candidate):
            raise ArgumentTypeError("candidates", "an iterable of Candidate", candidate)
    return sorted(candidates, key=lambda candidate: not candidate.direct)


class StructureSummary:
    """What the gang rules need to know about a definition's structure, computed once.

    - `parents` (component -> parent or None) and `children` (component -> direct children, declaration order);
    - `leaves`: pod-bearing components, the root first, then the children in declaration order;
    - `has_scale_definition`: any component has a scaleDefinition object (even an empty one);
    - `candidates`: for every component, the alpha (pod group, member) pairs naming it or an ancestor, own mentions
      first (empty when the definition has no alpha `podGroups`);
    - `gang` and `format`: the gangScheduling instructions and which format applies (`podGroup` wins when both are
      set, as KAI does), or None.
    """

    __slots__ = (
        "candidates",
        "children",
        "definitions",
        "format",
        "gang",
        "has_scale_definition",
        "karta",
        "leaves",
        "parents",
        "root",
    )

    def __init__(self, karta: Karta) -> None:
        if karta is None:
            raise GangError("karta cannot be nil: give the definition (a Karta) to summarise")
        if not isinstance(karta, Karta):
            raise ArgumentTypeError("the definition of a StructureSummary", "a Karta", karta)
        self.karta = karta
        components = karta.components
        self.root = karta.root.name
        self.definitions: dict[str, ComponentDefinition] = {}
        for component in components:
            self.definitions.setdefault(component.name, component)
        self.parents: dict[str, str | None] = {self.root: None}
        self.children: dict[str, list[str]] = {name: [] for name in self.definitions}
        for child in karta.children:
            parent = child.owner_ref or None
            self.parents.setdefault(child.name, parent)
            if parent is not None and parent in self.children and child.name not in self.children[parent]:
                self.children[parent].append(child.name)
        self.leaves: tuple[str, ...] = tuple(
            dict.fromkeys(component.name for component in components if component.has_pod_definition)
        )
        self.has_scale_definition = any(component.scale_definition is not None for component in components)
        self.gang: GangScheduling | None = karta.gang_scheduling
        self.format: GangFormat | None = None
        if self.gang is not None:
            if self.gang.pod_group is not None:
                self.format = "podGroup"
            elif self.gang.pod_groups:
                self.format = "podGroups"
        self.candidates: dict[str, tuple[Candidate, ...]] = {}
        if self.gang is not None and self.gang.pod_groups:
            for name in self.definitions:
                self.candidates[name] = tuple(prioritize(self._collect(name)))

    def _collect(self, name: str) -> list[Candidate]:
        assert self.gang is not None and self.gang.pod_groups is not None
        found: list[Candidate] = []
        for level in [name, *self.ancestors(name)]:
            for group in self.gang.pod_groups:
                for member in group.members:
                    if member.component_name == level:
                        found.append(Candidate(group.name, member, direct=level == name))
        return found

    # --- structure ----------------------------------------------------------------------------------------------

    def ancestors(self, name: str) -> list[str]:
        """The ancestors of a component, nearest first (a broken ownerRef chain stops the walk)."""
        out: list[str] = []
        seen = {name}
        current = self.parents.get(name)
        while current is not None and current not in seen and current in self.definitions:
            out.append(current)
            seen.add(current)
            current = self.parents.get(current)
        return out

    def descendants(self, name: str) -> list[str]:
        """Every descendant of a component, depth first in declaration order."""
        out: list[str] = []
        stack = list(reversed(self.children.get(name, [])))
        seen = {name}
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            out.append(current)
            stack.extend(reversed(self.children.get(current, [])))
        return out

    def is_leaf(self, name: str) -> bool:
        """True when the component is pod-bearing (podTemplateSpecPath, podSpecPath or fragmentedPodSpecDefinition)."""
        definition = self.definitions.get(name)
        return definition is not None and definition.has_pod_definition

    def get_karta(self) -> Karta:
        return self.karta


# --- per pod ------------------------------------------------------------------------------------------------------


def _pod_name(pod: Mapping[str, Any]) -> str:
    metadata = pod.get("metadata")
    if isinstance(metadata, Mapping):
        namespace, name = metadata.get("namespace"), metadata.get("name")
        if isinstance(name, str):
            return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name
    return "<unnamed>"


def infer_pod_component(query: PodQuerier, summary: StructureSummary) -> str:
    """The leaf component a pod belongs to (upstream's InferPodComponent).

    A definition with exactly one leaf gets every pod, without checking any selector (companion pods of a sandbox
    rely on this); otherwise the first leaf, in leaf order, whose componentTypeSelector matches (leaves without a
    podSelector are skipped). No leaf, or no match: `GangError`.
    """
    _need(query, PodQuerier, "query", "a PodQuerier (workload_map.pods)")
    _need(summary, StructureSummary, "summary", "a StructureSummary")
    if len(summary.leaves) == 1:
        return summary.leaves[0]
    for leaf in summary.leaves:
        selector = summary.definitions[leaf].pod_selector
        if selector is None:
            continue
        try:
            if query.matches_component_type(selector.component_type_selector):
                return leaf
        except SelectorError as error:
            raise GangError(f"pod {_pod_name(query.pod)}: component {leaf}: {error}") from error
    raise GangError(
        f"no component found for pod {_pod_name(query.pod)}: no componentTypeSelector of the leaf components "
        f"({', '.join(summary.leaves) or 'none'}) matches it"
    )


def infer_pod_component_instance(query: PodQuerier, component: str, resolution: Resolution) -> str | None:
    """The instance id of the pod in `component`, or None for a single-instance component or one without a
    podSelector (upstream's InferPodComponentInstance).

    Raises `ComponentNotFound` for an unknown component and `GangError` when the ids cannot be read, the component
    has instance ids but no instance selector, or the pod's id is none of them.
    """
    _need(query, PodQuerier, "query", "a PodQuerier (workload_map.pods)")
    _need(component, str, "component", "a component name (a str)")
    _need(resolution, Resolution, "resolution", "a Resolution (workload_map.resolve.resolve)")
    resolved = resolution.component(component)
    try:
        ids = resolved.require_instance_ids()
    except ExtractionError as error:
        raise GangError(f"failed to get instance ids of component {component}: {error.message}") from error
    selector = resolved.definition.pod_selector
    if not ids or ids[0] == "" or selector is None:
        return None
    try:
        found = query.matching_instance_id(selector.component_instance_selector, ids)
    except SelectorError as error:
        raise GangError(f"pod {_pod_name(query.pod)}: component {component}: {error}") from error
    return found or None


def pod_grouping(query: PodQuerier, component: str, summary: StructureSummary) -> Grouping | None:
    """The effective component and alpha member ganging a pod of `component`, or None (no alpha gang instructions,
    no candidate, or no candidate whose filters pass).

    Candidates are tried in priority order (own mentions, then ancestors'); the first whose member has no filters or
    whose filters all yield `true` on the pod wins. A filter that cannot be evaluated raises `GangError`.
    """
    _need(query, PodQuerier, "query", "a PodQuerier (workload_map.pods)")
    _need(component, str, "component", "a component name (a str)")
    _need(summary, StructureSummary, "summary", "a StructureSummary")
    for candidate in summary.candidates.get(component, ()):
        filters = candidate.member.filters
        if filters:
            try:
                passed = query.passes_filters(filters)
            except SelectorError as error:
                raise GangError(
                    f"failed to evaluate filters for component {candidate.component} in group "
                    f"{candidate.pod_group}: {error}"
                ) from error
            if not passed:
                continue
        return Grouping(candidate.component, candidate.pod_group, candidate.member)
    return None


def pod_group_keys(query: PodQuerier, member: PodGroupMember) -> list[str]:
    """The member's groupByKeyPaths evaluated on the pod (each must give exactly one non-empty value); `[]` for
    none."""
    _need(query, PodQuerier, "query", "a PodQuerier (workload_map.pods)")
    _need(member, PodGroupMember, "member", "a PodGroupMember (a pod group's member)")
    try:
        return query.group_keys(member.group_by_key_paths)
    except SelectorError as error:
        raise GangError(f"pod {_pod_name(query.pod)}: member {member.component_name}: {error}") from error


def kai_pod_group_name(prefix: str, owner_uid: str, keys: Sequence[str] = (), *, name: str | None = None) -> str:
    """The PodGroup name KAI's pod grouper gives (karta-spec §13.1-13.2).

    Alpha format: `<prefix>-<top owner UID>` plus `-<key>` per group key; with keys the result must be a DNS-1123
    subdomain (`InvalidPodGroupName` otherwise). KAI-native format (`name` = podGroup.name):
    `<prefix>-<top owner UID>-<name>`.
    """
    base = f"{prefix}-{owner_uid}"
    if name is not None:
        return f"{base}-{name}"
    if not keys:
        return base
    result = base + "".join(f"-{key}" for key in keys)
    problems = dns1123_subdomain_errors(result)
    if problems:
        raise InvalidPodGroupName(
            f'Karta grouping keys {go_string(list(keys))} produce invalid Kubernetes PodGroup name "{result}": '
            f"{'; '.join(problems)}"
        )
    return result
