"""The Karta format as a JSON Schema (for editors) and as the `kartas.run.ai` CRD, both generated from the types.

One table below carries what the msgspec types cannot say: user-facing descriptions, the API server's list
semantics, minimum sizes, the CRD defaults and the two CEL rules. `json_schema()` is msgspec's schema tidied
(descriptions, `additionalProperties: false`, no `default: null` noise, the CEL rules as JSON Schema);
`crd()` derives a *structural* OpenAPI v3 schema from it (no `$ref`, `nullable` instead of `anyOf` with null,
`type` on every node, list-map and set markers). `scripts/gen_schemas.py` writes both files; tests check the
committed files equal a fresh generation.

`document_schema()` is the same service for the documents the library writes (the JSON view, the gang plan): their
schemas come from the msgspec Structs that declare them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import msgspec
import msgspec.inspect
import yaml

from workload_map.model.types import API_VERSION, KIND, Karta

GROUP = "run.ai"
VERSION = "v1alpha1"
PLURAL = "kartas"
CRD_NAME = f"{PLURAL}.{GROUP}"
JSON_SCHEMA_FILE = "karta.schema.json"


@dataclass(frozen=True)
class _Field:
    description: str = ""
    jq: bool = False  # a jq expression (said in the description)
    list_type: str | None = None  # "map" | "set" | "atomic"
    map_keys: tuple[str, ...] = ()
    min_length: int | None = None
    min_items: int | None = None
    min_properties: int | None = None
    default: str | None = None


@dataclass(frozen=True)
class _Struct:
    description: str
    fields: dict[str, _Field] = field(default_factory=dict)
    required: tuple[str, ...] | None = None  # overrides msgspec's list (GVK: the CRD requires all three keys)
    cel: tuple[tuple[str, str], ...] = ()  # (rule, message)


_ON_WORKLOAD = "jq expression evaluated against the workload object"
_ON_POD = "jq expression evaluated against the Pod"
_MATCHERS = "Matchers for this status; the status applies when any of them matches."

_STRUCTS: dict[str, _Struct] = {
    "Karta": _Struct(
        "A Karta definition: how to read one kind of Kubernetes workload (its components, pod templates, "
        "replica counts, status and gang structure) through jq expressions.",
        {
            "apiVersion": _Field("Always run.ai/v1alpha1."),
            "kind": _Field("Always Karta."),
            "metadata": _Field("Standard object metadata; a definition is cluster-scoped."),
            "spec": _Field("The definition."),
            "status": _Field("Set by the Karta operator; ignored when a definition is loaded."),
        },
    ),
    "ObjectMeta": _Struct("Standard Kubernetes object metadata (only the fields a definition uses are listed)."),
    "KartaSpec": _Struct(
        "The definition proper.",
        {
            "structureDefinition": _Field("The component tree of the workload."),
            "optimizationInstructions": _Field("Scheduling hints, such as the gang (pod group) structure."),
        },
    ),
    "StructureDefinition": _Struct(
        "The components of the workload: the root (the workload object) and child components linked to it by ownerRef.",
        {
            "rootComponent": _Field("The workload object itself. Needs a full kind and a statusDefinition."),
            "childComponents": _Field(
                "Logical or physical sub-units; names are unique and declaration order matters (pods are "
                "attributed to leaves in this order).",
                list_type="map",
                map_keys=("name",),
            ),
            "additionalChildKinds": _Field(
                "Other kinds the workload creates that are not modelled as components (used for RBAC). The API "
                "server keys this list by kind alone.",
                list_type="map",
                map_keys=("kind",),
            ),
        },
    ),
    "ComponentDefinition": _Struct(
        "One component of the workload: where its pod template is, how many replicas it has, how its pods are "
        "recognised.",
        {
            "name": _Field("Unique among the root and all children."),
            "kind": _Field("The Kubernetes kind of this component's objects; absent for a logical grouping component."),
            "ownerRef": _Field("Name of the parent component (required on a child, forbidden on the root)."),
            "specDefinition": _Field("Where the pod template or pod spec of this component is."),
            "scaleDefinition": _Field("Where the replica counts of this component are."),
            "statusDefinition": _Field("How to read the workload status (root component only)."),
            "suspendDefinition": _Field("How to suspend and resume the workload (frameworks with native suspend)."),
            "instanceIdPath": _Field(
                f"Makes the component multi-instance: a {_ON_WORKLOAD} whose outputs are the instance ids "
                "(non-empty strings), paired by position with the outputs of the component's other paths.",
                jq=True,
            ),
            "podSelector": _Field("How live pods are attributed to this component, its instance and replica."),
        },
    ),
    "GVK": _Struct(
        "A Kubernetes group, version and kind. An empty group is the core API group.",
        {
            "group": _Field('API group; "" for the core group (Pod, Service, ...).'),
            "version": _Field("API version, such as v1."),
            "kind": _Field("Kind, such as JobSet."),
        },
        required=("group", "version", "kind"),
    ),
    "SpecDefinition": _Struct(
        "Where the pods of a component are described. Use one of podTemplateSpecPath, podSpecPath or "
        "fragmentedPodSpecDefinition.",
        {
            "podTemplateSpecPath": _Field(f"{_ON_WORKLOAD}; each output is a PodTemplateSpec.", jq=True),
            "podSpecPath": _Field(f"{_ON_WORKLOAD}; each output is a PodSpec.", jq=True),
            "metadataPath": _Field(
                f"{_ON_WORKLOAD}; each output is the pod ObjectMeta (used with podSpecPath).", jq=True
            ),
            "fragmentedPodSpecDefinition": _Field("Paths to pod fields scattered over the workload object."),
        },
    ),
    "FragmentedPodSpecDefinition": _Struct(
        "Paths to the pod fields of a workload that scatters them. Each is a jq expression evaluated against the "
        "workload object.",
        {
            "schedulerNamePath": _Field(f"{_ON_WORKLOAD}; each output is a scheduler name (string).", jq=True),
            "labelsPath": _Field(f"{_ON_WORKLOAD}; each output is a map of pod labels.", jq=True),
            "annotationsPath": _Field(f"{_ON_WORKLOAD}; each output is a map of pod annotations.", jq=True),
            "resourcesPath": _Field(f"{_ON_WORKLOAD}; each output is a ResourceRequirements object.", jq=True),
            "resourceClaimsPath": _Field(f"{_ON_WORKLOAD}; each output is a list of PodResourceClaim.", jq=True),
            "podAffinityPath": _Field(f"{_ON_WORKLOAD}; each output is a PodAffinity object.", jq=True),
            "nodeAffinityPath": _Field(f"{_ON_WORKLOAD}; each output is a NodeAffinity object.", jq=True),
            "containersPath": _Field(f"{_ON_WORKLOAD}; each output is a list of Container.", jq=True),
            "containerPath": _Field(f"{_ON_WORKLOAD}; each output is the single main Container.", jq=True),
            "priorityClassNamePath": _Field(f"{_ON_WORKLOAD}; each output is a priority class name (string).", jq=True),
            "imagePath": _Field(f"{_ON_WORKLOAD}; each output is a container image (string).", jq=True),
        },
    ),
    "ScaleDefinition": _Struct(
        "Where the replica counts are. Each is a jq expression evaluated against the workload object; each output "
        "is a number, a numeric string or null.",
        {
            "replicasPath": _Field(f"{_ON_WORKLOAD}; desired replicas.", jq=True),
            "minReplicasPath": _Field(f"{_ON_WORKLOAD}; minimum replicas.", jq=True),
            "maxReplicasPath": _Field(f"{_ON_WORKLOAD}; maximum replicas.", jq=True),
        },
    ),
    "StatusDefinition": _Struct(
        "How the workload status is read and mapped onto the common statuses.",
        {
            "phaseDefinition": _Field("Where the workload's phase string is."),
            "conditionsDefinition": _Field("Where the workload's conditions are and which keys they use."),
            "statusMappings": _Field("For each common status, the matchers that recognise it (may be {})."),
        },
    ),
    "PhaseDefinition": _Struct(
        "Where the phase is.",
        {"path": _Field(f"{_ON_WORKLOAD}; the first output is the phase string.", jq=True)},
    ),
    "ConditionsDefinition": _Struct(
        "Where the conditions are and which keys each condition uses.",
        {
            "path": _Field(f"{_ON_WORKLOAD}; yields an array of condition objects (or null).", jq=True),
            "typeFieldName": _Field("Key of the condition type.", default="type"),
            "statusFieldName": _Field("Key of the condition status.", default="status"),
            "messageFieldName": _Field("Key of the condition message.", default="message"),
            "reasonFieldName": _Field("Key of the condition reason.", default="reason"),
        },
    ),
    "StatusMappings": _Struct(
        "The common statuses, each recognised by a list of matchers (any matching matcher applies the status; "
        "several statuses may apply at once).",
        {
            name: _Field(_MATCHERS, list_type="atomic")
            for name in (
                "initializing",
                "running",
                "completed",
                "failed",
                "degraded",
                "suspended",
                "suspending",
                "resuming",
            )
        },
    ),
    "StatusMatcher": _Struct(
        "One way to recognise a status. Every criterion that is set must hold; a matcher with none set always matches.",
        {
            "byPhase": _Field("The phase must equal this (needs phaseDefinition)."),
            "byConditions": _Field(
                "Every listed condition must be present with the given status/reason (needs conditionsDefinition).",
                list_type="atomic",
            ),
            "byExpression": _Field(
                "A jq expression (against the workload object) whose first output, as a string, must equal "
                "expectedResult."
            ),
        },
    ),
    "ExpectedCondition": _Struct(
        "A condition that must be present.",
        {
            "type": _Field("Condition type."),
            "status": _Field("If set, the condition status must equal it (True, False, Unknown)."),
            "reason": _Field("If set, the condition reason must equal it."),
        },
    ),
    "ExpressionMatcher": _Struct(
        "A jq test on the workload object.",
        {
            "expression": _Field(f"{_ON_WORKLOAD}; its first output is converted with tostring.", jq=True),
            "expectedResult": _Field('The expected string, such as "true".'),
        },
    ),
    "SuspendDefinition": _Struct(
        "How to suspend and resume the workload: assignments applied in order.",
        {
            "suspendActions": _Field("Assignments that suspend the workload.", list_type="atomic", min_items=1),
            "resumeActions": _Field("Assignments that resume the workload.", list_type="atomic", min_items=1),
        },
    ),
    "Action": _Struct(
        "Set the outputs of path to value.",
        {
            "path": _Field(f"{_ON_WORKLOAD}; the paths to assign.", jq=True),
            "value": _Field('A JSON literal held in a string: "true", "0", "\\"Suspended\\"", "null".'),
        },
    ),
    "PodSelector": _Struct(
        "How live pods are attributed to this component. All paths here are evaluated against the Pod.",
        {
            "componentTypeSelector": _Field("Does a pod belong to this component?"),
            "componentInstanceSelector": _Field("Which instance a pod belongs to (multi-instance components)."),
            "replicaSelector": _Field("Which replica (group index) a pod belongs to."),
        },
    ),
    "ComponentTypeSelector": _Struct(
        "Conditions a pod must meet to belong to the component; every condition set must hold.",
        {
            "keyPath": _Field(
                f"{_ON_POD}. Without value: true when any output is non-null. With value: an output must equal value.",
                jq=True,
                min_length=1,
            ),
            "value": _Field("The string keyPath must yield (requires keyPath)."),
            "matchLabels": _Field("Pod labels that must be present with exactly these values.", min_properties=1),
        },
        cel=(
            ("has(self.keyPath) || has(self.matchLabels)", "at least one of keyPath or matchLabels must be set"),
            ("!has(self.value) || has(self.keyPath)", "value requires keyPath"),
        ),
    ),
    "ComponentInstanceSelector": _Struct(
        "Which instance a pod belongs to.",
        {"idPath": _Field(f"{_ON_POD}; its output is one of the component's instance ids.", jq=True)},
    ),
    "ReplicaSelector": _Struct(
        "Which replica a pod belongs to; defined where replicas are created, inherited by descendants.",
        {"keyPath": _Field(f"{_ON_POD}; its output is the replica key.", jq=True)},
    ),
    "OptimizationInstructions": _Struct(
        "Scheduling hints.",
        {"gangScheduling": _Field("The pod groups that must be scheduled together.")},
    ),
    "GangScheduling": _Struct(
        "Gang structure, in the alpha format (podGroups) or the KAI-native one (podGroup); podGroup wins when "
        "both are set.",
        {
            "podGroups": _Field("Alpha format: independent pod groups.", list_type="map", map_keys=("name",)),
            "podGroup": _Field("KAI-native format: one pod group with optional sub-groups and topology."),
        },
    ),
    "PodGroupDefinition": _Struct(
        "An alpha pod group.",
        {
            "name": _Field("A label for the group."),
            "members": _Field("Components whose pods form the group.", list_type="map", map_keys=("componentName",)),
        },
    ),
    "PodGroupMember": _Struct(
        "A component whose pods belong to the group.",
        {
            "componentName": _Field("An existing component (a leaf or an ancestor of leaves)."),
            "groupByKeyPaths": _Field(
                f"Each a {_ON_POD} giving exactly one non-empty value; the values split the pods into groups.",
                jq=True,
                list_type="set",
            ),
            "filters": _Field(
                f"Each a {_ON_POD} that must yield true for the pod to be in the group.", jq=True, list_type="set"
            ),
        },
    ),
    "PodGroup": _Struct(
        "The KAI-native pod group.",
        {
            "name": _Field("Name of the pod group."),
            "subGroups": _Field("Sub-groups, one per component.", list_type="map", map_keys=("componentName",)),
            "topology": _Field("Topology constraint of the whole group."),
        },
    ),
    "SubGroup": _Struct(
        "A sub-group of the pod group: the pods of one component.",
        {
            "componentName": _Field("An existing component."),
            "topology": _Field("Topology constraint of the sub-group."),
        },
    ),
    "TopologyConstraint": _Struct(
        "Where in the topology the pods must (required) or should (preferred) be placed.",
        {
            "topologyName": _Field("Name of the topology resource."),
            "preferredTopologyLevel": _Field("Topology level the pods should share."),
            "requiredTopologyLevel": _Field("Topology level the pods must share."),
        },
    ),
}

_CONDITION_SCHEMA: dict[str, Any] = {
    "description": "A standard Kubernetes condition (metav1.Condition).",
    "type": "object",
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
    "properties": {
        "lastTransitionTime": {
            "description": "When the condition last changed status.",
            "type": "string",
            "format": "date-time",
        },
        "message": {"description": "Human-readable detail.", "type": "string", "maxLength": 32768},
        "observedGeneration": {
            "description": "The .metadata.generation the condition was set for.",
            "type": "integer",
            "format": "int64",
            "minimum": 0,
        },
        "reason": {
            "description": "Machine-readable CamelCase reason.",
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"description": "True, False or Unknown.", "type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {
            "description": "Condition type: KartaValidated, CRDExists, Ready.",
            "type": "string",
            "maxLength": 316,
            "pattern": (
                r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
            ),
        },
    },
}

_STATUS_SCHEMA: dict[str, Any] = {
    "description": "Set by the Karta operator.",
    "type": "object",
    "properties": {
        "conditions": {
            "description": "KartaValidated, CRDExists and Ready.",
            "type": "array",
            "items": _CONDITION_SCHEMA,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
        }
    },
}


# --- JSON Schema --------------------------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a Karta document, as shipped in `model/karta.schema.json`."""
    schema = _annotated_schema()
    _strip_k8s_markers(schema)
    return schema


