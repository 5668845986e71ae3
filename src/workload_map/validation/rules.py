"""Every validation rule of a Karta definition; all findings at once.

Errors are what upstream's validator rejects (karta-spec §9.2, with its message wording so messages can be
searched for), what the API server rejects through the CRD's list keys, and what fails for certain at run time
(KAI pod-group names and topology, undecodable suspend values). Warnings are definitions upstream accepts but
that cannot work as written (a matcher that can never match, pods that cannot be attributed). Every definition
upstream's validator accepts yields no error here except where the API server or the run time would reject it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from workload_map._limits import MAX_COMPONENT_DEPTH
from workload_map.errors import ArgumentTypeError
from workload_map.model import (
    ComponentDefinition,
    ComponentTypeSelector,
    GangScheduling,
    Karta,
    StatusDefinition,
    SuspendDefinition,
    TopologyConstraint,
)
from workload_map.model.extensions import (
    COPIES,
    DISPLAY_NAMES,
    GROUPS,
    RESOURCE_ALIASES,
    copies_expressions,
    copies_problems,
    display_name_problems,
    display_names,
    groups_expressions,
    groups_problems,
    is_valid_resource_name,
    resource_alias_problems,
    resource_aliases,
)
from workload_map.model.gang_rules import GANG_RULES, gang_rule_problems, gang_rules
from workload_map.model.references import REFERENCES, reference_problems
from workload_map.validation.findings import ERROR, WARNING, Finding
from workload_map.validation.jqcheck import expression_problems, jq_findings
from workload_map.validation.labels import label_key_problems, label_value_problems

STRUCTURE = "spec.structureDefinition"
ROOT = f"{STRUCTURE}.rootComponent"
GANG = "spec.optimizationInstructions.gangScheduling"

# Rule ids with their severity, for the docs and for tools that filter findings.
RULES: dict[str, str] = {
    "unique-names": "error",
    "component-name-empty": "error",
    "root-kind": "error",
    "root-owner-ref": "error",
    "root-status-definition": "error",
    "child-owner-ref": "error",
    "owner-ref-target": "error",
    "ownership-cycle": "error",
    "component-depth": "error",
    "pod-spec-exclusive": "error",
    "selector-empty-match-labels": "error",
    "selector-empty": "error",
    "selector-value-without-key-path": "error",
    "selector-label-syntax": "error",
    "instance-id-without-selector": "error",
    "instance-selector-without-id": "error",
    "gang-member-component": "error",
    "jq-parse": "error",
    "jq-unsafe": "error",
    "jq-too-long": "error",
    "duplicate-additional-kind": "error",
    "duplicate-list-key": "error",
    "suspend-value-json": "error",
    "subgroup-component": "error",
    "topology": "error",
    "resource-alias": "error",
    "display-names": "error",
    "copies": "error",
    "references": "error",
    "matcher-without-phase": "warning",
    "matcher-without-conditions": "warning",
    "status-definition-not-root": "warning",
    "pods-not-attributable": "warning",
    "incomplete-kind": "warning",
    "gang-both-formats": "warning",
    "resource-name": "warning",
    "display-name-component": "warning",
    "copies-component": "warning",
}


def validate(karta: Karta) -> list[Finding]:
    """Every finding of the definition, errors and warnings, in document order within each rule group.

    Duplicate component names make the name-based checks meaningless, so (as upstream) they are reported alone
    by those checks; the field-local checks (selectors, pod specs, jq, ...) still run.
    """
    if not isinstance(karta, Karta):
        raise ArgumentTypeError("the definition to validate", "a Karta (see workload_map.load_definitions)", karta)
    findings: list[Finding] = []
    components = _components(karta)
    duplicates = list(_unique_names(components))
    findings += duplicates
    names = {c.name for _, c in components}

    structural: list[Finding] = []
    if not duplicates:
        structural += _root(karta.root)
        structural += _children(components[1:], names)
    else:
        structural += _root_local(karta.root)
    findings += structural
    for path, component in components:
        findings += _component(path, component)
    if not duplicates and not any(f.rule in ("child-owner-ref", "owner-ref-target") for f in structural):
        cycles = list(_cycles(components[1:]))
        findings += cycles or component_depth_findings(karta)
    findings += _status_definitions(components)
    findings += _attribution(components)
    findings += _additional_kinds(karta)
    findings += _resource_annotations(karta)
    findings += _display_names(karta, {c.name for _, c in components})
    findings += _copies(karta, {c.name for _, c in components})
    findings += _groups(karta, {c.name for _, c in components})
    findings += _references(karta)
    findings += _gang_annotation(karta, {c.name: c for _, c in components})
    gang = karta.gang_scheduling
    if gang is not None:
        findings += _gang(gang, names, check_names=not duplicates)
    findings += jq_findings(karta)
    return findings


def _components(karta: Karta) -> list[tuple[str, ComponentDefinition]]:
    return [(ROOT, karta.root)] + [(f"{STRUCTURE}.childComponents[{i}]", c) for i, c in enumerate(karta.children)]


# --- upstream's structural rules (§9.2) ---------------------------------------------------------------------


def _unique_names(components: list[tuple[str, ComponentDefinition]]) -> Iterator[Finding]:
    seen: set[str] = set()
    for path, component in components:
        if component.name in seen:
            yield Finding(ERROR, f"{path}.name", f"component name {component.name} is not unique", "unique-names")
        seen.add(component.name)


def _root_local(root: ComponentDefinition) -> Iterator[Finding]:
    kind = root.kind
    if kind is None or not kind.version or not kind.kind or (not kind.group and kind.kind != "Pod"):
        got = (
            "kind is missing"
            if kind is None
            else f"got group {kind.group!r}, version {kind.version!r}, kind {kind.kind!r}; only kind Pod may have "
            "an empty group"
        )
        yield Finding(
            ERROR, f"{ROOT}.kind", f"root component must have full kind (group, version, kind): {got}", "root-kind"
        )
    if root.status_definition is None:
        yield Finding(
            ERROR, f"{ROOT}.statusDefinition", "root component must have status definition", "root-status-definition"
        )


def _root(root: ComponentDefinition) -> Iterator[Finding]:
    yield from _root_local(root)
    if root.owner_ref is not None:
        yield Finding(
            ERROR,
            f"{ROOT}.ownerRef",
            "root component cannot have owner ref; remove ownerRef from the root",
            "root-owner-ref",
        )


def _children(children: list[tuple[str, ComponentDefinition]], names: set[str]) -> Iterator[Finding]:
    for path, child in children:
        if not child.owner_ref:
            yield Finding(
                ERROR,
                f"{path}.ownerRef",
                f"child component '{child.name}' has no owner ref; set ownerRef to its parent component's name",
                "child-owner-ref",
            )
        elif child.owner_ref not in names:
            yield Finding(
                ERROR,
                f"{path}.ownerRef",
                f"child component '{child.name}' has owner ref to non-existing component '{child.owner_ref}'"
                f"{_one_of(names)}",
                "owner-ref-target",
            )


def _one_of(names: set[str]) -> str:
    listed = ", ".join(sorted(n for n in names if n))
    return f" (components: {listed})" if listed else ""


def _cycles(children: list[tuple[str, ComponentDefinition]]) -> Iterator[Finding]:
    """The first ownership cycle, following ownerRefs from each child in declaration order.

    One walk with colours: a component whose walk ended without a cycle is never walked again, so the check is
    linear in the number of components (a chain of thousands takes milliseconds, not minutes).
    """
    parent = {c.name: c.owner_ref for _, c in children}
    path_of = {c.name: p for p, c in children}
    done: set[str] = set()  # no cycle is reachable from these
    for _, child in children:
        walk: list[str] = []
        on_walk: dict[str, int] = {}  # the components of this walk, by position
        current: str | None = child.name
        while current is not None and current in parent and current not in done:
            if current in on_walk:
                cycle = [*walk[on_walk[current] :], current]
                if len(cycle) > 12:  # a chain of thousands is named by its ends
                    cycle = [*cycle[:6], f"... {len(cycle) - 11} more ...", *cycle[-5:]]
                yield Finding(
                    ERROR,
                    f"{path_of[current]}.ownerRef",
                    f"ownership cycle detected involving component {current} ({' -> '.join(cycle)})",
                    "ownership-cycle",
                )
                return
            on_walk[current] = len(walk)
            walk.append(current)
            current = parent[current]
        done.update(walk)


def component_depth_findings(karta: Karta) -> list[Finding]:
    """The first component (in declaration order) more than MAX_COMPONENT_DEPTH ownerRef levels below the root.

    Views, plans and their output are trees of the components: the depth is bounded so every consumer can walk
    them. Linear; components whose ownerRef names no component, or that sit on a cycle, are left to those rules.
    """
    children = karta.children
    parent = {c.name: c.owner_ref for c in children}
    depth: dict[str, int] = {karta.root.name: 0}
    for index, child in enumerate(children):
        chain: list[str] = []
        seen: set[str] = set()
        current: str | None = child.name
        while current is not None and current not in depth and current in parent and current not in seen:
            seen.add(current)
            chain.append(current)
            current = parent[current]
        if current is None or current not in depth:
            continue  # no way to the root (a missing owner or a cycle): reported by their own rules
        level = depth[current]
        for name in reversed(chain):
            level += 1
            depth[name] = level
        found = depth[child.name]
        if found > MAX_COMPONENT_DEPTH:
            return [
                Finding(
                    ERROR,
                    f"{STRUCTURE}.childComponents[{index}].ownerRef",
                    f"component {child.name!r} is {found} ownerRef levels below the root component; at most "
                    f"{MAX_COMPONENT_DEPTH} are supported (views and gang plans are trees of that depth)",
                    "component-depth",
                )
            ]
    return []


def _component(path: str, component: ComponentDefinition) -> Iterator[Finding]:
    name = component.name
    if not name:
        yield Finding(ERROR, f"{path}.name", "component name is empty", "component-name-empty")
    spec = component.spec_definition
    if spec is not None:
        kinds = [
            wire
            for wire, value in (
                ("podTemplateSpecPath", spec.pod_template_spec_path),
                ("podSpecPath", spec.pod_spec_path),
                ("fragmentedPodSpecDefinition", spec.fragmented_pod_spec_definition),
            )
            if value
        ]
        if len(kinds) > 1:
            yield Finding(
                ERROR,
                f"{path}.specDefinition",
                f"component '{name}' has multiple pod spec definitions ({', '.join(kinds)}); keep one",
                "pod-spec-exclusive",
            )
    selector = component.pod_selector
    type_selector = selector.component_type_selector if selector else None
    if type_selector is not None:
        yield from _type_selector(f"{path}.podSelector.componentTypeSelector", name, type_selector)
    has_id_path = bool(component.instance_id_path)
    has_instance_selector = selector is not None and selector.component_instance_selector is not None
    if has_id_path and not has_instance_selector:
        yield Finding(
            ERROR,
            f"{path}.podSelector.componentInstanceSelector",
            f"component '{name}' has instance id path but no pod component instance selector; add "
            "podSelector.componentInstanceSelector.idPath",
            "instance-id-without-selector",
        )
    if has_instance_selector and not has_id_path:
        yield Finding(
            ERROR,
            f"{path}.instanceIdPath",
            f"component '{name}' has pod component instance selector but no instance id path; add instanceIdPath",
            "instance-selector-without-id",
        )
    if component.suspend_definition is not None:
        yield from _suspend(f"{path}.suspendDefinition", component.suspend_definition)


def _type_selector(path: str, name: str, selector: ComponentTypeSelector) -> Iterator[Finding]:
    labels = selector.match_labels
    if labels is not None and not labels:
        yield Finding(
            ERROR,
            f"{path}.matchLabels",
            f"component '{name}' has component type selector with empty matchLabels; remove it or add a label",
            "selector-empty-match-labels",
        )
        return
    if not selector.key_path and labels is None:
        yield Finding(
            ERROR,
            path,
            f"component '{name}' has component type selector with neither keyPath nor matchLabels",
            "selector-empty",
        )
        return
    if selector.value is not None and not selector.key_path:
        yield Finding(
            ERROR,
            f"{path}.value",
            f"component '{name}' has component type selector with value without keyPath",
            "selector-value-without-key-path",
        )
        return
    for key in sorted(labels or {}):
        value = (labels or {})[key]
        problems = [f"key {key!r}: {p}" for p in label_key_problems(key)]
        problems += [f"value {value!r}: {p}" for p in label_value_problems(value)]
        if problems:
            yield Finding(
                ERROR,
                f"{path}.matchLabels{_key_path(key)}",
                f"component '{name}' has invalid matchLabels: {'; '.join(problems)}",
                "selector-label-syntax",
            )


def _key_path(key: str) -> str:
    """A map key as a YAML path step: `.app` or `["app name"]`."""
    plain = key.replace("-", "").replace("_", "").isalnum()
    return f".{key}" if plain else f"[{json.dumps(key)}]"


def _gang(gang: GangScheduling, names: set[str], *, check_names: bool) -> Iterator[Finding]:
    for i, group in enumerate(gang.pod_groups or []):
        gpath = f"{GANG}.podGroups[{i}]"
        members = group.members or ()
        for j, member in enumerate(members):
            mpath = f"{gpath}.members[{j}]"
            if check_names and member.component_name not in names:
                yield Finding(
                    ERROR,
                    f"{mpath}.componentName",
                    f"pod-group member component '{member.component_name}' is not defined (should be a root or "
                    f"child component){_one_of(names)}",
                    "gang-member-component",
                )
            yield from _duplicates(f"{mpath}.groupByKeyPaths", member.group_by_key_paths or (), "groupByKeyPaths")
            yield from _duplicates(f"{mpath}.filters", member.filters or (), "filters")
        yield from _duplicates(f"{gpath}.members", [m.component_name for m in members], "members", key="componentName")
    yield from _duplicates(f"{GANG}.podGroups", [g.name for g in gang.pod_groups or []], "podGroups", key="name")
    pod_group = gang.pod_group
    if pod_group is None:
        return
    if gang.pod_groups:
        yield Finding(
            WARNING,
            f"{GANG}.podGroups",
            "both podGroup and podGroups are set; podGroup wins and podGroups is ignored",
            "gang-both-formats",
        )
    base = f"{GANG}.podGroup"
    if pod_group.topology is not None:
        yield from _topology(f"{base}.topology", pod_group.topology)
    sub_groups = pod_group.sub_groups or ()
    for i, sub in enumerate(sub_groups):
        spath = f"{base}.subGroups[{i}]"
        if not sub.component_name:
            yield Finding(ERROR, f"{spath}.componentName", "sub-group component name is empty", "subgroup-component")
        elif check_names and sub.component_name not in names:
            yield Finding(
                ERROR,
                f"{spath}.componentName",
                f"sub-group component '{sub.component_name}' is not defined (should be a root or child component)"
                f"{_one_of(names)}; the scheduler rejects it at run time",
                "subgroup-component",
            )
        if sub.topology is not None:
            yield from _topology(f"{spath}.topology", sub.topology)
    yield from _duplicates(
        f"{base}.subGroups", [s.component_name for s in sub_groups], "subGroups", key="componentName"
    )


def _topology(path: str, topology: TopologyConstraint) -> Iterator[Finding]:
    if not topology.topology_name:
        yield Finding(
            ERROR,
            f"{path}.topologyName",
            "topology constraint has no topologyName; the scheduler rejects it at run time",
            "topology",
        )
    if not topology.required_topology_level and not topology.preferred_topology_level:
        yield Finding(
            ERROR,
            path,
            "topology constraint has neither requiredTopologyLevel nor preferredTopologyLevel; the scheduler "
            "rejects it at run time",
            "topology",
        )


def _duplicates(path: str, values: Sequence[str], what: str, *, key: str = "") -> Iterator[Finding]:
    """An error for each repeated entry of a list the CRD declares a set or a list-map."""
    first: dict[str, int] = {}
    for index, value in enumerate(values):
        if value in first:
            keyed = f" by {key}" if key else ""
            yield Finding(
                ERROR,
                f"{path}[{index}]" + (f".{key}" if key else ""),
                f"{what}[{index}] repeats {value!r} (also at [{first[value]}]); the CRD keys {what}{keyed}, so "
                "the API server rejects it",
                "duplicate-list-key",
            )
        else:
            first[value] = index


# --- checks upstream does not make ---------------------------------------------------------------------------


def _suspend(path: str, suspend: SuspendDefinition) -> Iterator[Finding]:
    for field, actions in (("suspendActions", suspend.suspend_actions), ("resumeActions", suspend.resume_actions)):
        for i, action in enumerate(actions):
            try:
                json.loads(action.value)
            except json.JSONDecodeError as exc:
                bare = action.value[:1].isalpha() and action.value not in ("true", "false", "null")
                hint = f"; a string must be quoted inside the value: '{json.dumps(action.value)}'" if bare else ""
                yield Finding(
                    ERROR,
                    f"{path}.{field}[{i}].value",
                    f"value {action.value!r} is not a JSON literal ({exc.msg}){hint}",
                    "suspend-value-json",
                )


def _status_definitions(components: list[tuple[str, ComponentDefinition]]) -> Iterator[Finding]:
    for index, (path, component) in enumerate(components):
        status = component.status_definition
        if status is None:
            continue
        if index > 0:
            yield Finding(
                WARNING,
                f"{path}.statusDefinition",
                f"statusDefinition on child component '{component.name}' is ignored; status is read from the root",
                "status-definition-not-root",
            )
        yield from _matchers(f"{path}.statusDefinition", status)


def _matchers(path: str, status: StatusDefinition) -> Iterator[Finding]:
    for status_name, matchers in status.status_mappings.entries():
        for i, matcher in enumerate(matchers or []):
            mpath = f"{path}.statusMappings.{status_name.lower()}[{i}]"
            if matcher.by_phase and status.phase_definition is None:
                yield Finding(
                    WARNING,
                    f"{mpath}.byPhase",
                    f"byPhase {matcher.by_phase!r} can never match: the status definition has no phaseDefinition",
                    "matcher-without-phase",
                )
            if matcher.by_conditions and status.conditions_definition is None:
                yield Finding(
                    WARNING,
                    f"{mpath}.byConditions",
                    "byConditions can never match: the status definition has no conditionsDefinition",
                    "matcher-without-conditions",
                )


def _attribution(components: list[tuple[str, ComponentDefinition]]) -> Iterator[Finding]:
    """With several pod-bearing components, one without a type selector never gets a pod."""
    bearing = [(p, c) for p, c in components if c.has_pod_definition]
    if len(bearing) > 1:
        for path, component in bearing:
            selector = component.pod_selector
            if selector is None or selector.component_type_selector is None:
                yield Finding(
                    WARNING,
                    f"{path}.podSelector",
                    f"component '{component.name}' has pods but no podSelector.componentTypeSelector; with "
                    f"{len(bearing)} pod-bearing components its pods cannot be attributed to it",
                    "pods-not-attributable",
                )
    for path, component in components[1:]:
        kind = component.kind
        if kind is not None and (not kind.version or not kind.kind):
            yield Finding(
                WARNING,
                f"{path}.kind",
                f"kind of component '{component.name}' has no {'version' if not kind.version else 'kind'}; its "
                "objects cannot be looked up",
                "incomplete-kind",
            )


def _additional_kinds(karta: Karta) -> Iterator[Finding]:
    kinds = karta.structure.additional_child_kinds or ()
    first: dict[str, Any] = {}
    for index, gvk in enumerate(kinds):
        path = f"{STRUCTURE}.additionalChildKinds[{index}]"
        if not gvk.version or not gvk.kind:
            yield Finding(
                WARNING,
                path,
                f"additional child kind {gvk} is incomplete (version and kind are needed)",
                "incomplete-kind",
            )
        earlier = first.get(gvk.kind)
        if earlier is None:
            first[gvk.kind] = (index, gvk)
            continue
        at, other = earlier
        what = (
            f"repeats {gvk} (also at [{at}])"
            if other == gvk
            else f"({gvk}) repeats kind {gvk.kind!r} of [{at}] ({other})"
        )
        yield Finding(
            ERROR,
            f"{path}.kind",
            f"additionalChildKinds[{index}] {what}; the CRD keys additionalChildKinds by kind alone, so the API "
            "server rejects it",
            "duplicate-additional-kind",
        )


def _gang_annotation(karta: Karta, components: dict[str, ComponentDefinition]) -> Iterator[Finding]:
    """`workloadmap.io/gang` (docs/gang.md, "The workloadmap.io/gang annotation"): well-formed, and naming the
    sub-groups and the replicated component of a `podGroup`."""
    annotations = karta.metadata.annotations if karta.metadata else None
    where = f'metadata.annotations["{GANG_RULES}"]'
    for message in gang_rule_problems(annotations):
        yield Finding(ERROR, where, message, "gang-annotation")
    rules = gang_rules(annotations)
    if rules is None:
        return
    gang = karta.gang_scheduling
    pod_group = gang.pod_group if gang is not None else None
    if pod_group is None:
        yield Finding(
            ERROR,
            where,
            "the annotation refines gangScheduling.podGroup, which the definition does not set",
            "gang-annotation",
        )
        return
    listed = {sub.component_name for sub in pod_group.sub_groups or ()}
    for component, rule in rules.sub_groups.items():
        if rule.after is not None and rule.after not in listed:
            yield Finding(
                ERROR,
                f"{where}.subGroups.{component}.after",
                f"{rule.after} is not a sub-group: after names the listed component the deferred pods wait for",
                "gang-annotation",
            )
        if component not in listed:
            yield Finding(
                ERROR,
                f"{where}.subGroups.{component}",
                f"{component} is not a sub-group: list it in gangScheduling.podGroup.subGroups",
                "gang-annotation",
            )
    replicated = rules.gang_per_replica_of
    if replicated is not None:
        definition = components.get(replicated)
        if definition is None:
            yield Finding(ERROR, f"{where}.gangPerReplicaOf", f"no component named {replicated}", "gang-annotation")
        elif definition.pod_selector is None or definition.pod_selector.replica_selector is None:
            yield Finding(
                ERROR,
                f"{where}.gangPerReplicaOf",
                f"component {replicated} has no podSelector.replicaSelector: its pods cannot be told apart by replica",
                "gang-annotation",
            )


def _display_names(karta: Karta, components: set[str]) -> Iterator[Finding]:
    """`workloadmap.io/display-names` (docs/definitions.md, "Extensions"): well formed, naming components."""
    annotations = karta.metadata.annotations if karta.metadata else None
    where = f'metadata.annotations["{DISPLAY_NAMES}"]'
    for message in display_name_problems(annotations):
        yield Finding(ERROR, where, message, "display-names")
    for component in display_names(annotations):
        if component not in components:
            yield Finding(
                WARNING, where, f"{component!r} is not a component of this definition", "display-name-component"
            )


def _copies(karta: Karta, components: set[str]) -> Iterator[Finding]:
    """`workloadmap.io/copies` (docs/definitions.md, "Extensions"): well formed, jq that parses, components."""
    return _per_component(
        karta, components, annotation=COPIES, problems=copies_problems, expressions=copies_expressions, rule="copies"
    )


def _groups(karta: Karta, components: set[str]) -> Iterator[Finding]:
    """`workloadmap.io/groups` (docs/definitions.md, "Extensions"): well formed, jq that parses, components."""
    return _per_component(
        karta, components, annotation=GROUPS, problems=groups_problems, expressions=groups_expressions, rule="groups"
    )


def _per_component(
    karta: Karta,
    components: set[str],
    *,
    annotation: str,
    problems: Callable[[Mapping[str, str] | None], Iterable[str]],
    expressions: Callable[[Mapping[str, str] | None], Mapping[str, str]],
    rule: str,
) -> Iterator[Finding]:
    """An annotation holding one jq expression per component: its shape's problems, components the definition does
    not have (a warning), expressions that do not parse."""
    annotations = karta.metadata.annotations if karta.metadata else None
    where = f'metadata.annotations["{annotation}"]'
    for message in problems(annotations):
        yield Finding(ERROR, where, message, rule)
    for component, expression in expressions(annotations).items():
        if component not in components:
            yield Finding(WARNING, where, f"{component!r} is not a component of this definition", f"{rule}-component")
        for _, message in expression_problems(expression):
            yield Finding(ERROR, f"{where}.{component}", message, rule)


def _references(karta: Karta) -> Iterator[Finding]:
    """`workloadmap.io/references` (docs/definitions.md, "Cross-object references"): well formed (its jq is
    checked with the definition's other jq fields)."""
    annotations = karta.metadata.annotations if karta.metadata else None
    for message in reference_problems(annotations):
        yield Finding(ERROR, f'metadata.annotations["{REFERENCES}"]', message, "references")


def _resource_annotations(karta: Karta) -> Iterator[Finding]:
    """`workloadmap.io/resource-aliases` and `workloadmap.io/resources-shape` (docs/definitions.md, "Extensions")."""
    annotations = karta.metadata.annotations if karta.metadata else None
    for annotation, message in resource_alias_problems(annotations):
        yield Finding(ERROR, f'metadata.annotations["{annotation}"]', message, "resource-alias")
    aliases = resource_aliases(annotations)
    if aliases is None:
        return
    for key, alias in aliases.aliases.items():
        if alias.name is not None and not is_valid_resource_name(alias.name):
            yield Finding(
                WARNING,
                f'metadata.annotations["{RESOURCE_ALIASES}"]',
                f"{key!r} is counted as {alias.name!r}, which is not a valid Kubernetes resource name for a "
                "container (a domain-prefixed name such as nvidia.com/gpu, or cpu, memory, ephemeral-storage, "
                "hugepages-<size>): no node offers it and the API server rejects a pod that requests it",
                "resource-name",
            )
