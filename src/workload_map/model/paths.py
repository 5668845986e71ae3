"""Where the jq expressions of a definition are, by YAML field path.

`JQ_FIELDS` names, per struct, the wire fields that hold jq expressions (the fields upstream's safety validator
checks, karta-spec §9.3). `jq_fields(karta)` walks a definition and yields `(path, expression)` for each one
that is set and non-empty, with paths such as
`spec.structureDefinition.childComponents[1].podSelector.componentTypeSelector.keyPath`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from workload_map.model.gang_rules import gang_rule_expressions
from workload_map.model.references import reference_expressions
from workload_map.model.types import Karta

JQ_FIELDS: dict[str, frozenset[str]] = {
    "ComponentDefinition": frozenset({"instanceIdPath"}),
    "SpecDefinition": frozenset({"podTemplateSpecPath", "podSpecPath", "metadataPath"}),
    "FragmentedPodSpecDefinition": frozenset(
        {
            "schedulerNamePath",
            "labelsPath",
            "annotationsPath",
            "resourcesPath",
            "resourceClaimsPath",
            "podAffinityPath",
            "nodeAffinityPath",
            "containersPath",
            "containerPath",
            "priorityClassNamePath",
            "imagePath",
        }
    ),
    "ScaleDefinition": frozenset({"replicasPath", "minReplicasPath", "maxReplicasPath"}),
    "ComponentTypeSelector": frozenset({"keyPath"}),
    "ComponentInstanceSelector": frozenset({"idPath"}),
    "ReplicaSelector": frozenset({"keyPath"}),
    "PhaseDefinition": frozenset({"path"}),
    "ConditionsDefinition": frozenset({"path"}),
    "ExpressionMatcher": frozenset({"expression"}),
    "Action": frozenset({"path"}),
    "PodGroupMember": frozenset({"groupByKeyPaths", "filters"}),
}

# Expressions evaluated against a Pod (selectors, gang keys and filters); the others see the workload object.
POD_SCOPED: dict[str, frozenset[str]] = {
    "ComponentTypeSelector": frozenset({"keyPath"}),
    "ComponentInstanceSelector": frozenset({"idPath"}),
    "ReplicaSelector": frozenset({"keyPath"}),
    "PodGroupMember": frozenset({"groupByKeyPaths", "filters"}),
}

# Per struct class: (attribute, wire name, holds jq) for each field; computed once.
_LAYOUT: dict[type, tuple[tuple[str, str, bool], ...]] = {}


def _layout(cls: type) -> tuple[tuple[str, str, bool], ...]:
    layout = _LAYOUT.get(cls)
    if layout is None:
        jq = JQ_FIELDS.get(cls.__name__, frozenset())
        layout = tuple(
            (attribute, wire, wire in jq)
            for attribute, wire in zip(cls.__struct_fields__, cls.__struct_encode_fields__, strict=True)  # type: ignore[attr-defined]
        )
        _LAYOUT[cls] = layout
    return layout


def jq_fields(karta: Karta) -> Iterator[tuple[str, str]]:
    """(YAML field path, expression) of every non-empty jq expression of the definition, in document order: the
    spec's, then those of the `workloadmap.io/` extension annotations (they pass the same checks)."""
    yield from _walk(karta.spec, "spec")
    annotations = karta.metadata.annotations if karta.metadata else None
    for path, expression, _ in gang_rule_expressions(annotations):
        yield path, expression
    yield from reference_expressions(annotations)


def _walk(node: Any, path: str) -> Iterator[tuple[str, str]]:
    for attribute, wire, is_jq in _layout(type(node)):
        value = getattr(node, attribute)
        if value is None:
            continue
        here = f"{path}.{wire}"
        if is_jq:
            if isinstance(value, str):
                if value:
                    yield here, value
            else:
                for index, item in enumerate(value):
                    if item:
                        yield f"{here}[{index}]", item
        elif isinstance(value, msgspec.Struct):
            yield from _walk(value, here)
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                if isinstance(item, msgspec.Struct):
                    yield from _walk(item, f"{here}[{index}]")