def _annotated_schema() -> dict[str, Any]:
    """msgspec's schema with the table applied, Kubernetes markers (list types, CEL rules) included."""
    raw = msgspec.json.schema(Karta)
    defs: dict[str, Any] = raw["$defs"]
    for name, definition in defs.items():
        _tidy_struct(name, definition)
    karta = defs["Karta"]
    karta["properties"]["apiVersion"] = {"description": "Always run.ai/v1alpha1.", "const": API_VERSION}
    karta["properties"]["kind"] = {"description": "Always Karta.", "const": KIND}
    karta["properties"]["status"] = copy.deepcopy(_STATUS_SCHEMA)
    karta["required"] = ["apiVersion", "kind", "spec"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Karta",
        "description": _STRUCTS["Karta"].description,
        "$ref": "#/$defs/Karta",
        "$defs": defs,
    }


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def _tidy_struct(name: str, definition: dict[str, Any]) -> None:
    meta = _STRUCTS.get(name)
    definition.pop("title", None)
    if meta is None:
        return
    definition["description"] = meta.description
    properties: dict[str, Any] = definition.get("properties", {})
    for wire, prop in properties.items():
        info = meta.fields.get(wire, _Field())
        if prop.get("default", 0) is None:
            del prop["default"]
        target = _non_null(prop)
        if info.description:
            prop["description"] = info.description
        if info.default is not None:
            prop["default"] = info.default
        elif name == "GVK":
            prop.pop("default", None)
        if info.min_length is not None:
            target["minLength"] = info.min_length
        if info.min_items is not None:
            target["minItems"] = info.min_items
        if info.min_properties is not None:
            target["minProperties"] = info.min_properties
        if info.list_type == "set":
            target["uniqueItems"] = True
        if info.list_type or info.map_keys:
            target["x-kubernetes-list-type"] = info.list_type
            if info.map_keys:
                target["x-kubernetes-list-map-keys"] = list(info.map_keys)
    if meta.required is not None:
        definition["required"] = list(meta.required)
    if not definition.get("required"):
        definition.pop("required", None)
    if meta.cel:
        definition["x-kubernetes-validations"] = [{"rule": rule, "message": msg} for rule, msg in meta.cel]
    if name == "ComponentTypeSelector":
        # The two CEL rules, said in JSON Schema for editors.
        definition["anyOf"] = [{"required": ["keyPath"]}, {"required": ["matchLabels"]}]
        definition["dependentRequired"] = {"value": ["keyPath"]}


