"""The Karta definition model: types, loading and dumping (the lowest layer: no other layer imported).

Every input read from a path goes through the one bounded reader, `workload_map._io` (re-exported here:
`read_input`, `read_input_text`, `InputError`, `InputTooLargeError`, `InputTimeoutError`, `MAX_INPUT_BYTES`).

`workload_map.model.types` (the Structs) and the bounded reader load with the package; the rest (loading, dumping,
the YAML reader, the JSON Schema and CRD, the jq field walker) loads on first use of one of its names, so a command
that only decodes the precompiled catalog never imports them (issue 19: start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workload_map._io import (
    MAX_INPUT_BYTES,
    InputError,
    InputTimeoutError,
    InputTooLargeError,
    read_input,
    read_input_text,
)
from workload_map.model.types import (
    API_VERSION,
    GVK,
    KIND,
    PRIMARY_PHASE_PRECEDENCE,
    STATUS_EVALUATION_ORDER,
    UNDEFINED,
    Action,
    ComponentDefinition,
    ComponentInstanceSelector,
    ComponentTypeSelector,
    ConditionsDefinition,
    ExpectedCondition,
    ExpressionMatcher,
    FragmentedPodSpecDefinition,
    GangScheduling,
    Karta,
    KartaSpec,
    ObjectMeta,
    OptimizationInstructions,
    PhaseDefinition,
    PodGroup,
    PodGroupDefinition,
    PodGroupMember,
    PodSelector,
    ReplicaSelector,
    ScaleDefinition,
    SpecDefinition,
    StatusDefinition,
    StatusMappings,
    StatusMatcher,
    StructureDefinition,
    SubGroup,
    SuspendDefinition,
    TopologyConstraint,
)

if TYPE_CHECKING:
    from workload_map.model.dump import dump_json, dump_yaml, to_dict
    from workload_map.model.load import (
        DefinitionError,
        LoadResult,
        karta_from_dict,
        load_definition,
        load_definitions,
        loads_definitions,
        scan_definitions,
    )
    from workload_map.model.paths import JQ_FIELDS, POD_SCOPED, jq_fields
    from workload_map.model.schema import crd, crd_yaml, json_schema, json_schema_text
    from workload_map.model.yamlio import (
        Document,
        DocumentError,
        parse_documents,
        parse_documents_each,
        read_documents,
        read_documents_each,
        read_source_text,
    )

# public name -> the module that defines it (imported on first use)
_LAZY: dict[str, str] = {
    "dump_json": "workload_map.model.dump",
    "dump_yaml": "workload_map.model.dump",
    "to_dict": "workload_map.model.dump",
    "DefinitionError": "workload_map.model.load",
    "LoadResult": "workload_map.model.load",
    "karta_from_dict": "workload_map.model.load",
    "load_definition": "workload_map.model.load",
    "load_definitions": "workload_map.model.load",
    "loads_definitions": "workload_map.model.load",
    "scan_definitions": "workload_map.model.load",
    "JQ_FIELDS": "workload_map.model.paths",
    "POD_SCOPED": "workload_map.model.paths",
    "jq_fields": "workload_map.model.paths",
    "crd": "workload_map.model.schema",
    "crd_yaml": "workload_map.model.schema",
    "json_schema": "workload_map.model.schema",
    "json_schema_text": "workload_map.model.schema",
    "Document": "workload_map.model.yamlio",
    "DocumentError": "workload_map.model.yamlio",
    "parse_documents": "workload_map.model.yamlio",
    "parse_documents_each": "workload_map.model.yamlio",
    "read_documents": "workload_map.model.yamlio",
    "read_documents_each": "workload_map.model.yamlio",
    "read_source_text": "workload_map.model.yamlio",
}

__all__ = [
    "API_VERSION",
    "GVK",
    "JQ_FIELDS",
    "KIND",
    "MAX_INPUT_BYTES",
    "POD_SCOPED",
    "PRIMARY_PHASE_PRECEDENCE",
    "STATUS_EVALUATION_ORDER",
    "UNDEFINED",
    "Action",
    "ComponentDefinition",
    "ComponentInstanceSelector",
    "ComponentTypeSelector",
    "ConditionsDefinition",
    "DefinitionError",
    "Document",
    "DocumentError",
    "ExpectedCondition",
    "ExpressionMatcher",
    "FragmentedPodSpecDefinition",
    "GangScheduling",
    "InputError",
    "InputTimeoutError",
    "InputTooLargeError",
    "Karta",
    "KartaSpec",
    "LoadResult",
    "ObjectMeta",
    "OptimizationInstructions",
    "PhaseDefinition",
    "PodGroup",
    "PodGroupDefinition",
    "PodGroupMember",
    "PodSelector",
    "ReplicaSelector",
    "ScaleDefinition",
    "SpecDefinition",
    "StatusDefinition",
    "StatusMappings",
    "StatusMatcher",
    "StructureDefinition",
    "SubGroup",
    "SuspendDefinition",
    "TopologyConstraint",
    "crd",
    "crd_yaml",
    "dump_json",
    "dump_yaml",
    "jq_fields",
    "json_schema",
    "json_schema_text",
    "karta_from_dict",
    "load_definition",
    "load_definitions",
    "loads_definitions",
    "parse_documents",
    "parse_documents_each",
    "read_documents",
    "read_documents_each",
    "read_input",
    "read_input_text",
    "read_source_text",
    "scan_definitions",
    "to_dict",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'workload_map.model' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