def _non_null(prop: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of `anyOf: [X, {type: null}]`, or the property itself."""
    options = prop.get("anyOf")
    if options and len(options) == 2 and {"type": "null"} in options:
        other: dict[str, Any] = next(o for o in options if o != {"type": "null"})
        return other
    return prop


def _strip_k8s_markers(node: Any) -> None:
    if isinstance(node, dict):
        for key in [k for k in node if k.startswith("x-kubernetes-")]:
            del node[key]
        for value in node.values():
            _strip_k8s_markers(value)
    elif isinstance(node, list):
        for value in node:
            _strip_k8s_markers(value)


# --- JSON Schema of an output document ----------------------------------------------------------------------

_DOCUMENT_SUFFIX = "Document"


def document_schema(root: type[msgspec.Struct], *, title: str, description: str, schema_version: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a document the library writes, from the msgspec Structs that declare it
    (`root` and every Struct it reaches), tidied to say what the encoder writes rather than what a decoder accepts:

    - a Struct that does not omit defaults writes every field: all its properties are required, none has a default;
    - in one that omits defaults (`omit_defaults=True`), a field whose default is null is left out, never written as
      null: its null branch and `default: null` go; other defaults stay (an absent list is empty);
    - `$defs` are named after the concept, without the `Document` suffix (`GangDocument` is listed as `Gang`),
      and a docstring is one line;
    - the root's `schemaVersion` is the constant `schema_version`; no titles, no empty `required`.
    """
    raw = msgspec.json.schema(root)
    structs = _structs(root)
    defs: dict[str, Any] = raw["$defs"]
    names = {name: name.removesuffix(_DOCUMENT_SUFFIX) or name for name in defs}
    if len(set(names.values())) != len(names):
        raise ValueError(f"two definitions of {root.__name__} share a name once {_DOCUMENT_SUFFIX!r} is dropped")
    tidied: dict[str, Any] = {}
    for name, definition in defs.items():
        definition.pop("title", None)
        if "description" in definition:  # a docstring: one paragraph
            definition["description"] = " ".join(definition["description"].split())
        properties: dict[str, Any] = definition.get("properties", {})
        if not structs[name].__struct_config__.omit_defaults:
            for prop in properties.values():
                prop.pop("default", None)
            definition["required"] = list(properties)
        else:
            for wire, prop in properties.items():
                if "default" in prop and prop["default"] is None:
                    del prop["default"]
                    properties[wire] = _without_null(prop)
        if not definition.get("required"):
            definition.pop("required", None)
        tidied[names[name]] = definition
    top = tidied[names[root.__name__]]
    top["properties"]["schemaVersion"] = {
        "description": "The version of this document's schema.",
        "const": schema_version,
    }
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "description": description,
        "$ref": f"#/$defs/{names[root.__name__]}",
        "$defs": tidied,
    }
    _rename_refs(schema, {f"#/$defs/{old}": f"#/$defs/{new}" for old, new in names.items()})
    return schema


def _structs(root: type[msgspec.Struct]) -> dict[str, type[msgspec.Struct]]:
    """Every Struct class the document reaches, by name."""
    found: dict[str, type[msgspec.Struct]] = {}
    stack: list[msgspec.inspect.Type] = [msgspec.inspect.type_info(root)]
    while stack:
        info = stack.pop()
        if isinstance(info, msgspec.inspect.StructType):
            if info.cls.__name__ in found:
                continue
            found[info.cls.__name__] = info.cls
            stack.extend(field.type for field in info.fields)
        elif isinstance(info, msgspec.inspect.UnionType):
            stack.extend(info.types)
        elif isinstance(info, msgspec.inspect.ListType | msgspec.inspect.VarTupleType):
            stack.append(info.item_type)
        elif isinstance(info, msgspec.inspect.TupleType):
            stack.extend(info.item_types)
        elif isinstance(info, msgspec.inspect.DictType):
            stack.append(info.value_type)
        elif isinstance(info, msgspec.inspect.Metadata):
            stack.append(info.type)
    return found


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    options = prop.get("anyOf")
    if not options or {"type": "null"} not in options:
        return prop
    rest = [option for option in options if option != {"type": "null"}]
    others = {key: value for key, value in prop.items() if key != "anyOf"}
    if len(rest) == 1:
        return {**others, **rest[0]}
    return {**others, "anyOf": rest}


def _rename_refs(node: Any, refs: dict[str, str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in refs:
            node["$ref"] = refs[ref]
        for value in node.values():
            _rename_refs(value, refs)
    elif isinstance(node, list):
        for value in node:
            _rename_refs(value, refs)


# --- CRD ----------------------------------------------------------------------------------------------------


def crd_schema() -> dict[str, Any]:
    """The structural OpenAPI v3 schema of the CRD's v1alpha1 version."""
    schema = _annotated_schema()
    defs = schema["$defs"]
    karta = copy.deepcopy(defs["Karta"])
    karta["properties"]["apiVersion"] = {
        "description": "APIVersion defines the versioned schema of this representation of an object.",
        "type": "string",
    }
    karta["properties"]["kind"] = {
        "description": "Kind is a string value representing the REST resource this object represents.",
        "type": "string",
    }
    karta["properties"]["metadata"] = {"type": "object"}
    karta["properties"]["status"] = copy.deepcopy(_STATUS_SCHEMA)
    karta["required"] = ["spec"]
    return _structural(karta, defs)


def _structural(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    node = copy.deepcopy(node)
    nullable = False
    if "$ref" in node:
        ref = node.pop("$ref")
        target = copy.deepcopy(defs[ref.rsplit("/", 1)[-1]])
        target.update({k: v for k, v in node.items() if k == "description"})
        node = target
    options = node.get("anyOf")
    if options and {"type": "null"} in options and len(options) == 2:
        inner = next(o for o in options if o != {"type": "null"})
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        node = _structural(inner, defs)
        node.update(rest)
        nullable = "default" not in rest  # null is pruned then defaulted when there is a default
    out: dict[str, Any] = {}
    for key in ("description", "type"):
        if key in node:
            out[key] = node[key]
    if nullable:
        out["nullable"] = True
    for key, value in node.items():
        if key in ("description", "type", "title", "anyOf", "dependentRequired", "uniqueItems"):
            continue
        if key == "additionalProperties":
            if isinstance(value, dict):
                out[key] = _structural(value, defs)
            continue
        if key == "properties":
            out[key] = {name: _structural(prop, defs) for name, prop in value.items()}
        elif key == "items":
            out[key] = _structural(value, defs)
        else:
            out[key] = copy.deepcopy(value)
    return out


def crd() -> dict[str, Any]:
    """The `kartas.run.ai` CustomResourceDefinition."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME, "labels": {"app.kubernetes.io/part-of": "workload-map"}},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": PLURAL,
                "singular": "karta",
                "shortNames": ["krt"],
            },
            "scope": "Cluster",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "additionalPrinterColumns": [
                        {
                            "name": "Framework",
                            "type": "string",
                            "jsonPath": ".spec.structureDefinition.rootComponent.kind.kind",
                        },
                        {
                            "name": "Root Component",
                            "type": "string",
                            "jsonPath": ".spec.structureDefinition.rootComponent.name",
                        },
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                    "schema": {"openAPIV3Schema": crd_schema()},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


_CRD_HEADER = (
    "# The Karta CRD (run.ai/v1alpha1). Generated from workload_map.model by scripts/gen_schemas.py: do not edit.\n"
)


def crd_yaml() -> str:
    body = yaml.safe_dump(crd(), sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
    return _CRD_HEADER + "---\n" + body
